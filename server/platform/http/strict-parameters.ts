// Query and path parameters are as strict as bodies. The validator coerces parameters with Ajv's rules, which
// read `limit=" 5"`, `"0x10"` and `"1e2"` as 5, 16 and 100, and the routes then read the raw string again with
// Number(). Here, after the validator, every parameter the spec types as integer, number or boolean must be
// written the one plain way: decimal digits (an optional minus, a fraction only for numbers), or true/false.
import type { RequestHandler } from 'express';
import { ApiError, type FieldError } from '../errors/api-error.js';
import type { ScalarParameterType } from '../operations.js';
import { operationOf } from './known-operation.js';

const SYNTAX: Record<ScalarParameterType, { pattern: RegExp; says: string }> = {
  integer: {
    pattern: /^-?(0|[1-9][0-9]*)$/,
    says: 'must be an integer written in decimal digits (no spaces, signs other than -, exponents or hex)',
  },
  number: {
    pattern: /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/,
    says: 'must be a number written in decimal digits (no spaces, exponents or hex)',
  },
  boolean: { pattern: /^(true|false)$/, says: 'must be true or false' },
};

export const strictParameters: RequestHandler = (req, res, next) => {
  const parameters = operationOf(res)?.typedParameters ?? [];
  if (parameters.length === 0) {
    next();
    return;
  }
  const pathParams = (req as { openapi?: { pathParams?: Record<string, string> } }).openapi?.pathParams;
  const query = new URLSearchParams(req.originalUrl.split('?')[1] ?? '');
  const errors: FieldError[] = [];
  for (const parameter of parameters) {
    const values = parameter.in === 'query' ? query.getAll(parameter.name) : [pathParams?.[parameter.name]];
    for (const value of values) {
      if (value === undefined || SYNTAX[parameter.type].pattern.test(value)) continue;
      errors.push({
        field: `/${parameter.in}/${parameter.name}`,
        code: 'invalid_field',
        message: SYNTAX[parameter.type].says,
      });
    }
  }
  if (errors.length > 0) {
    next(
      new ApiError(
        'invalid_field',
        `Some fields are invalid: ${[...new Set(errors.map((e) => e.field))].join(', ')}.`,
        errors,
      ),
    );
    return;
  }
  next();
};
