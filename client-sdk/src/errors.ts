// The two ways a call fails. ErpApiError: the API answered with an error status and (normally) a problem
// document; ErpConnectionError: no answer came back, even after the retries. Both are thrown, so a caller's
// success path never has to look at an error member.
import type { components } from './generated/api-types.js';
import { retryAfterMs } from './retry-after.js';

export type Problem = components['schemas']['Problem'];
export type FieldError = components['schemas']['FieldError'];

/** The API answered with a non-2xx status. Carries the problem document's members (RFC 9457). */
export class ErpApiError extends Error {
  override name = 'ErpApiError';
  /** The HTTP status. */
  readonly status: number;
  /** The stable error code (`invalid_field`, `rate_limited`, ...); `http_<status>` when the body was no problem document. */
  readonly code: string;
  /** One entry per field problem (`field` is a JSON pointer); empty when the error is not about fields. */
  readonly errors: FieldError[];
  /** The request id (the `X-Request-Id` header): quote it to support. Empty only when the answer carried none. */
  readonly requestId: string;
  /** Short, fixed summary of the code (the HTTP status text when the body was no problem document). */
  readonly title: string;
  /**
   * The finer, stable code of the refusal where `code` covers cases to tell apart (a 409 `invalid_state` with
   * `posting_under_way` clears by itself; with `fiscal_submitted` or `held_by_accounting` it never will); undefined
   * when the problem document carries none. Decide on `code` and `reason`, never on `detail`.
   */
  readonly reason: string | undefined;
  /** What went wrong with this request and what to do about it. */
  readonly detail: string;
  /** Path of the code's description (`/api/v1/errors/{code}`); `about:blank` when the body was no problem document (RFC 9457). */
  readonly type: string;
  /** The `Retry-After` of the last answer, in seconds, when it had one (429, 409 `idempotency_in_progress`). */
  readonly retryAfterSeconds: number | undefined;
  /** The parsed body as received (a problem document, or text when it was not JSON). */
  readonly body: unknown;
  readonly response: Response;

  constructor(response: Response, body: unknown) {
    const problem = isRecord(body) ? body : {};
    const code = stringMember(problem, 'code') ?? `http_${response.status}`;
    const detail = stringMember(problem, 'detail') ?? (typeof body === 'string' ? body.slice(0, 500) : '');
    const requestId = response.headers.get('X-Request-Id') ?? stringMember(problem, 'requestId') ?? '';
    super(`${response.status} ${code}${detail ? `: ${detail}` : ''}${requestId ? ` (request ${requestId})` : ''}`);
    this.status = response.status;
    this.code = code;
    this.errors = Array.isArray(problem.errors) ? (problem.errors as FieldError[]) : [];
    this.requestId = requestId;
    this.title = stringMember(problem, 'title') ?? (response.statusText || `HTTP ${response.status}`);
    this.reason = stringMember(problem, 'reason');
    this.detail = detail;
    this.type = stringMember(problem, 'type') ?? 'about:blank';
    const retryAfter = retryAfterMs(response.headers);
    this.retryAfterSeconds = retryAfter === undefined ? undefined : Math.ceil(retryAfter / 1000);
    this.body = body;
    this.response = response;
  }
}

/** No answer: the connection failed or an attempt timed out, on every attempt allowed. */
export class ErpConnectionError extends Error {
  override name = 'ErpConnectionError';
  /** How many attempts were made (1 + retries). */
  readonly attempts: number;
  /** The failure of the last attempt (a fetch TypeError, or a TimeoutError DOMException). */
  override readonly cause: unknown;

  constructor(attempts: number, cause: unknown) {
    super(`No answer from the API after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${describe(cause)}`);
    this.attempts = attempts;
    this.cause = cause;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringMember(record: Record<string, unknown>, name: string): string | undefined {
  const value = record[name];
  return typeof value === 'string' ? value : undefined;
}

function describe(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  // fetch reports "fetch failed" and keeps the useful part (ECONNREFUSED, socket closed) in its own cause.
  const inner = cause.cause instanceof Error ? `: ${cause.cause.message}` : '';
  return `${cause.message}${inner}`;
}
