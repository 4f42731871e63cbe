// Idempotent writes. The stored result is written in the same transaction as the record, so a request either
// committed both (a retry replays the result) or neither (a retry runs again): a 500 is always safe to retry.
// A transaction-scoped advisory lock on (key, Idempotency-Key) answers a concurrent duplicate with 409 at once
// instead of making it wait on the first request's row lock.
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { sql } from 'kysely';
import type { CallerContext } from '../access/context.js';
import { canonicalJson } from '../canonical-json.js';
import { inTransaction, type Db, type Tx } from '../database/transaction.js';
import { ApiError } from '../errors/api-error.js';
import { PII_SCOPE } from '../access/scopes.js';
import { personalFieldsOf } from '../personal-fields.js';
import { apiDocument } from '../spec.js';
import { operationOf } from './known-operation.js';

export const IDEMPOTENCY_RETENTION_HOURS = 24;

/** A result stored under an Idempotency-Key (all null when there is none). */
interface StoredResult {
  method: string | null;
  path: string | null;
  request_hash: string | null;
  response_status: number | null;
  response_body: string | null;
}

export interface WriteResult {
  status: number;
  body: unknown;
}

/**
 * Runs `work` in one transaction and answers with its result. With an Idempotency-Key header the result is
 * stored with the record and replayed byte for byte to a retry with the same key and body.
 */
export async function respondIdempotently(
  db: Db,
  caller: CallerContext,
  req: Request,
  res: Response,
  work: (tx: Tx) => Promise<WriteResult>,
): Promise<void> {
  const key = req.header('idempotency-key');
  if (key === undefined) {
    const result = await inTransaction(db, work);
    send(res, result.status, JSON.stringify(result.body), false);
    return;
  }
  const path = req.originalUrl.split('?')[0]!;
  const requestHash = createHash('sha256').update(canonicalJson(req.body)).digest('hex');

  const outcome = await inTransaction(db, async (tx) => {
    // One round trip for the advisory lock and the read of a stored result: claim_idempotency_key (migration
    // 20261124095831_idempotency_claim) takes the lock and then reads in a statement of its own, whose snapshot is
    // taken after the lock, so a result committed by the request that held the lock until a moment ago is seen (a
    // plain SELECT of the lock and the row together would have missed it). A set-returning SQL function in FROM
    // has no builder form in Kysely; every value is a bound parameter.
    const {
      rows: [claim],
    } = await sql<
      StoredResult & { locked: boolean }
    >`SELECT * FROM claim_idempotency_key(${caller.organizationId}, ${caller.apiKeyId}, ${key}, ${IDEMPOTENCY_RETENTION_HOURS})`.execute(
      tx,
    );
    if (!claim!.locked) {
      throw new ApiError(
        'idempotency_in_progress',
        'A request with this Idempotency-Key is still being processed. Retry after 1 second with the same key.',
        undefined,
        { 'Retry-After': '1' },
      );
    }
    const stored = claim!.method === null ? undefined : (claim as StoredResult & { method: string });
    if (stored) {
      if (stored.method !== req.method || stored.path !== path || stored.request_hash !== requestHash) {
        throw new ApiError(
          'idempotency_key_reused',
          `This Idempotency-Key was used with ${stored.method === req.method && stored.path === path ? 'another body' : `${stored.method} ${stored.path}`}. Use a new key for a new operation.`,
        );
      }
      return {
        status: stored.response_status!,
        text: replayedText(caller, res, stored.response_status!, stored.response_body!),
        replayed: true,
      };
    }
    const result = await work(tx);
    const text = JSON.stringify(result.body);
    await tx
      .insertInto('idempotency_keys')
      .values((eb) => ({
        organization_id: caller.organizationId,
        api_key_id: caller.apiKeyId,
        key,
        method: req.method,
        path,
        request_hash: requestHash,
        response_status: result.status,
        response_body: text,
        created_at: eb.fn('now'),
      }))
      // An expired result of the same key (not yet purged) is replaced.
      .onConflict((conflict) =>
        conflict.columns(['organization_id', 'api_key_id', 'key']).doUpdateSet((eb) => ({
          method: eb.ref('excluded.method'),
          path: eb.ref('excluded.path'),
          request_hash: eb.ref('excluded.request_hash'),
          response_status: eb.ref('excluded.response_status'),
          response_body: eb.ref('excluded.response_body'),
          created_at: eb.ref('excluded.created_at'),
        })),
      )
      .execute();
    return { status: result.status, text, replayed: false };
  });
  send(res, outcome.status, outcome.text, outcome.replayed);
}

/**
 * The stored result as a replay shows it to this caller: byte for byte while the key holds customers:pii, and
 * without the spec's `x-personal` fields once it does not (the key's scopes may have been narrowed since the
 * result was stored with them).
 */
function replayedText(caller: CallerContext, res: Response, status: number, text: string): string {
  const operation = operationOf(res);
  if (caller.actor.scopes.has(PII_SCOPE) || !operation) return text;
  const redaction = personalFieldsOf(apiDocument).response(operation, status);
  return redaction.dropsAnything ? JSON.stringify(redaction.apply(JSON.parse(text))) : text;
}

function send(res: Response, status: number, text: string, replayed: boolean): void {
  if (replayed) res.setHeader('Idempotent-Replayed', 'true');
  res.status(status).type('application/json').send(text);
}

/** Deletes stored results older than the retention; run by a pg-boss cron job. */
export async function purgeExpiredIdempotencyKeys(db: Db): Promise<number> {
  const { numDeletedRows } = await db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<', retentionStart())
    .executeTakeFirst();
  return Number(numDeletedRows);
}

/** The oldest creation time of a result still replayed: the database's clock, as every process shares it. */
function retentionStart() {
  return sql<Date>`now() - make_interval(hours => ${IDEMPOTENCY_RETENTION_HOURS})`;
}
