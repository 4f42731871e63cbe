// What the spec serves, and the `METHOD /path` mentions of a text, for the tests that hold documentation and
// messages to the spec (test/docs/truth.test.ts, test/repo/operation-mentions.test.ts). Pure: reads the bundled
// description, no service.
import { apiDocument } from '../../server/platform/spec.js';

export const METHODS = ['GET', 'PUT', 'POST', 'PATCH', 'DELETE'] as const;

/** Every operation of the spec as `METHOD /path`, the path a template (`/invoices/{id}`). */
export const servedOperations: readonly string[] = Object.entries(apiDocument.paths).flatMap(([path, item]) =>
  METHODS.filter((method) => (item as Record<string, unknown>)[method.toLowerCase()] !== undefined).map(
    (method) => `${method} ${path}`,
  ),
);

/** A `METHOD /path` mention in a text, where it is (a line or a file) for the failure message. */
export interface Mention {
  method: string;
  path: string;
  text: string;
}

// A path runs to the first character no path of this API has: a space, a quote, a backtick, a closing bracket, a
// comma. `{...}` stands for a segment (a template's parameter, or a substitution of a template literal).
const MENTION = /\b(GET|PUT|POST|PATCH|DELETE) (\/[A-Za-z0-9_{}\-./:?=&%$]*)/g;

export function mentionsIn(text: string): Array<{ method: string; path: string }> {
  return [...text.matchAll(MENTION)].map((match) => ({ method: match[1]!, path: match[2]! }));
}

/**
 * Whether the spec serves `method path`: the query and a sentence's closing dot are not part of the path, and
 * `/api/v1` (where every path is) is left out. A segment that is a `{...}` of the mention, or any concrete value
 * where the spec has `{param}`, matches; concrete segments must be equal.
 */
export function isServed(method: string, rawPath: string): boolean {
  const path =
    rawPath
      .split('?')[0]!
      .replace(/[.:]+$/, '')
      .replace(/^\/api\/v1(?=\/|$)/, '') || '/';
  const segments = path.split('/');
  return servedOperations.some((operation) => {
    const [served, template] = operation.split(' ') as [string, string];
    if (served !== method) return false;
    const parts = template.split('/');
    return (
      parts.length === segments.length &&
      parts.every((part, i) => part === segments[i] || part.startsWith('{') || /^\{[^/]*\}$/.test(segments[i]!))
    );
  });
}
