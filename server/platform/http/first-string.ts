// One walk for the checks that refuse a body, query or path over the text it carries (U+0000, lone surrogates):
// the JSON pointer of the first string, value or key, that matches. Bodies are at most 32 levels deep by then
// (json-body.ts), so the recursion is bounded.

/** The pointer (below `pointer`) of the first string value or key that `pattern` matches, or null. */
export function firstStringMatching(value: unknown, pointer: string, pattern: RegExp): string | null {
  if (typeof value === 'string') return pattern.test(value) ? pointer : null;
  if (value === null || typeof value !== 'object') return null;
  for (const [key, item] of Object.entries(value)) {
    const child = `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (pattern.test(key)) return child;
    const found = firstStringMatching(item, child, pattern);
    if (found !== null) return found;
  }
  return null;
}
