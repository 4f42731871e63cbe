// The operations of the bundled description as the fuzz pass sees them: parameters, request body (media types,
// the JSON pointer of its schema, examples), security scopes, and which parameters and body fields carry ids of
// which kind of record. All of it is read from the document, so an operation added later is fuzzed as it is.
import { prefixOf } from '../../scripts/contract/bind.js';
import { exampleValue, operationsOf, resolve, type Json } from '../../scripts/contract/operations.js';
import { flatten } from './schema-arbitrary.js';

export interface FuzzOperation {
  /** `PUT /customers/by-code/{system}/{code}` */
  key: string;
  method: string;
  template: string;
  parameters: Json[];
  /** Scopes the operation requires; undefined when it needs no key. */
  scopes?: string[];
  body?: {
    required: boolean;
    /** Declared media types, lower case. */
    mediaTypes: string[];
    /** The JSON media type requests are made with. */
    mediaType: string;
    /** JSON pointer (within the document) of the JSON media type's schema. */
    schemaPointer: string;
    schema: unknown;
    examples: unknown[];
  };
  /** Declared methods of the operation's path (a request with another one must be 404). */
  pathMethods: string[];
  /** The kind of record (id prefix) each id parameter names, by `in:name`. */
  idParameters: Map<string, string>;
}

const METHODS = ['GET', 'PUT', 'POST', 'PATCH', 'DELETE'];

export function fuzzOperations(document: Json): FuzzOperation[] {
  const all = operationsOf(document);
  return all
    .map(({ method, template, operation, parameters }) => {
      const security = (operation.security ?? document.security ?? []) as Record<string, string[]>[];
      const scopes =
        security.length === 0 || security.some((requirement) => Object.keys(requirement).length === 0)
          ? undefined
          : [...new Set(security.flatMap((requirement) => Object.values(requirement).flat()))];
      const idParameters = new Map<string, string>();
      for (const parameter of parameters) {
        const prefix =
          prefixOf(parameter.example) ??
          prefixOf(Object.values((parameter.examples ?? {}) as Json).map((e) => exampleValue(document, e))[0]);
        if (prefix) idParameters.set(`${String(parameter.in)}:${String(parameter.name)}`, prefix);
      }
      return {
        key: `${method} ${template}`,
        method,
        template,
        // Parameter schemas with their $refs resolved and allOf merged, so that a type is read in one place.
        parameters: parameters.map((p) => ({
          ...p,
          schema: p.schema === undefined ? undefined : flatten(document, p.schema),
        })),
        scopes,
        body: bodyOf(document, template, method, operation),
        pathMethods: all.filter((o) => o.template === template).map((o) => o.method),
        idParameters,
      };
    })
    .filter((op) => METHODS.includes(op.method));
}

function bodyOf(document: Json, template: string, method: string, operation: Json): FuzzOperation['body'] {
  if (!operation.requestBody) return undefined;
  let pointer = `/paths/${escape(template)}/${method.toLowerCase()}/requestBody`;
  let node = operation.requestBody as Json;
  for (let hops = 0; typeof node.$ref === 'string' && hops < 16; hops += 1) {
    pointer = (node.$ref as string).slice(1);
    node = resolve(document, { $ref: node.$ref });
  }
  const content = (node.content ?? {}) as Record<string, Json>;
  const mediaType =
    Object.keys(content).find((t) => t === 'application/json') ?? Object.keys(content).find((t) => /[/+]json$/.test(t));
  if (!mediaType) return undefined;
  const media = content[mediaType]!;
  const schema = media.schema ?? {};
  const resolvedSchema = resolve(document, schema);
  const examples = [
    ...Object.values((media.examples ?? {}) as Json).map((e) => exampleValue(document, e)),
    ...(media.example !== undefined ? [media.example] : []),
    ...(Array.isArray(resolvedSchema.examples) ? resolvedSchema.examples : []),
  ].filter((e) => e !== undefined);
  return {
    required: node.required === true,
    mediaTypes: Object.keys(content).map((t) => t.toLowerCase()),
    mediaType,
    schemaPointer: `${pointer}/content/${escape(mediaType)}/schema`,
    schema,
    examples,
  };
}

/**
 * Which body fields carry ids of which kind, learned from every example in the document: a property whose
 * example value is an id placeholder (`routeId: "rte_…"`, `customerIds: ["cus_…"]`).
 */
export function idFields(document: Json): Map<string, string> {
  const fields = new Map<string, string>();
  const visit = (node: unknown, key?: string) => {
    if (typeof node === 'string') {
      const prefix = prefixOf(node);
      if (prefix && key && key !== 'id' && !fields.has(key)) fields.set(key, prefix);
      return;
    }
    if (Array.isArray(node)) {
      for (const item of node) visit(item, key);
      return;
    }
    if (node !== null && typeof node === 'object') for (const [k, v] of Object.entries(node)) visit(v, k);
  };
  const walk = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node !== null && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === 'example' || k === 'examples')
          visit(
            k === 'examples' && v !== null && typeof v === 'object' && !Array.isArray(v)
              ? Object.values(v).map((e) => (e as Json)?.value ?? e)
              : v,
          );
        else walk(v);
      }
    }
  };
  walk(document);
  return fields;
}

export function escape(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}
