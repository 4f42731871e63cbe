// An operation whose spec marks the body required gets one. The JSON parser leaves `req.body` undefined when
// no bytes came (see json-body.ts), and express-openapi-validator 5.6 reads "required" from the body schema's
// own `required` list rather than from `requestBody.required`, so without this check an empty PUT by code would
// run as `{}`. Runs after the validator.
import type { RequestHandler } from 'express';
import { ApiError } from '../errors/api-error.js';
import { operationOf } from './known-operation.js';

export const requiredBody: RequestHandler = (req, res, next) => {
  if (req.body === undefined && operationOf(res)?.requiresBody) {
    next(
      new ApiError(
        'required_field',
        'This operation needs a JSON body and the request has none (an empty body is not {}).',
        [{ field: '', code: 'required_field', message: 'a JSON body is required' }],
      ),
    );
    return;
  }
  next();
};
