// Documentation must not contradict what the spec serves (issue 38): a sentence of the README or of the spec's own
// descriptions that says an operation, or an area of the API, is missing ("not yet", "does not exist", "not
// served", "there is no") while the spec serves it is false; and the README's list of scopes is the spec's
// catalogue (`components.securitySchemes.bearerAuth.x-scopes`), no scope left out. Pure: no service.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiDocument } from '../../server/platform/spec.js';
import { isServed, mentionsIn, servedOperations } from '../support/operation-mentions.js';

type Json = Record<string, any>;
const root = process.cwd();
const readme = readFileSync(join(root, 'README.md'), 'utf8');

// Words by which a sentence says something is missing. "Not yet:" opens a list of what is missing.
const ABSENCE =
  /\bnot yet\b|\bdoes not exist\b|\bdo not exist\b|\bnot served\b|\bthere is no\b|\bis not an operation\b|\bno `(?:GET|PUT|POST|PATCH|DELETE) /i;

/** The sentences of a text: a paragraph, a bullet or a table row is cut after each `.`, `;` or `!` that ends a clause. */
function sentences(text: string): string[] {
  return text
    .split(/\n\s*\n|\n(?=\s*[-*|] )/)
    .flatMap((block) => block.replace(/\s+/g, ' ').split(/(?<=[.;!])\s+(?=[A-Z`(*])/));
}

/**
 * The clauses of a sentence, cut after a `:` or `;`, so that "there is no `PATCH /products/{id}`: a product changes
 * by `PUT /products/by-code/...`" calls only the PATCH missing. "Not yet:" stays with the list it opens.
 */
function clauses(sentence: string): string[] {
  return sentence.split(/(?<=[;:])\s+/).reduce<string[]>((parts, part) => {
    const last = parts.at(-1);
    if (last !== undefined && /(?:^|\s)not yet:$/i.test(last)) parts[parts.length - 1] = `${last} ${part}`;
    else parts.push(part);
    return parts;
  }, []);
}

/**
 * Each tag of the spec that has operations, with how many. Only an acronym tag (`DMS`) is looked for as a name:
 * `Orders` or `Stock` also begin ordinary sentences ("Stock not yet on the van").
 */
const servedTags: ReadonlyMap<string, number> = (() => {
  const counts = new Map<string, number>();
  for (const item of Object.values(apiDocument.paths)) {
    for (const operation of Object.values(item as Json)) {
      for (const tag of (operation as Json)?.tags ?? []) counts.set(tag, (counts.get(tag) ?? 0) + 1);
    }
  }
  return counts;
})();

/** What a text says is missing that the spec serves: an operation by `METHOD /path`, or an area by its tag's name. */
function falseAbsences(where: string, text: string): string[] {
  return sentences(text)
    .filter((sentence) => ABSENCE.test(sentence))
    .flatMap((sentence) => [
      ...clauses(sentence)
        .filter((clause) => ABSENCE.test(clause))
        .flatMap((clause) => mentionsIn(clause))
        .filter(({ method, path }) => isServed(method, path))
        .map(({ method, path }) => `${where}: ${method} ${path} is served, yet: "${sentence}"`),
      // A tag's name as written in the spec (`DMS`, `Orders`), as a word: "The DMS exchange is not served yet".
      ...[...servedTags.keys()]
        .filter(
          (tag) =>
            /^[A-Z]{2,}$/.test(tag) &&
            new RegExp(`\\b${tag}\\b`).test(sentence) &&
            /\bnot served\b|\bnot yet:|\bnot served yet\b/i.test(sentence),
        )
        .map((tag) => `${where}: the ${tag} operations are served, yet: "${sentence}"`),
    ]);
}

/** Every `description` string of the bundled spec, with where it is. */
function descriptions(node: unknown, path: string): Array<[string, string]> {
  if (Array.isArray(node)) return node.flatMap((child, i) => descriptions(child, `${path}/${i}`));
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node as Json).flatMap(([key, value]) =>
    key === 'description' && typeof value === 'string'
      ? [[`${path}/description`, value] as [string, string]]
      : descriptions(value, `${path}/${key}`),
  );
}

test('the checker flags a missing-operation sentence only when the spec serves what it calls missing', (t) => {
  t.true(servedOperations.includes('GET /orders/by-code/{system}/{code}'));
  t.deepEqual(
    falseAbsences(
      'x',
      'Orders carry no codes, so there is no `GET /orders/by-code/{system}/{code}`. `GET /orders` lists them.',
    ).length,
    1,
  );
  t.deepEqual(
    falseAbsences(
      'x',
      'There is no `PATCH /products/{id}`: a product changes by `PUT /products/by-code/{system}/{code}`.',
    ),
    [],
  );
  t.deepEqual(falseAbsences('x', 'The DMS exchange is not served yet; it arrives in a minor version.').length, 1);
  t.deepEqual(falseAbsences('x', '- Not yet: by-code reads and DMS invoices.').length, 1);
  t.deepEqual(
    falseAbsences('x', 'Not yet posted to the accounting system: a DMS company invoice.'),
    [],
    'posting is not serving',
  );
});

test('no sentence of the README says an operation or area is missing that the spec serves', (t) => {
  t.deepEqual(falseAbsences('README.md', readme), []);
});

test('no description of the spec (info.description first, the first text of /docs) says an operation or area is missing that the spec serves', (t) => {
  const found = descriptions(apiDocument, '#');
  t.true(found.some(([where]) => where === '#/info/description'));
  t.deepEqual(
    found.flatMap(([where, text]) => falseAbsences(where, text)),
    [],
  );
});

test("the README's list of scopes is the spec's scope catalogue, every scope named in full", (t) => {
  const catalogue = Object.keys((apiDocument as Json).components.securitySchemes.bearerAuth['x-scopes']).sort();
  const bullet = readme.split('\n- ').find((item) => item.startsWith('**Scopes come from the spec**'));
  t.truthy(bullet, 'the Access section has its bullet on scopes');
  const listed = [...bullet!.matchAll(/`([a-z-]+(?::[a-z-]+)+)`/g)].map((match) => match[1]!);
  t.deepEqual([...new Set(listed)].sort(), catalogue);
});
