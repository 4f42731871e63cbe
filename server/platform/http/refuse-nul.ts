import type { RequestHandler } from 'express';
import { ApiError } from '../errors/api-error.js';

/**
 * PostgreSQL text cannot hold U+0000; a string carrying one would fail deep in a statement as a 500. Refused
 * here, after validation, as 400 invalid_field naming the first such field.
 */
export const refuseNulCharacters: RequestHandler = (req, _res, next) => {
  // Path parameters as the validator matched them (express fills req.params only inside each route).
  const pathParams = (req as { openapi?: { pathParams?: Record<string, string> } }).openapi?.pathParams;
  const field = firstNul(req.body, '') ?? firstNul(req.query, '/query') ?? firstNul(pathParams, '/path');
  if (field !== null) {
    next(new ApiError('invalid_field', `${field || 'The body'} contains the character U+0000, which is not accepted in any text.`, [
      { field, code: 'invalid_field', message: 'must not contain U+0000' },
    ]));
    return;
  }
  next();
};

function firstNul(value: unknown, pointer: string): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? pointer : null;
  if (value === null || typeof value !== 'object') return null;
  for (const [key, item] of Object.entries(value)) {
    if (key.includes('\u0000')) return `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    const found = firstNul(item, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
    if (found !== null) return found;
  }
  return null;
}
