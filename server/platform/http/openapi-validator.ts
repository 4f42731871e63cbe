// express-openapi-validator checks every request (and, outside production, every response) against the
// bundled spec, so the spec is enforced rather than merely described. It compiles the schemas once, at start.
import { createRequire } from 'node:module';
import type { Request, RequestHandler, Response } from 'express';
import type * as OpenApiValidatorLibrary from 'express-openapi-validator';
import type { ApiDocument } from '../spec.js';
import { operationOf } from './known-operation.js';
import type { Operation } from '../operations.js';

let library: typeof OpenApiValidatorLibrary | undefined;

/**
 * The library, loaded (and patched) when the first app is made rather than when this module is imported: it is
 * CommonJS with its own tree (Ajv, ajv-formats, multer, body-parser, lodash, a $ref parser), about 0.3 to 1 CPU-s to
 * load, and a process that imports the HTTP layer without serving never needs it: the operator CLI, and the test files
 * that call the run's shared service (decision 0057).
 */
function validatorLibrary(): typeof OpenApiValidatorLibrary {
  if (!library) {
    const entry = createRequire(import.meta.url).resolve('express-openapi-validator');
    library = createRequire(import.meta.url)(entry) as typeof OpenApiValidatorLibrary;
    // The patches reach the library's own modules (and its copies of path-to-regexp and Ajv) from its location.
    const validatorRequire = createRequire(entry);
    memoisePathCompilation(validatorRequire);
    skipCompilationAtStart(validatorRequire);
    skipReferenceScanOfSchemasWithoutIds(validatorRequire);
  }
  return library;
}

/**
 * The validator's first request of each operation adds a schema for it to Ajv that embeds the whole description's
 * `paths` and `components` (so that its `#/components/...` references resolve), twice (parameters, body). Ajv then
 * walks all of it (`getSchemaRefs`, every key of some 6,000 objects, building each one's JSON pointer) looking for
 * `$id`, `$anchor` and `$dynamicAnchor` to register, and finds none: the bundled description has none. Measured
 * over the suite: 27 of the 33 CPU-s the validator spent adding those schemas. The walk's result is empty exactly when
 * no object below the root carries one of those keys as a string, so that is decided once per object (the embedded
 * `paths` and `components` are the same objects for every operation) and the walk runs only when one does.
 */
function skipReferenceScanOfSchemasWithoutIds(validatorRequire: NodeJS.Require): void {
  const resolveModule = validatorRequire('ajv/dist/compile/resolve') as {
    getSchemaRefs: ((this: { opts: { schemaId?: string } }, schema: unknown, baseId: string) => object) & {
      __idFree?: boolean;
    };
  };
  if (resolveModule.getSchemaRefs.__idFree) return;
  const walk = resolveModule.getSchemaRefs;
  const idFreeBySchemaId = new Map<string, WeakMap<object, boolean>>();
  const idFree = (value: unknown, keys: string[], known: WeakMap<object, boolean>): boolean => {
    if (typeof value !== 'object' || value === null) return true;
    const cached = known.get(value);
    if (cached !== undefined) return cached;
    const record = value as Record<string, unknown>;
    const free =
      keys.every((key) => typeof record[key] !== 'string') &&
      Object.values(record).every((child) => idFree(child, keys, known));
    known.set(value, free);
    return free;
  };
  const patched = function getSchemaRefs(this: { opts: { schemaId?: string } }, schema: unknown, baseId: string) {
    if (typeof schema === 'object' && schema !== null) {
      const schemaId = this.opts.schemaId ?? '$id';
      let known = idFreeBySchemaId.get(schemaId);
      if (!known) idFreeBySchemaId.set(schemaId, (known = new WeakMap()));
      const keys = [schemaId, '$anchor', '$dynamicAnchor'];
      // The root's own keys are the caller's (its $id is the base); the walk registers only what lies below it.
      if (Object.values(schema).every((child) => idFree(child, keys, known))) return {};
    }
    return walk.call(this, schema, baseId);
  } as typeof walk;
  patched.__idFree = true;
  resolveModule.getSchemaRefs = patched;
}

/**
 * express-openapi-validator 5.6 finds a request's operation by compiling every path template with path-to-regexp,
 * on every request, until one matches (openapi.metadata.js, lookupRoute): measured, the largest single cost of a
 * simple GET, growing with the number of paths. Upstream has the fix open (cdimascio/express-openapi-validator
 * pull request 1217, "perf: cache route matchers"). Until it ships, the compiled matchers are memoised here:
 * pathToRegexp is a pure function of its arguments, the validator reads the result without changing it, and
 * the templates are the spec's paths, so the cache stays small (it is bounded anyway).
 */
function memoisePathCompilation(validatorRequire: NodeJS.Require): void {
  const pathToRegexpModule = validatorRequire('path-to-regexp') as {
    pathToRegexp: (path: unknown, options?: unknown) => unknown;
    __memoised?: boolean;
  };
  if (pathToRegexpModule.__memoised) return;
  const compile = pathToRegexpModule.pathToRegexp;
  const cache = new Map<string, unknown>();
  pathToRegexpModule.pathToRegexp = (path, options) => {
    if (typeof path !== 'string') return compile(path, options);
    const key = `${path}\u0000${JSON.stringify(options ?? null)}`;
    let compiled = cache.get(key);
    if (compiled === undefined) {
      compiled = compile(path, options);
      if (cache.size < 10_000) cache.set(key, compiled);
    }
    return compiled;
  };
  pathToRegexpModule.__memoised = true;
}

