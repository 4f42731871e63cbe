// Query and path parameters are as strict as bodies. The validator coerces parameters with Ajv's rules, which
// read `limit=" 5"`, `"0x10"` and `"1e2"` as 5, 16 and 100, and the routes then read the raw string again with
// Number(). Here, after the validator, every parameter the spec types as integer, number or boolean must be
// written the one plain way: decimal digits (an optional minus, a fraction only for numbers), or true/false.
import type { RequestHandler } from 'express';
import { ApiError, type FieldError } from '../errors/api-error.js';
import { API_BASE_PATH, type ApiDocument } from '../spec.js';

type ScalarType = 'integer' | 'number' | 'boolean';

const SYNTAX: Record<ScalarType, { pattern: RegExp; says: string }> = {
  integer: { pattern: /^-?(0|[1-9][0-9]*)$/, says: 'must be an integer written in decimal digits (no spaces, signs other than -, exponents or hex)' },
  number: { pattern: /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/, says: 'must be a number written in decimal digits (no spaces, exponents or hex)' },
  boolean: { pattern: /^(true|false)$/, says: 'must be true or false' },
};

interface TypedParameter { name: string; in: 'query' | 'path'; type: ScalarType }

export function strictParameters(document: ApiDocument): RequestHandler {
  const byOperation = typedParametersByOperation(document);
  return (req, _res, next) => {
    const openapi = (req as { openapi?: { openApiRoute?: string; pathParams?: Record<string, string> } }).openapi;
    const route = openapi?.openApiRoute?.startsWith(API_BASE_PATH) ? openapi.openApiRoute.slice(API_BASE_PATH.length) : openapi?.openApiRoute;
    const parameters = byOperation.get(`${req.method.toLowerCase()} ${route}`);
    if (!parameters) { next(); return; }
    const query = new URLSearchParams(req.originalUrl.split('?')[1] ?? '');
    const errors: FieldError[] = [];
    for (const parameter of parameters) {
      const values = parameter.in === 'query' ? query.getAll(parameter.name) : [openapi?.pathParams?.[parameter.name]];
      for (const value of values) {
        if (value === undefined || SYNTAX[parameter.type].pattern.test(value)) continue;
        errors.push({ field: `/${parameter.in}/${parameter.name}`, code: 'invalid_field', message: SYNTAX[parameter.type].says });
      }
    }
    if (errors.length > 0) {
      next(new ApiError('invalid_field', `Some fields are invalid: ${[...new Set(errors.map((e) => e.field))].join(', ')}.`, errors));
      return;
    }
    next();
  };
}

/** `get /customers` -> its integer, number and boolean parameters, with `$ref`s to components resolved. */
function typedParametersByOperation(document: ApiDocument): Map<string, TypedParameter[]> {
  const resolve = (value: unknown): Record<string, unknown> => {
    let node = value as Record<string, unknown>;
    while (node && typeof node.$ref === 'string') {
      node = (node.$ref as string).slice(2).split('/').reduce<any>((at, key) => at?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], document);
    }
    return node ?? {};
  };
  const map = new Map<string, TypedParameter[]>();
  for (const [path, item] of Object.entries(document.paths)) {
    const shared = (item.parameters as unknown[] | undefined) ?? [];
    for (const [method, operation] of Object.entries(item)) {
      if (method === 'parameters' || typeof operation !== 'object' || operation === null) continue;
      const typed: TypedParameter[] = [];
      for (const raw of [...shared, ...(((operation as { parameters?: unknown[] }).parameters) ?? [])]) {
        const parameter = resolve(raw);
        const schema = resolve(parameter.schema);
        const type = schema.type;
        if ((parameter.in === 'query' || parameter.in === 'path') && (type === 'integer' || type === 'number' || type === 'boolean')) {
          typed.push({ name: String(parameter.name), in: parameter.in, type });
        }
      }
      if (typed.length > 0) map.set(`${method} ${path}`, typed);
    }
  }
  return map;
}
