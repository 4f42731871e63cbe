// The operations of an OpenAPI 3.1 document as the contract command walks them: every method of every path,
// with the path item's parameters merged under the operation's own, and `$ref`s resolved within the document.
import { resolveRef } from '../../server/platform/openapi-ref.js';

export type Json = Record<string, unknown>;

const HTTP_METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options', 'trace'] as const;

export interface Operation {
  /** Upper case (`GET`). */
  method: string;
  /** The path template as the document names it (`/customers/{id}`). */
  template: string;
  operation: Json;
  /** Resolved parameters; an operation's own override the path item's of the same name and location. */
  parameters: Json[];
}

/** Follows a local `$ref`, repeatedly (see server/platform/openapi-ref.ts). */
export const resolve = resolveRef;

export function operationsOf(document: Json): Operation[] {
  const paths = (document.paths ?? {}) as Record<string, Json>;
  return Object.entries(paths).flatMap(([template, rawItem]) => {
    const item = resolve(document, rawItem);
    const shared = ((item.parameters ?? []) as unknown[]).map((p) => resolve(document, p));
    return HTTP_METHODS.filter((method) => typeof item[method] === 'object' && item[method] !== null).map((method) => {
      const operation = item[method] as Json;
      const own = ((operation.parameters ?? []) as unknown[]).map((p) => resolve(document, p));
      const key = (p: Json) => `${String(p.in)}:${String(p.name).toLowerCase()}`;
      const ownKeys = new Set(own.map(key));
      return {
        method: method.toUpperCase(),
        template,
        operation,
        parameters: [...shared.filter((p) => !ownKeys.has(key(p))), ...own],
      };
    });
  });
}

/** The value of an Example object (`{ value }`, possibly a `$ref`); undefined for `externalValue` only. */
export function exampleValue(document: Json, example: unknown): unknown {
  const resolved = resolve(document, example);
  return 'value' in resolved ? resolved.value : undefined;
}
