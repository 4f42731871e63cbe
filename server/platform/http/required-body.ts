// An operation whose spec marks the body required gets one. The JSON parser leaves `req.body` undefined when
// no bytes came (see json-body.ts), and express-openapi-validator 5.6 reads "required" from the body schema's
// own `required` list rather than from `requestBody.required`, so without this check an empty PUT by code would
// run as `{}`. Runs after the validator, which has matched the operation.
import type { RequestHandler } from 'express';
import { ApiError } from '../errors/api-error.js';
import { API_BASE_PATH, type ApiDocument } from '../spec.js';

export function requiredBody(document: ApiDocument): RequestHandler {
  const required = new Set<string>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      let body = (operation as { requestBody?: { required?: boolean; $ref?: string } } | null)?.requestBody;
      if (body?.$ref) body = body.$ref.slice(2).split('/').reduce<any>((at, key) => at?.[key], document);
      if (body?.required === true) required.add(`${method.toUpperCase()} ${API_BASE_PATH}${path}`);
    }
  }
  return (req, _res, next) => {
    const route = (req as { openapi?: { openApiRoute?: string } }).openapi?.openApiRoute;
    if (req.body === undefined && required.has(`${req.method} ${route}`)) {
      next(new ApiError('required_field', 'This operation needs a JSON body and the request has none (an empty body is not {}).', [
        { field: '', code: 'required_field', message: 'a JSON body is required' },
      ]));
      return;
    }
    next();
  };
}
