// The spec's operations, indexed once at start: which operation a method and path name, and what the request
// pipeline needs to know of it (its security, whether it takes or requires a body, its typed parameters), with
// every `$ref` resolved. Authentication, the 404 for unknown operations, the required-body check and the strict
// parameter check all read this one index instead of walking the spec themselves.
import { resolveRef } from './openapi-ref.js';
import type { ApiDocument } from './spec.js';

type Json = Record<string, any>;

export type ScalarParameterType = 'integer' | 'number' | 'boolean';

export interface Operation {
  /** The path as the spec writes it (`/customers/{id}`). */
  pathTemplate: string;
  method: string;
  /** The raw operation object of the spec. */
  spec: Json;
  /** Null: the operation needs no key. Otherwise the scopes the key must hold (possibly none). */
  scopes: string[] | null;
  /** The operation declares a request body. */
  takesBody: boolean;
  /** The operation's `requestBody.required` is true. */
  requiresBody: boolean;
  /** Every parameter, the path item's and the operation's, `$ref`s resolved. */
  parameters: Json[];
  /** The schema of the first media type of the request body (`$ref` left as the spec has it), when there is a body. */
  bodySchema: Json | undefined;
  /** Query and path parameters the spec types as integer, number or boolean. */
  typedParameters: { name: string; in: 'query' | 'path'; type: ScalarParameterType }[];
  /** An operation whose body is a file (`application/xml` or `multipart/form-data`): its limit in bytes (the schema's maxLength). */
  file: { maxBytes: number } | null;
}

/** The media types of a file body: read by file-body.ts, not by the JSON parser. */
export const FILE_MEDIA_TYPES = ['application/xml', 'multipart/form-data'];

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

export interface OperationIndex {
  /** The operation a method and path (relative to /api/v1) name, or null. */
  find(method: string, path: string): Operation | null;
}

export function operationIndex(document: ApiDocument): OperationIndex {
  const globalSecurity = ((document as Json).security ?? []) as Json[];
  const routes = Object.entries(document.paths).map(([template, item]) => ({
    // `{id}` matches one non-empty segment, as express and the validator match it; a trailing slash is tolerated.
    pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
    operations: new Map(
      METHODS.filter((m) => (item as Json)[m]).map((m) => [
        m.toUpperCase(),
        describe(document, template, m, item as Json, globalSecurity),
      ]),
    ),
  }));
  return {
    find(method, path) {
      const wanted = method.toUpperCase();
      for (const route of routes) {
        if (!route.pattern.test(path)) continue;
        return route.operations.get(wanted) ?? null;
      }
      return null;
    },
  };
}

function describe(
  document: ApiDocument,
  pathTemplate: string,
  method: string,
  item: Json,
  globalSecurity: Json[],
): Operation {
  const spec = item[method] as Json;
  const security = (spec.security ?? globalSecurity) as Json[];
  const body = spec.requestBody ? resolveRef(document as Json, spec.requestBody) : undefined;
  const parameters = [...((item.parameters as unknown[]) ?? []), ...((spec.parameters as unknown[]) ?? [])].map(
    (raw) => resolveRef(document as Json, raw) as Json,
  );
  const typedParameters: Operation['typedParameters'] = [];
  for (const parameter of parameters) {
    const type = (resolveRef(document as Json, parameter.schema) as Json | undefined)?.type;
    if (
      (parameter.in === 'query' || parameter.in === 'path') &&
      (type === 'integer' || type === 'number' || type === 'boolean')
    ) {
      typedParameters.push({ name: String(parameter.name), in: parameter.in, type });
    }
  }
  return {
    pathTemplate,
    method: method.toUpperCase(),
    spec,
    scopes: security.length === 0 ? null : ((security[0]!.bearerAuth ?? []) as string[]),
    parameters,
    bodySchema: (Object.values(((body as Json | undefined)?.content ?? {}) as Record<string, Json>)[0]?.schema ??
      undefined) as Json | undefined,
    takesBody: body !== undefined,
    requiresBody: (body as Json | undefined)?.required === true,
    typedParameters,
    file: fileOf(document, body as Json | undefined),
  };
}

function fileOf(document: ApiDocument, body: Json | undefined): Operation['file'] {
  const content = (body?.content ?? {}) as Record<string, Json>;
  const media = FILE_MEDIA_TYPES.map((type) => content[type]).find(Boolean);
  if (!media) return null;
  const schema = resolveRef(document as Json, media.schema) as Json;
  const maxLength =
    schema.maxLength ?? (resolveRef(document as Json, schema.properties?.file) as Json | undefined)?.maxLength;
  return { maxBytes: Number(maxLength) };
}
