// express-openapi-validator checks every request (and, outside production, every response) against the
// bundled spec, so the spec is enforced rather than merely described. It compiles the schemas once, at start.
import type { RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { cloneApiDocument } from '../spec.js';

export function openApiValidator(options: { validateResponses: boolean }): RequestHandler[] {
  return OpenApiValidator.middleware({
    apiSpec: cloneApiDocument() as never,
    validateApiSpec: false, // linted at build time (npm test); skipping saves start-up time
    validateRequests: { allErrors: true, allowUnknownQueryParameters: false, coerceTypes: true },
    validateResponses: options.validateResponses ? { allErrors: true } : false,
    validateSecurity: false, // authentication and scopes are ours (server/platform), driven by the same spec
    validateFormats: true,
    ajvFormats: { mode: 'full' },
    ignoreUndocumented: false,
  }) as RequestHandler[];
}
