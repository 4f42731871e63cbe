import type { RequestHandler } from 'express';
import { ApiError } from '../errors/api-error.js';

/** Any path no route answered: the same 404 problem as an unknown path inside the API. */
export const notFound: RequestHandler = (req, _res, next) => {
  next(
    new ApiError(
      'not_found',
      `${req.method} ${req.path} is not an operation of this API. See GET /api/v1/openapi.json.`,
    ),
  );
};
