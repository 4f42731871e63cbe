// What the description requires of the answer to one request, judged from the request as sent (not from the
// mutation that made it): the reasons it must be refused (a 4xx). An empty list means any documented answer is
// right (a valid request may still be 404 or 422 for a reason the pass cannot know). Only what the description
// or the README states plainly is a reason; an ambiguous case (an empty header value, `+5`, a charset) is not.
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { resolveRef } from '../../server/platform/openapi-ref.js';
import type { Json } from '../../scripts/contract/operations.js';
import type { FuzzOperation } from './operations.js';
import type { Draft } from './requests.js';
import type { WireRequest } from './wire.js';
import type { World } from './world.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
/** The JSON body limit the README and the 413 response state. */
const BODY_LIMIT = 1024 * 1024;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export interface Judge {
  reasonsToRefuse(op: FuzzOperation, draft: Draft, wire: WireRequest): string[];
}

export function judge(document: Json, world: World, idFields: Map<string, string>): Judge {
  // No meta-schema check of the description (as scripts/contract/response-contract.ts says why).
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema(document, 'api');
  const compiled = new Map<string, ValidateFunction>();
  const byPointer = (pointer: string) => {
    let validate = compiled.get(pointer);
    if (!validate) compiled.set(pointer, (validate = ajv.compile({ $ref: `api#${pointer}` })));
    return validate;
  };
  const bySchema = (schema: unknown) => {
    const key = JSON.stringify(schema);
    let validate = compiled.get(key);
    if (!validate) compiled.set(key, (validate = ajv.compile(inline(document, schema) as Json)));
    return validate;
  };
  /** Which scopes each of the caller's keys holds. */
  const keyHolds = new Map<string, (scope: string) => boolean>([
    [world.own.caller.secret, () => true],
    [world.readOnlyKey, (scope) => scope.endsWith(':read')],
    [world.noScopeKey, () => false],
  ]);
  const ownIds = (prefix: string) => new Set(world.own.ids.get(prefix) ?? []);

  return {
    reasonsToRefuse(op, draft, wire) {
      const reasons: string[] = [];
      if (!op.pathMethods.includes(wire.method)) return [`${wire.method} is not declared for ${op.template} (404)`];

      for (const parameter of op.parameters.filter((p) => p.in === 'path')) {
        const name = String(parameter.name);
        const value = decode(draft.path[name] ?? '', false);
        if (value === undefined) {
          reasons.push(`path ${name} is not valid percent-encoded UTF-8`);
          continue;
        }
        if (!bySchema(parameter.schema ?? {})(value)) reasons.push(`path ${name} does not match its schema`);
        const prefix = op.idParameters.get(`path:${name}`);
        if (prefix && !ownIds(prefix).has(value))
          reasons.push(
            `path ${name} is no ${prefix} of the caller's organisation${world.foreignIds.has(value) ? " (another organisation's)" : ''} (404)`,
          );
        // The parameter's description: `dms` or a system registered for the organisation, 404 otherwise.
        if (name === 'system' && !world.own.systems.includes(value))
          reasons.push(`code system ${value} is not the organisation's (404)`);
      }

      for (const [rawName, rawValue] of draft.query) {
        const name = decode(rawName, true);
        const value = decode(rawValue, true);
        const parameter = op.parameters.find((p) => p.in === 'query' && p.name === name);
        if (!parameter) {
          reasons.push(`query parameter ${JSON.stringify(name ?? rawName)} is not declared (400 unknown_field)`);
          continue;
        }
        if (value === undefined) {
          reasons.push(`query ${name} is not valid percent-encoded UTF-8`);
          continue;
        }
        const typed = typedQueryValue((parameter.schema ?? {}) as Json, value);
        if (typed === INVALID || !bySchema(parameter.schema ?? {})(typed))
          reasons.push(
            `query ${name}=${JSON.stringify(value.slice(0, 40))} does not match its schema (400 invalid_field)`,
          );
      }

      if (op.scopes) {
        const authorization = Object.entries(wire.headers).find(([k]) => k.toLowerCase() === 'authorization')?.[1];
        const key = /^bearer ([^ ]+)$/i.exec(authorization ?? '')?.[1];
        const holds = key ? keyHolds.get(key) : undefined;
        if (!holds) reasons.push('no valid API key (401)');
        else if (!op.scopes.every(holds)) reasons.push(`the key lacks ${op.scopes.join(', ')} (403)`);
      }
      for (const parameter of op.parameters.filter((p) => p.in === 'header')) {
        const name = String(parameter.name).toLowerCase();
        if (['authorization', 'content-type', 'accept', 'x-request-id'].includes(name)) continue;
        const value = Object.entries(wire.headers).find(([k]) => k.toLowerCase() === name)?.[1];
        if (value === undefined) {
          if (parameter.required) reasons.push(`header ${String(parameter.name)} is required`);
          continue;
        }
        // An empty field value is left alone: HTTP software may treat it as absent.
        if (value !== '' && !bySchema(parameter.schema ?? {})(value))
          reasons.push(`header ${String(parameter.name)} does not match its schema`);
      }

      if (op.body) reasons.push(...bodyReasons(op, wire, byPointer(op.body.schemaPointer), world, idFields));
      return reasons;
    },
  };
}

