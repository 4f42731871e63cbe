// One typed way to the database: the rules of docs/decisions/0003, checked on the source itself so that a later
// change cannot quietly go around Kysely.
import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const DATABASE_FOLDER = 'server/platform/database/';

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}
const server = sourceFiles('server').map((path) => ({
  path: relative(root, join(root, path)),
  text: readFileSync(join(root, path), 'utf8'),
}));

test('pg is imported only by the database folder: everything else reaches Postgres through Kysely', (t) => {
  const importers = server
    .filter((file) => /from 'pg'|import\('pg'\)/.test(file.text) && !file.path.startsWith(DATABASE_FOLDER))
    .map((file) => file.path);
  t.deepEqual(importers, []);
});

test('no statement is sent as a hand-written string: no client.query outside the database folder, no sql.raw anywhere', (t) => {
  const offenders = server
    .filter(
      (file) =>
        (/\.query(<[^>]*>)?\(/.test(file.text) && !file.path.startsWith(DATABASE_FOLDER)) ||
        /sql\.raw\(/.test(file.text),
    )
    .map((file) => file.path);
  t.deepEqual(offenders, []);
});

const indentOf = (line: string) => line.length - line.trimStart().length;
const COMMENT = /\/\/|\/\*|\*/;
/** A line that starts a statement: the explanation of what the statement holds may sit above it. */
const STATEMENT_START = /^(?:const|let|return|await|if|for|export|async|function|\}|\w+\s*=)\b/;

/**
 * Whether the `sql` template on line `at` is explained: a comment within the three lines above it, or (once the
 * formatter has broken its statement over several lines) a comment within that statement or right above its first
 * line. The statement's first line is found through the lines that open it, each the nearest line above with less
 * indentation, up to one that starts a statement.
 */
function explained(lines: readonly string[], at: number): boolean {
  if (COMMENT.test(lines.slice(Math.max(0, at - 3), at + 1).join('\n'))) return true;
  let first = at;
  while (indentOf(lines[first]!) > 0 && !STATEMENT_START.test(lines[first]!.trim())) {
    let opener = first - 1;
    while (opener >= 0 && (lines[opener]!.trim() === '' || indentOf(lines[opener]!) >= indentOf(lines[first]!)))
      opener -= 1;
    if (opener < 0) break;
    first = opener;
  }
  return COMMENT.test(lines.slice(first, at + 1).join('\n')) || (first > 0 && COMMENT.test(lines[first - 1]!));
}

test('the explanation is found above the template, within its statement or right above it, and not above the statement before', (t) => {
  const wrapped = [
    '  // xmax = 0 only on a row this statement inserted.',
    '  const rows = await tx',
    "    .insertInto('t')",
    '    .returning([',
    "      'id',",
    "      'created_at',",
    "      'updated_at',",
    "      sql<boolean>`(xmax = 0)`.as('created'),",
    '    ])',
  ];
  t.true(explained(wrapped, 7));
  t.false(explained(wrapped.slice(1), 6), 'no comment anywhere in or above the statement');
  t.true(
    explained(
      [
        '  const rows = await tx',
        '    // why',
        '    .returning([',
        "      'id',",
        "      'created_at',",
        '      sql`now()`,',
      ],
      5,
    ),
  );
  const nextStatement = [
    '  // about the first statement',
    '  const a = 1;',
    '  const b = await tx',
    '    .select(',
    '      sql`now()`,',
    '    );',
  ];
  t.false(explained(nextStatement, 4), "a comment above the previous statement is not this one's");
  t.true(explained(['  // why', '  const c = sql`now()`;'], 1));
});

test('every raw sql template says why the builder could not say it (a comment within the three lines above, or above its statement)', (t) => {
  const unexplained: string[] = [];
  for (const file of server) {
    const lines = file.text.split('\n');
    lines.forEach((line, i) => {
      if (!/\bsql(<[^>]*>)?`/.test(line) || file.path.startsWith(DATABASE_FOLDER)) return;
      if (!explained(lines, i)) unexplained.push(`${file.path}:${i + 1}`);
    });
  }
  t.deepEqual(unexplained, []);
});

test('the database folder is the only one that builds a pool', (t) => {
  const builders = server
    .filter((file) => /new pg\.(Pool|Client)\(/.test(file.text) && !file.path.startsWith(DATABASE_FOLDER))
    .map((file) => file.path);
  t.deepEqual(builders, []);
});
