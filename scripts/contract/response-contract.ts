// Checks one HTTP response against the API description: the status is declared for the operation, the
// content type is one it declares, the body matches the schema, required headers are present and valid.
// Used by every HTTP test (through test/support) and by the contract command any user can run.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

type Json = Record<string, unknown>;

export interface ObservedResponse {
  method: string;
  /** Path relative to the API base, without the query string (`/customers/cus_1`). */
  path: string;
  status: number;
  headers: Headers;
  bodyText: string;
}

export interface ResponseContract {
  /** Violations of the description; empty when the response conforms. */
  check(response: ObservedResponse): string[];
}

/** Validators compiled ahead (precompiled-validators.ts), by the JSON pointer of the schema each checks. */
export type PrecompiledValidators = ReadonlyMap<string, ValidateFunction>;

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

/** The options every response validator is compiled with, here and ahead of time (precompiled-validators.ts). */
export function responseAjv(code?: { source: true }): Ajv2020 {
  // inlineRefs false: a component schema is compiled once, as a function of its own that every response's validator
  // calls, instead of copied into each validator that refers to it. Measured on the 97 JSON response schemas:
  // compiling all of them takes half the CPU (0.4 instead of 0.8 s; a contract run compiles them all), validating
  // is no slower, and the errors are the same, path and message, on 2,214 sample bodies.
  // validateSchema false: no schema is checked against Ajv's meta-schema, neither the description when it is added nor
  // each `{ $ref }` compiled below. The first such check compiles the JSON Schema 2020-12 meta-schema, about 0.3 CPU-s
  // of every test file that makes a request (decision 0057). The spec is linted and checked by its own tests
  // (test/spec), and a schema Ajv cannot compile still fails at compile().
  const ajv = new Ajv2020({
    strict: false,
    allErrors: true,
    validateFormats: true,
    inlineRefs: false,
    validateSchema: false,
    ...(code ? { code } : {}),
  });
  addFormats(ajv);
  return ajv;
}

/**
 * Checks responses against `document`. Each body schema is compiled on its first use, unless `precompiled` has its
 * validator, compiled ahead from the same document with the same options (the test run's, decision 0057).
 */
export function responseContract(document: Json, precompiled?: PrecompiledValidators): ResponseContract {
  let ajv: Ajv2020 | undefined;
  const compiled = new Map<string, ValidateFunction>(precompiled);
  const validatorAt = (pointer: string): ValidateFunction => {
    let validate = compiled.get(pointer);
    if (!validate) {
      if (!ajv) {
        ajv = responseAjv();
        ajv.addSchema(document, 'api', undefined, false);
      }
      validate = ajv.compile({ $ref: `api#${pointer}` });
      compiled.set(pointer, validate);
    }
    return validate;
  };
  const routes = Object.keys(document.paths as Json).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));

  return {
    check(response) {
      const route = routes.find((r) => r.pattern.test(response.path));
      const method = response.method.toLowerCase();
      const operation = route
        ? (((document.paths as Json)[route.template] as Json)[method] as Json | undefined)
        : undefined;
      const where = `${response.method} ${route?.template ?? response.path} -> ${response.status}`;
      // A request for an operation the description does not have must get the description's own 404.
      const responses = operation
        ? (operation.responses as Json)
        : { '404': { $ref: '#/components/responses/NotFound' } };
      const key = [String(response.status), `${String(response.status)[0]}XX`, 'default'].find((k) => k in responses);
      if (!key) return [`${where}: status not declared (declared: ${Object.keys(responses).join(', ')})`];
      const { pointer, declared } = declaredResponse(
        document,
        route?.template ?? '',
        method,
        key,
        responses[key] as Json,
      );

      const violations: string[] = [];
      for (const [name, header] of Object.entries((declared.headers ?? {}) as Json)) {
        const value = response.headers.get(name);
        const spec = (
          typeof (header as Json).$ref === 'string'
            ? resolve(document, ((header as Json).$ref as string).slice(1))
            : header
        ) as Json;
        if (value === null) {
          if (spec.required) violations.push(`${where}: required header ${name} is missing`);
          continue;
        }
        violations.push(...headerViolations(`${where}: header ${name}=${value}`, (spec.schema ?? {}) as Json, value));
      }

      const content = declared.content as Json | undefined;
      const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
      if (!content) {
        if (response.bodyText.length > 0) violations.push(`${where}: a body is returned but none is declared`);
        return violations;
      }
      if (!(mediaType in content)) {
        violations.push(
          `${where}: content type ${mediaType || '(none)'} not declared (declared: ${Object.keys(content).join(', ')})`,
        );
        return violations;
      }
      if (!/json$/.test(mediaType)) return violations;
      let body: unknown;
      try {
        body = JSON.parse(response.bodyText);
      } catch {
        return [...violations, `${where}: body is not JSON`];
      }
      const validate = validatorAt(bodySchemaPointer(pointer, mediaType));
      if (!validate(body)) {
        for (const error of validate.errors ?? [])
          violations.push(`${where}: body${error.instancePath} ${error.message}`);
      }
      return violations;
    },
  };
}

