import { ERROR_CATALOGUE, type ErrorCode } from './catalogue.js';

/** One problem with one field, named by JSON pointer (`/lines/3/unitPrice`, `/query/limit`). */
export interface FieldError {
  field: string;
  code: string;
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
