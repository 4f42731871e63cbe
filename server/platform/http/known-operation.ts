// A request for a path or method the spec does not have is 404 not_found before anything else reads it: its body is
// never parsed, so a wrong method that carries a body gets the same 404 as one without (not a 400, 413 or 415 that
// the spec could not declare for an operation that does not exist). Likewise a body sent to an operation that takes
// none (a GET) is refused unread, 400 unknown_field: it cannot mean what the caller hopes (filters go in the query),
// and reading it could only end in a 413 or 415 such an operation does not declare. Matching is case-sensitive,
// like the routers.
import type { RequestHandler } from 'express';
import { ApiError } from '../errors/api-error.js';
import { API_BASE_PATH, type ApiDocument } from '../spec.js';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

export function knownOperation(document: ApiDocument): RequestHandler {
  const operations = Object.entries(document.paths).map(([path, item]) => ({
    // `{id}` matches one non-empty path segment, as the validator and express match it.
    pattern: new RegExp(`^${API_BASE_PATH}${path.split(/\{[^}]+\}/).map(escape).join('[^/]+')}$`),
    methods: new Set(Object.keys(item).filter((key) => METHODS.includes(key)).map((m) => m.toUpperCase())),
    withBody: new Set(Object.entries(item).filter(([key, operation]) => METHODS.includes(key) && (operation as { requestBody?: unknown }).requestBody).map(([m]) => m.toUpperCase())),
  }));
  return (req, _res, next) => {
    const path = req.path;
    if (path !== API_BASE_PATH && !path.startsWith(`${API_BASE_PATH}/`)) { next(); return; }
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const operation = operations.find((candidate) => candidate.methods.has(method) && candidate.pattern.test(path));
    if (operation) {
      const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
      if (hasBody && !operation.withBody.has(method)) {
        next(new ApiError('unknown_field', `${req.method} ${path} takes no body, and this request has one; send parameters in the query string.`, [
          { field: '', code: 'unknown_field', message: 'this operation takes no body' },
        ]));
        return;
      }
      next();
      return;
    }
    next(new ApiError('not_found', `${req.method} ${path} is not an operation of this API. See GET /api/v1/openapi.json.`));
  };
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
