// express-openapi-validator checks every request (and, outside production, every response) against the
// bundled spec, so the spec is enforced rather than merely described. It compiles the schemas once, at start.
import type { RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import type { ApiDocument } from '../spec.js';

export function openApiValidator(options: { document: ApiDocument; validateResponses: boolean }): RequestHandler[] {
  return OpenApiValidator.middleware({
    // The validator annotates the document it is given, so it gets its own copy.
    apiSpec: structuredClone(options.document) as never,
    validateApiSpec: false, // linted at build time (npm test); skipping saves start-up time
    // coerceTypes false keeps bodies strict ("2" is not an integer); the validator still coerces query and path parameters.
    validateRequests: { allErrors: true, allowUnknownQueryParameters: false, coerceTypes: false },
    validateResponses: options.validateResponses ? { allErrors: true } : false,
    validateSecurity: false, // authentication and scopes are ours (server/platform), driven by the same spec
    validateFormats: true,
    ajvFormats: { mode: 'full' },
    ignoreUndocumented: false,
  }) as RequestHandler[];
}
