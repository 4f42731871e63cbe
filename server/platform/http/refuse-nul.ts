import type { RequestHandler } from 'express';
import { ApiError } from '../errors/api-error.js';
import { firstStringMatching } from './first-string.js';

// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is the very character this guard looks for.
const NUL = /\u0000/;

/**
 * PostgreSQL text cannot hold U+0000; a string carrying one would fail deep in a statement as a 500. Refused
 * here, after validation, as 400 invalid_field naming the first such field.
 */
export const refuseNulCharacters: RequestHandler = (req, _res, next) => {
  // Path parameters as the validator matched them (express fills req.params only inside each route).
  const pathParams = (req as { openapi?: { pathParams?: Record<string, string> } }).openapi?.pathParams;
  // No body, no query string, no path parameter: nothing to look in (express parses req.query anew on each read).
  if (req.body === undefined && !req.originalUrl.includes('?') && pathParams === undefined) {
    next();
    return;
  }
  const field =
    firstStringMatching(req.body, '', NUL) ??
    firstStringMatching(req.query, '/query', NUL) ??
    firstStringMatching(pathParams, '/path', NUL);
  if (field !== null) {
    next(
      new ApiError(
        'invalid_field',
        `${field || 'The body'} contains the character U+0000, which is not accepted in any text.`,
        [{ field, code: 'invalid_field', message: 'must not contain U+0000' }],
      ),
    );
    return;
  }
  next();
};
