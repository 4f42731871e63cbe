import type { RequestHandler } from 'express';
import { newUlid } from '../ids.js';

const CALLER_REQUEST_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Every response carries X-Request-Id: the caller's own when it is 1 to 64 letters, digits, `_` or `-`
 * (so a partner can trace its own ids through our logs), otherwise a new ULID. An invalid caller id is
 * replaced, not refused: tracing must never make a request fail.
 */
export const requestId: RequestHandler = (req, res, next) => {
  const supplied = req.headers['x-request-id'];
  const id = typeof supplied === 'string' && CALLER_REQUEST_ID.test(supplied) ? supplied : newUlid();
  res.locals.requestId = id;
  res.setHeader('X-Request-Id', id);
  next();
};