/**
 * Two costs of the validator's start that buy nothing here (measured: together about half the CPU of a service
 * start, which every test file pays):
 * - Its schema preprocessor resolves each `$ref` of a body or response by compiling the referenced schema with Ajv
 *   (`ajv.getSchema(ref).schema`) only to read the schema object back; the compiled function is thrown away (the
 *   request and response validators compile their own, lazily, per operation). A local reference (`#/...`, the only
 *   kind the bundled spec has) is the object at that JSON pointer of the same document, which is read directly.
 * - It compiles the OpenAPI 3 meta-schema even when `validateApiSpec` is false and the compiled validator is never
 *   called. With the check off, the constructor is skipped.
 * Both patches keep the library's behaviour (same objects, same validation); a test checks that requests and
 * responses are still validated (test/http/validation.test.ts and the contract check of every test response).
 */
function skipCompilationAtStart(validatorRequire: NodeJS.Require): void {
  const preprocessorModule = validatorRequire('./middlewares/parsers/schema.preprocessor.js') as {
    SchemaPreprocessor: {
      prototype: {
        resolveSchema(schema: unknown): unknown;
        apiDoc: unknown;
        resolvedSchemaCache: Map<string, unknown>;
      } & { __local?: boolean };
    };
  };
  const prototype = preprocessorModule.SchemaPreprocessor.prototype;
  if (!prototype.__local) {
    const resolveByAjv = prototype.resolveSchema;
    prototype.resolveSchema = function resolveSchema(this: typeof prototype, schema: unknown) {
      const ref = (schema as { $ref?: unknown } | null | undefined)?.$ref;
      if (typeof ref !== 'string' || !ref.startsWith('#/')) return resolveByAjv.call(this, schema);
      const cached = this.resolvedSchemaCache.get(ref);
      if (cached !== undefined) return cached;
      let target: unknown = this.apiDoc;
      for (const token of ref.slice(2).split('/')) {
        target = (target as Record<string, unknown> | undefined)?.[token.replaceAll('~1', '/').replaceAll('~0', '~')];
      }
      if (target === undefined) return resolveByAjv.call(this, schema);
      this.resolvedSchemaCache.set(ref, target);
      return target;
    };
    prototype.__local = true;
  }
  const schemaValidatorModule = validatorRequire('./framework/openapi.schema.validator.js') as {
    OpenAPISchemaValidator: (new (options: { validateApiSpec?: boolean }) => unknown) & { __lazy?: boolean };
  };
  if (!schemaValidatorModule.OpenAPISchemaValidator.__lazy) {
    const Compiled = schemaValidatorModule.OpenAPISchemaValidator;
    const Lazy = function OpenAPISchemaValidator(options: { validateApiSpec?: boolean }) {
      if (options.validateApiSpec === false)
        return {
          validate: () => {
            throw new Error('the API description is not validated at start');
          },
        };
      return new Compiled(options);
    } as unknown as typeof Compiled;
    Lazy.__lazy = true;
    schemaValidatorModule.OpenAPISchemaValidator = Lazy;
  }
}

/** The DMS documents push and file upload, under the API base. */
const DMS_PUSH = /\/dms\/[^/]+\/(documents|files)\/?$/;

/** Paths whose requests the validator leaves alone (their bodies are their module's); their parameters are checked by unvalidated-parameters.ts. */
export function validatorSkips(path: string): boolean {
  return DMS_PUSH.test(path);
}

export function openApiValidator(options: { document: ApiDocument; validateResponses: boolean }): RequestHandler[] {
  const validators = validatorLibrary().middleware({
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
    // The DMS push's body is checked by its module against the same schemas (server/modules/dms/canonical.ts): a
    // document that does not match gets a rejected flag of its own instead of failing the whole batch with a 400.
    // A file's body is bytes read by file-body.ts (its media type and size checked there), parsed by the module.
    ignorePaths: validatorSkips,
  }) as RequestHandler[];
  if (options.validateResponses) return validators;
  // A request with nothing to validate skips the validator (issue 40: it was the largest single cost of GET /health
  // over bare express): an operation that takes no body and whose only parameters are optional headers any text
  // passes (X-Request-Id: a plain string; an unusable one is replaced, not refused), asked without a query string.
  // Its body was already refused unread (knownOperation), its path has no parameter, and no header can fail; the
  // validator would only find the operation again and pass. With a query string it still answers 400
  // unknown_field. Outside production the validator also checks responses, so there nothing is skipped.
  const skippable = new WeakMap<Operation, boolean>();
  const nothingToValidate = (req: Request, res: Response) => {
    const operation = operationOf(res);
    // Only the method the spec declares: a HEAD goes through the validator, which answers it as before (404).
    if (!operation || req.method !== 'GET' || req.originalUrl.includes('?')) return false;
    let skip = skippable.get(operation);
    if (skip === undefined) {
      skip =
        !operation.takesBody &&
        operation.parameters.every(
          (parameter) => parameter.in === 'header' && parameter.required !== true && anyText(parameter.schema),
        );
      skippable.set(operation, skip);
    }
    return skip;
  };
  return validators.map(
    (validator): RequestHandler =>
      (req, res, next) =>
        nothingToValidate(req, res) ? next() : validator(req, res, next),
  );
}

/** A schema every header value passes: `{ type: string }` and nothing else. */
function anyText(schema: unknown): boolean {
  return (
    typeof schema === 'object' &&
    schema !== null &&
    Object.keys(schema).every((key) => key === 'type' || key === 'description' || key === 'example') &&
    (schema as { type?: unknown }).type === 'string'
  );
}
