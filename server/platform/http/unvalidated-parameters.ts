// The query string and headers of an operation whose request the validator skips (the DMS push and file upload:
// their bodies are checked by their module, one document at a time). Skipping the body must not skip the rest of
// the contract: an undeclared query parameter is 400 unknown_field, a missing Idempotency-Key 400
// idempotency_key_required, a header outside its schema 400 invalid_field, exactly as on every other operation.
import type { RequestHandler } from 'express';
import { ApiError, type FieldError } from '../errors/api-error.js';
import { operationOf } from './known-operation.js';
import { validatorSkips } from './openapi-validator.js';

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: { minLength?: number; maxLength?: number };
}

export const unvalidatedParameters: RequestHandler = (req, res, next) => {
  const operation = operationOf(res);
  if (!operation || !validatorSkips(req.path)) {
    next();
    return;
  }
  const parameters = operation.parameters as unknown as Parameter[];
  const errors: FieldError[] = [];
  const declaredQuery = new Set(parameters.filter((p) => p.in === 'query').map((p) => p.name));
  for (const name of new Set(new URLSearchParams(req.originalUrl.split('?')[1] ?? '').keys())) {
    if (!declaredQuery.has(name)) {
      errors.push({
        field: `/query/${name}`,
        code: 'unknown_field',
        message:
          declaredQuery.size > 0
            ? `is not a field here; the fields here are ${[...declaredQuery].join(', ')}`
            : 'is not a field here; this operation takes no query parameter',
      });
    }
  }
  for (const parameter of parameters.filter((p) => p.in === 'header')) {
    const value = req.header(parameter.name);
    const field = `/header/${parameter.name}`;
    if (value === undefined) {
      if (parameter.required)
        errors.push(
          parameter.name === 'Idempotency-Key'
            ? { field, code: 'idempotency_key_required', message: 'required on this create' }
            : { field, code: 'required_field', message: 'is required' },
        );
      continue;
    }
    const { minLength = 0, maxLength = Infinity } = parameter.schema ?? {};
    if (value.length < minLength || value.length > maxLength)
      errors.push({ field, code: 'invalid_field', message: `must be ${minLength} to ${maxLength} characters` });
  }
  if (errors.length === 0) {
    next();
    return;
  }
  const first = (code: string) =>
    errors
      .filter((e) => e.code === code)
      .map((e) => `\`${e.field}\``)
      .join(', ');
  if (errors.some((e) => e.code === 'idempotency_key_required')) {
    next(
      new ApiError(
        'idempotency_key_required',
        'This create needs an Idempotency-Key header (1 to 255 characters): make one per operation and reuse it on every retry.',
        errors,
      ),
    );
  } else if (errors.some((e) => e.code === 'unknown_field')) {
    next(
      new ApiError(
        'unknown_field',
        `The request has fields this operation does not accept: ${first('unknown_field')}.`,
        errors,
      ),
    );
  } else {
    next(
      new ApiError(
        errors[0]!.code as 'required_field' | 'invalid_field',
        `Some fields are invalid: ${first(errors[0]!.code)}.`,
        errors,
      ),
    );
  }
};
