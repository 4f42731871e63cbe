// A request for a path or method the spec does not have is 404 not_found before anything else reads it: its body is
// never parsed, so a wrong method that carries a body gets the same 404 as one without (not a 400, 413 or 415 that
// the spec could not declare for an operation that does not exist). Likewise a body sent to an operation that takes
// none (a GET) is refused unread, 400 unknown_field: it cannot mean what the caller hopes (filters go in the query),
// and reading it could only end in a 413 or 415 such an operation does not declare. The operation found is kept in
// `res.locals.operation` for the checks after the validator (required body, strict parameters).
import type { RequestHandler, Response } from 'express';
import { ApiError } from '../errors/api-error.js';
import type { Operation, OperationIndex } from '../operations.js';
import { API_BASE_PATH } from '../spec.js';

export function knownOperation(operations: OperationIndex): RequestHandler {
  return (req, res, next) => {
    const path = req.path;
    if (path !== API_BASE_PATH && !path.startsWith(`${API_BASE_PATH}/`)) {
      next();
      return;
    }
    const operation = operations.find(req.method === 'HEAD' ? 'GET' : req.method, path.slice(API_BASE_PATH.length));
    if (!operation) {
      next(
        new ApiError(
          'not_found',
          `${req.method} ${path} is not an operation of this API. See GET /api/v1/openapi.json.`,
        ),
      );
      return;
    }
    const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
    if (hasBody && !operation.takesBody) {
      next(
        new ApiError(
          'unknown_field',
          `${req.method} ${path} takes no body, and this request has one; send parameters in the query string.`,
          [{ field: '', code: 'unknown_field', message: 'this operation takes no body' }],
        ),
      );
      return;
    }
    res.locals.operation = operation;
    next();
  };
}

/** The operation `knownOperation` found for this request (every request inside /api/v1 has one). */
export function operationOf(res: Response): Operation | undefined {
  return res.locals.operation as Operation | undefined;
}
