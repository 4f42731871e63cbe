import type { Response } from 'express';
import { ERROR_CATALOGUE } from './catalogue.js';
import type { ApiError } from './api-error.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** Writes an ApiError as an RFC 9457 problem document. */
export function sendProblem(res: Response, error: ApiError): void {
  const body = {
    type: `/api/v1/errors/${error.code}`,
    title: ERROR_CATALOGUE[error.code].title,
    status: error.status,
    code: error.code,
    ...(error.reason ? { reason: error.reason } : {}),
    detail: error.detail,
    requestId: res.locals.requestId as string,
    ...(error.errors && error.errors.length > 0 ? { errors: error.errors } : {}),
  };
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(body));
}
