import {
  ERROR_CATALOGUE,
  isRefusalReason,
  REFUSAL_REASON_CATALOGUE,
  type ErrorCode,
  type FieldReason,
  type RefusalReason,
} from './catalogue.js';

/** One problem with one field, named by JSON pointer (`/lines/3/unitPrice`, `/query/limit`). */
export interface FieldError {
  field: string;
  /** A catalogued code: the compiler refuses one that GET /errors/{code} would not know. */
  code: ErrorCode | FieldReason;
  message: string;
}

/**
 * An error the caller can act on. Services throw it; the HTTP layer turns it into a problem document with the
 * code's catalogue status and title. Anything else thrown becomes a 500 `server_error`.
 *
 * Thrown with a refusal reason (`new ApiError('posting_under_way', ...)`), its `code` is the reason's problem code
 * (invalid_state) and `reason` the finer code: what a caller, or another channel, decides on (never the detail).
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly reason: RefusalReason | undefined;
  /** The record the refusal is about, where another channel acts on it (a posting under way: the document's). */
  subject: { type: string; id: string } | undefined;

  constructor(
    code: ErrorCode | RefusalReason,
    readonly detail: string,
    readonly errors?: FieldError[],
    readonly headers: Record<string, string> = {},
  ) {
    const problem: ErrorCode = isRefusalReason(code) ? REFUSAL_REASON_CATALOGUE[code].problem : code;
    super(`${problem}: ${detail}`);
    this.code = problem;
    this.reason = isRefusalReason(code) ? code : undefined;
    this.status = ERROR_CATALOGUE[problem].status;
  }

  /** This refusal, naming the record it is about. */
  about(subject: { type: string; id: string }): this {
    this.subject = subject;
    return this;
  }
}
