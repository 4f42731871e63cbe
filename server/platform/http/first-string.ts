// One walk for the checks that refuse a body, query or path over the text it carries (U+0000, lone surrogates):
// the JSON pointer of the first string, value or key, that matches. Bodies are at most 32 levels deep by then
// (json-body.ts), so the recursion is bounded.

/** The pointer (below `pointer`) of the first string value or key that `pattern` matches, or null. */
export function firstStringMatching(value: unknown, pointer: string, pattern: RegExp): string | null {
  if (typeof value === 'string') return pattern.test(value) ? pointer : null;
  if (value === null || typeof value !== 'object') return null;
  // A member's pointer is made only when it is needed (a match, or an object to descend into): a body of tens of
  // thousands of scalar members is walked without a string per member.
  const childPointer = (key: string) => `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (pattern.test(key)) return childPointer(key);
    const item = (value as Record<string, unknown>)[key];
    if (typeof item === 'string') {
      if (pattern.test(item)) return childPointer(key);
    } else if (item !== null && typeof item === 'object') {
      const found = firstStringMatching(item, childPointer(key), pattern);
      if (found !== null) return found;
    }
  }
  return null;
}
