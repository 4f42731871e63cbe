// Reads an organisation's API log (written by api-log.ts), newest first. Nothing secret leaves here: the table
// holds no key and no Authorization header, and anything shaped like an API key in a path or body is masked.
import type { Db } from '../database/transaction.js';
import { KEY_LIKE } from '../access/api-key-secret.js';
import type { ApiLogEntry } from './api-log.js';

export const API_LOG_DEFAULT_LIMIT = 50;
export const API_LOG_MAX_LIMIT = 1000;

/** An entry as written (see api-log.ts), without its organisation; bodies only with `includeBodies`. */
export type ApiLogRecord = Omit<ApiLogEntry, 'organizationId' | 'requestBody' | 'responseBody'> &
  Partial<Pick<ApiLogEntry, 'requestBody' | 'responseBody'>>;

export interface ApiLogQuery {
  status?: number;
  requestId?: string;
  /** 1 to 1000; 50 when absent. */
  limit?: number;
  includeBodies?: boolean;
}

export async function readApiLog(db: Db, organizationId: string, query: ApiLogQuery = {}): Promise<ApiLogRecord[]> {
  const limit = query.limit ?? API_LOG_DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > API_LOG_MAX_LIMIT)
    throw new RangeError(`limit must be an integer from 1 to ${API_LOG_MAX_LIMIT}, not ${limit}`);
  if (query.status !== undefined && !(Number.isInteger(query.status) && query.status >= 100 && query.status <= 599)) {
    throw new RangeError(`status must be an HTTP status from 100 to 599, not ${query.status}`);
  }
  const bodies = query.includeBodies === true;
  let select = db
    .selectFrom('api_log')
    .select([
      'id',
      'time',
      'key_prefix',
      'method',
      'path',
      'status',
      'duration_ms',
      'request_id',
      'idempotency_key',
      'request_body',
      'response_body',
    ])
    .where('organization_id', '=', organizationId);
  if (query.status !== undefined) select = select.where('status', '=', query.status);
  if (query.requestId !== undefined) select = select.where('request_id', '=', query.requestId);
  const rows = await select.orderBy('time', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map((row) => ({
    id: row.id,
    time: row.time.toISOString(),
    keyPrefix: row.key_prefix,
    method: row.method,
    path: masked(row.path)!,
    status: row.status,
    durationMs: row.duration_ms,
    requestId: row.request_id,
    idempotencyKey: row.idempotency_key,
    ...(bodies ? { requestBody: masked(row.request_body), responseBody: masked(row.response_body) } : {}),
  }));
}

const KEY_LIKE_EVERYWHERE = new RegExp(KEY_LIKE.source, 'g');

function masked(text: string | null): string | null {
  return text === null ? null : text.replace(KEY_LIKE_EVERYWHERE, '[redacted]');
}
