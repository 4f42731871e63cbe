// The organisation's API log: every call made with a key (time, key prefix, method, path, status, duration,
// request id, Idempotency-Key; for sandbox keys also the bodies, cut to 16 KB, without the fields the spec marks
// `x-personal`, found where the operation's request and response schemas put them (personal-fields.ts).
// Entries are buffered and written in batches, so logging adds no database round trip to a request; a graceful
// stop flushes what is buffered.
import type { RequestHandler, Response } from 'express';
import { sql } from 'kysely';
import type { Db } from '../database/transaction.js';
import type { Logger } from 'pino';
import { KEY_LIKE } from '../access/api-key-secret.js';
import type { CallerContext } from '../access/context.js';
import type { Environment } from '../config.js';
import { newId } from '../ids.js';
import { personalFieldsOf, type Redaction } from '../personal-fields.js';
import { apiDocument, type ApiDocument } from '../spec.js';
import { operationOf } from './known-operation.js';

export const LOG_BODY_LIMIT_BYTES = 16 * 1024;
const KEY_LIKE_GLOBAL = new RegExp(KEY_LIKE.source, 'g');

export interface ApiLogEntry {
  organizationId: string;
  id: string;
  time: string;
  keyPrefix: string;
  method: string;
  path: string;
  status: number;
  durationMs: number;
  requestId: string;
  idempotencyKey: string | null;
  requestBody: string | null;
  responseBody: string | null;
}

export class ApiLogWriter {
  private buffer: ApiLogEntry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly flushIntervalMs = 500,
    private readonly maxBatch = 500,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.flushIntervalMs);
    this.timer.unref();
  }

  add(entry: ApiLogEntry): void {
    this.buffer.push(entry);
    if (this.buffer.length >= this.maxBatch) void this.flush();
  }

  /** Writes everything buffered so far (one statement per batch). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      while (this.buffer.length > 0) {
        const batch = this.buffer.splice(0, this.maxBatch);
        try {
          // The whole batch as one JSON parameter read by jsonb_to_recordset (one statement of at most 500 rows, the
          // fastest set-based insert measured here); the builder has no typed form for a recordset source.
          await sql`
            INSERT INTO api_log (organization_id, id, time, key_prefix, method, path, status, duration_ms, request_id, idempotency_key, request_body, response_body)
            SELECT "organizationId", id, time, "keyPrefix", method, path, status, "durationMs", "requestId", "idempotencyKey", "requestBody", "responseBody"
              FROM jsonb_to_recordset(${JSON.stringify(batch)}::jsonb) AS x("organizationId" text, id text, time timestamptz, "keyPrefix" text, method text, path text,
                   status int, "durationMs" float8, "requestId" text, "idempotencyKey" text, "requestBody" text, "responseBody" text)`.execute(
            this.db,
          );
        } catch (error) {
          this.logger.error({ err: error, entries: batch.length }, 'API log entries could not be written');
        }
      }
    });
    return this.flushing;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }
}

export function apiLogMiddleware(
  writer: ApiLogWriter,
  environment: Environment,
  document: ApiDocument = apiDocument,
): RequestHandler {
  const keepBodies = environment === 'sandbox';
  const personal = personalFieldsOf(document);
  return (req, res, next) => {
    // An operation without a key never has a caller (authenticate leaves it alone): nothing of it is logged.
    if (operationOf(res)?.scopes === null) {
      next();
      return;
    }
    const started = process.hrtime.bigint();
    if (keepBodies) captureResponseBody(res);
    res.once('finish', () => {
      const caller = res.locals.caller as CallerContext | undefined;
      if (!caller) return; // calls without a valid key belong to no organisation's log
      // Every call with a caller passed knownOperation, so its operation says where personal fields are.
      const operation = operationOf(res);
      writer.add({
        organizationId: caller.organizationId,
        id: newId('log'),
        time: new Date().toISOString(),
        keyPrefix: caller.keyPrefix,
        method: req.method,
        path: req.originalUrl,
        status: res.statusCode,
        durationMs: Number(process.hrtime.bigint() - started) / 1e6,
        requestId: res.locals.requestId as string,
        idempotencyKey: req.header('idempotency-key') ?? null,
        requestBody:
          keepBodies && req.body !== undefined && operation
            ? loggableBody(req.body, personal.request(operation))
            : null,
        responseBody:
          keepBodies && typeof res.locals.responseBody === 'string' && operation
            ? loggableBody(parseOrText(res.locals.responseBody), personal.response(operation, res.statusCode))
            : null,
      });
    });
    next();
  };
}

function captureResponseBody(res: Response): void {
  const send = res.send.bind(res);
  res.send = (body?: unknown) => {
    if (typeof body === 'string') res.locals.responseBody = body;
    else if (Buffer.isBuffer(body)) res.locals.responseBody = body.toString();
    return send(body);
  };
}

/**
 * JSON without the personal fields `redaction` finds and anything shaped like an API key, cut to 16 KB. A body that
 * is not JSON (text the parser could not read) is kept only when the operation's schema has no personal field.
 */
export function loggableBody(body: unknown, redaction: Redaction): string {
  const text = (
    typeof body === 'string'
      ? redaction.dropsAnything
        ? '[not JSON; not kept: the operation carries personal fields]'
        : body
      : JSON.stringify(redaction.apply(body))
  ).replace(KEY_LIKE_GLOBAL, '[redacted]');
  const bytes = Buffer.from(text);
  return bytes.length <= LOG_BODY_LIMIT_BYTES ? text : bytes.subarray(0, LOG_BODY_LIMIT_BYTES).toString();
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