function bodyReasons(
  op: FuzzOperation,
  wire: WireRequest,
  validate: ValidateFunction,
  world: World,
  idFields: Map<string, string>,
): string[] {
  const body = op.body!;
  const header = (name: string) => Object.entries(wire.headers).find(([k]) => k.toLowerCase() === name)?.[1];
  if (!wire.body || wire.body.length === 0)
    return body.required ? ['the request body is required and there is none'] : [];
  const contentType = header('content-type');
  if (contentType === undefined) return ['a body without Content-Type (415)'];
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  if (!body.mediaTypes.includes(mediaType)) return [`Content-Type ${contentType} is not declared (415)`];

  let bytes = wire.body;
  const encoding = header('content-encoding');
  if (encoding !== undefined && encoding.trim() !== '') {
    for (const coding of encoding
      .split(',')
      .map((c) => c.trim().toLowerCase())
      .reverse()) {
      try {
        const options = { maxOutputLength: BODY_LIMIT + 1 };
        if (coding === 'gzip' || coding === 'x-gzip') bytes = gunzipSync(bytes, options);
        else if (coding === 'deflate') bytes = inflateSync(bytes, options);
        else if (coding === 'br') bytes = brotliDecompressSync(bytes, options);
        else if (coding !== 'identity') return [`Content-Encoding ${coding} is not one the service can read (415)`];
      } catch (error) {
        if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
          return ['the decoded body is over 1 MB (413)'];
        return [`the body is not in its Content-Encoding ${coding}`];
      }
    }
  }
  if (bytes.length > BODY_LIMIT) return ['the body is over 1 MB (413)'];
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return ['the body is not valid UTF-8 (400 invalid_json)'];
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return ['the body is not JSON (400 invalid_json)'];
  }
  const reasons: string[] = [];
  visitStrings(value, (s) => {
    if (LONE_SURROGATE.test(s) && reasons.length === 0) reasons.push('a string holds a lone surrogate (400)');
  });
  if (!validate(value))
    reasons.push(
      `the body does not match its schema: ${validate.errors?.[0]?.instancePath || '/'} ${validate.errors?.[0]?.message ?? ''}`,
    );
  // An id field must name a record of the caller's organisation (422 otherwise), never another's.
  visitFields(value, (key, v) => {
    const prefix = idFields.get(key);
    if (!prefix || typeof v !== 'string') return;
    if (!(world.own.ids.get(prefix) ?? []).includes(v))
      reasons.push(
        `${key}=${v} is no ${prefix} of the caller's organisation${world.foreignIds.has(v) ? " (another organisation's)" : ''} (422)`,
      );
  });
  return reasons;
}

const INVALID = Symbol('invalid');

/** A query value as the type its schema names, read strictly: `" 5"`, `0x10`, `1e2`, `5.0` are not integers. */
function typedQueryValue(schema: Json, value: string): unknown {
  switch (schema.type) {
    case 'integer':
      return /^[+-]?[0-9]+$/.test(value) ? Number(value) : INVALID;
    case 'number':
      return /^[+-]?[0-9]+(\.[0-9]+)?$/.test(value) ? Number(value) : INVALID;
    case 'boolean':
      return value === 'true' ? true : value === 'false' ? false : INVALID;
    default:
      return value;
  }
}

/** Percent-decoding as a server does it (`+` is a space in a query); undefined when not valid UTF-8. */
function decode(raw: string, query: boolean): string | undefined {
  try {
    // decodeURIComponent throws on bytes that are not UTF-8 (%FF, %C0%AF, an encoded surrogate).
    return decodeURIComponent(query ? raw.replace(/\+/g, ' ') : raw);
  } catch {
    return undefined;
  }
}

// Both walks keep their own stack rather than recursing: a fuzzed body may nest 100 000 arrays deep, which the
// service refuses and a recursive walk here would overflow on.
function visitStrings(root: unknown, visit: (s: string) => void): void {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string') visit(value);
    else if (Array.isArray(value)) stack.push(...value);
    else if (value !== null && typeof value === 'object')
      for (const [k, v] of Object.entries(value)) {
        visit(k);
        stack.push(v);
      }
  }
}

function visitFields(root: unknown, visit: (key: string, value: unknown) => void): void {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) stack.push(...value);
    else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (Array.isArray(v))
          for (const item of v) {
            if (typeof item === 'string') visit(k, item);
            else stack.push(item);
          }
        else if (typeof v === 'string') visit(k, v);
        else stack.push(v);
      }
    }
  }
}

/** A schema with its `$ref`s replaced by what they point to (parameter schemas are small and not recursive). */
function inline(document: Json, schema: unknown, depth = 0): unknown {
  if (depth > 20) return schema;
  if (Array.isArray(schema)) return schema.map((s) => inline(document, s, depth + 1));
  if (schema === null || typeof schema !== 'object') return schema;
  const resolved = resolveRef(document, schema);
  return Object.fromEntries(
    Object.entries(resolved).map(([k, v]) => [
      k,
      k === 'examples' || k === 'example' ? v : inline(document, v, depth + 1),
    ]),
  );
}