/** The response declared under `key`, and its JSON pointer: a `$ref`'s target, or where it is written. */
function declaredResponse(
  document: Json,
  template: string,
  method: string,
  key: string,
  declared: Json,
): { pointer: string; declared: Json } {
  if (typeof declared.$ref !== 'string')
    return { pointer: `/paths/${escape(template)}/${method}/responses/${key}`, declared };
  const pointer = declared.$ref.slice(1);
  return { pointer, declared: resolve(document, pointer) };
}

const bodySchemaPointer = (responsePointer: string, mediaType: string) =>
  `${responsePointer}/content/${escape(mediaType)}/schema`;

/** The pointer of every JSON body schema `check` can validate against: each operation's responses, and the 404 of an unknown one. */
export function bodySchemaPointers(document: Json): string[] {
  const pointers = new Set<string>();
  const add = ({ pointer, declared }: { pointer: string; declared: Json }) => {
    for (const mediaType of Object.keys((declared?.content ?? {}) as Json))
      if (/json$/.test(mediaType)) pointers.add(bodySchemaPointer(pointer, mediaType));
  };
  for (const [template, item] of Object.entries((document.paths ?? {}) as Json))
    for (const [method, operation] of Object.entries(item as Json)) {
      const responses = (operation as Json | null)?.responses as Json | undefined;
      if (typeof responses !== 'object' || responses === null) continue;
      for (const [key, declared] of Object.entries(responses))
        add(declaredResponse(document, template, method, key, declared as Json));
    }
  add(declaredResponse(document, '', 'get', '404', { $ref: '#/components/responses/NotFound' }));
  return [...pointers];
}

/** A header value against its declared schema: type, bounds, length, pattern and fixed values. */
function headerViolations(what: string, schema: Json, value: string): string[] {
  const violations: string[] = [];
  if (schema.type === 'integer') {
    const number = /^-?[0-9]+$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(number)) return [`${what} is not an integer`];
    if (typeof schema.minimum === 'number' && number < schema.minimum)
      violations.push(`${what} is below the minimum ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && number > schema.maximum)
      violations.push(`${what} is above the maximum ${schema.maximum}`);
    return violations;
  }
  if (typeof schema.maxLength === 'number' && [...value].length > schema.maxLength)
    violations.push(`${what} is longer than ${schema.maxLength} characters`);
  if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value))
    violations.push(`${what} does not match ${schema.pattern}`);
  if ('const' in schema && value !== schema.const) violations.push(`${what} is not ${JSON.stringify(schema.const)}`);
  if (Array.isArray(schema.enum) && !schema.enum.includes(value))
    violations.push(`${what} is not one of ${schema.enum.join(', ')}`);
  return violations;
}

function escape(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

function resolve(document: Json, pointer: string): Json {
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<Json>((node, segment) => node[segment] as Json, document);
}
