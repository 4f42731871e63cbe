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
const server = sourceFiles('server').map((path) => ({ path: relative(root, join(root, path)), text: readFileSync(join(root, path), 'utf8') }));

test('pg is imported only by the database folder: everything else reaches Postgres through Kysely', (t) => {
  const importers = server.filter((file) => /from 'pg'|import\('pg'\)/.test(file.text) && !file.path.startsWith(DATABASE_FOLDER)).map((file) => file.path);
  t.deepEqual(importers, []);
});

test('no statement is sent as a hand-written string: no client.query outside the database folder, no sql.raw anywhere', (t) => {
  const offenders = server.filter((file) => (/\.query(<[^>]*>)?\(/.test(file.text) && !file.path.startsWith(DATABASE_FOLDER)) || /sql\.raw\(/.test(file.text)).map((file) => file.path);
  t.deepEqual(offenders, []);
});

test('every raw sql template says why the builder could not say it (a comment within the three lines above)', (t) => {
  const unexplained: string[] = [];
  for (const file of server) {
    const lines = file.text.split('\n');
    lines.forEach((line, i) => {
      if (!/\bsql(<[^>]*>)?`/.test(line) || file.path.startsWith(DATABASE_FOLDER)) return;
      const before = lines.slice(Math.max(0, i - 3), i + 1).join('\n');
      if (!/\/\/|\/\*|\*/.test(before)) unexplained.push(`${file.path}:${i + 1}`);
    });
  }
  t.deepEqual(unexplained, []);
});

test('the database folder is the only one that builds a pool', (t) => {
  const builders = server.filter((file) => /new pg\.(Pool|Client)\(/.test(file.text) && !file.path.startsWith(DATABASE_FOLDER)).map((file) => file.path);
  t.deepEqual(builders, []);
});
