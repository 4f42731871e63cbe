// RFC 8785 canonical JSON (key order and number forms fixed), for comparing bodies and fingerprinting filters.
import canonicalizeModule from 'canonicalize';

// canonicalize is CommonJS whose typings declare an ES default export; at run time the import is the function.
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

export function canonicalJson(value: unknown): string {
  return canonicalize(value ?? null) ?? 'null';
}
