import { ERROR_CATALOGUE, type ErrorCode, type FieldReason } from './catalogue.js';

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
 */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly errors?: FieldError[],
    readonly headers: Record<string, string> = {},
  ) {
    super(`${code}: ${detail}`);
    this.status = ERROR_CATALOGUE[code].status;
  }
}
