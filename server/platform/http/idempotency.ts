// Idempotent writes. The stored result is written in the same transaction as the record, so a request either
// committed both (a retry replays the result) or neither (a retry runs again): a 500 is always safe to retry.
// A transaction-scoped advisory lock on (key, Idempotency-Key) answers a concurrent duplicate with 409 at once
// instead of making it wait on the first request's row lock.
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import type pg from 'pg';
import type { CallerContext } from '../access/context.js';
import { canonicalJson } from '../canonical-json.js';
import { inTransaction, type Tx } from '../database/transaction.js';
import { ApiError } from '../errors/api-error.js';

export const IDEMPOTENCY_RETENTION_HOURS = 24;

export interface WriteResult {
  status: number;
  body: unknown;
}

interface StoredResult {
  method: string;
  path: string;
  request_hash: string;
  response_status: number;
  response_body: string;
}

/**
 * Runs `work` in one transaction and answers with its result. With an Idempotency-Key header the result is
 * stored with the record and replayed byte for byte to a retry with the same key and body.
 */
export async function respondIdempotently(
  pool: pg.Pool,
  caller: CallerContext,
  req: Request,
  res: Response,
  work: (tx: Tx) => Promise<WriteResult>,
): Promise<void> {
  const key = req.header('idempotency-key');
  if (key === undefined) {
    const result = await inTransaction(pool, work);
    send(res, result.status, JSON.stringify(result.body), false);
    return;
  }
  const path = req.originalUrl.split('?')[0]!;
  const requestHash = createHash('sha256').update(canonicalJson(req.body)).digest('hex');

  const outcome = await inTransaction(pool, async (tx) => {
    const { rows: locked } = await tx.query<{ locked: boolean }>(
      'SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked',
      [`${caller.organizationId}:${caller.apiKeyId}:${key}`],
    );
    if (!locked[0]!.locked) {
      throw new ApiError('idempotency_in_progress', 'A request with this Idempotency-Key is still being processed. Retry after 1 second with the same key.', undefined, { 'Retry-After': '1' });
    }
    // A separate statement, so that its snapshot is taken after the lock: a result committed by the request
    // that held the lock until a moment ago is seen (one combined statement would have missed it).
    const { rows } = await tx.query<StoredResult>(
      `SELECT method, path, request_hash, response_status, response_body FROM idempotency_keys
        WHERE organization_id = $1 AND api_key_id = $2 AND key = $3 AND created_at > now() - make_interval(hours => $4)`,
      [caller.organizationId, caller.apiKeyId, key, IDEMPOTENCY_RETENTION_HOURS],
    );
    const stored = rows[0];
    if (stored) {
      if (stored.method !== req.method || stored.path !== path || stored.request_hash !== requestHash) {
        throw new ApiError('idempotency_key_reused', `This Idempotency-Key was used with ${stored.method === req.method && stored.path === path ? 'another body' : `${stored.method} ${stored.path}`}. Use a new key for a new operation.`);
      }
      return { status: stored.response_status, text: stored.response_body, replayed: true };
    }
    const result = await work(tx);
    const text = JSON.stringify(result.body);
    await tx.query(
      `INSERT INTO idempotency_keys (organization_id, api_key_id, key, method, path, request_hash, response_status, response_body, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now())
       ON CONFLICT (organization_id, api_key_id, key) DO UPDATE
         SET method = EXCLUDED.method, path = EXCLUDED.path, request_hash = EXCLUDED.request_hash,
             response_status = EXCLUDED.response_status, response_body = EXCLUDED.response_body, created_at = EXCLUDED.created_at`,
      [caller.organizationId, caller.apiKeyId, key, req.method, path, requestHash, result.status, text],
    );
    return { status: result.status, text, replayed: false };
  });
  send(res, outcome.status, outcome.text, outcome.replayed);
}

function send(res: Response, status: number, text: string, replayed: boolean): void {
  if (replayed) res.setHeader('Idempotent-Replayed', 'true');
  res.status(status).type('application/json').send(text);
}

/** Deletes stored results older than the retention; run by a pg-boss cron job. */
export async function purgeExpiredIdempotencyKeys(pool: pg.Pool): Promise<number> {
  const { rowCount } = await pool.query('DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => $1)', [IDEMPOTENCY_RETENTION_HOURS]);
  return rowCount ?? 0;
}
