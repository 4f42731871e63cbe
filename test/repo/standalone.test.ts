// The repository stands alone: a clone with nothing beside it builds, tests and explains itself. Nothing in it
// reads or cites a file outside it (the briefing documents the project started from are not shipped), and the
// decisions the code relies on are records inside it, each citation resolving to a file that exists.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = process.cwd();

/** Tracked files and new ones not ignored (so a file not yet committed is judged too), minus deleted ones. */
function repositoryFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return [...new Set(listed.split('\0').filter(Boolean))].filter(
    (file) => existsSync(join(root, file)) && statSync(join(root, file)).isFile(),
  );
}

function textOf(file: string): string | undefined {
  const bytes = readFileSync(join(root, file));
  return bytes.includes(0) ? undefined : bytes.toString('utf8'); // binary files cite nothing
}

// Spelt in pieces so that this file does not match itself.
const OUTSIDE = [
  {
    why: 'a path into the sibling folder beside the clone',
    pattern: new RegExp(['\\.\\.', 'shared\\b'].join('[\\\\/]')),
  },
  { why: 'an absolute path into the workspace', pattern: new RegExp(['', 'work', 'shared'].join('/')) },
  {
    why: 'a briefing document that is not in the repository',
    pattern: new RegExp(`\\b(?:${['design', 'domain', 'product-spec'].join('|')})\\.md\\b`),
  },
];

test('no file of the repository reads or cites a path outside it (code, comments, tests, scripts, documentation)', (t) => {
  const files = repositoryFiles();
  t.true(files.length > 200, `the file list is found (${files.length})`);
  t.true(files.includes('test/repo/standalone.test.ts'));
  const offenders: string[] = [];
  for (const file of files) {
    const text = textOf(file);
    if (text === undefined) continue;
    text.split('\n').forEach((line, index) => {
      for (const { why, pattern } of OUTSIDE)
        if (pattern.test(line)) offenders.push(`${file}:${index + 1}: ${why}: ${line.trim().slice(0, 160)}`);
    });
  }
  t.deepEqual(offenders, []);
});

test('the patterns catch what they are for', (t) => {
  const caught = (line: string) => OUTSIDE.filter(({ pattern }) => pattern.test(line)).map(({ why }) => why);
  t.deepEqual(caught(`// see ${'..'}/shared/${'design'}.md, Tenancy`), [
    'a path into the sibling folder beside the clone',
    'a briefing document that is not in the repository',
  ]);
  t.deepEqual(
    caught(`readFileSync(join(root, '..', 'shared', 'x'))`),
    [],
    'a path built from pieces is caught by the test that reads it, not by this grep',
  );
  t.deepEqual(caught(`${'..'}\\shared\\notes.txt`), ['a path into the sibling folder beside the clone']);
  t.deepEqual(caught(`${'/work'}/shared/${'product-spec'}.md`), [
    'an absolute path into the workspace',
    'a briefing document that is not in the repository',
  ]);
  t.deepEqual(caught('"@vue/shared": "3.5.45", the shared statements live in platform/resources'), []);
});

test('ARCHITECTURE.md and the decision records exist, and every decision record a file cites is there', (t) => {
  t.true(existsSync(join(root, 'ARCHITECTURE.md')));
  const records = readdirSync(join(root, 'docs', 'decisions'))
    .filter((name) => /^\d{4}-[a-z0-9-]+\.md$/.test(name))
    .sort();
  t.true(records.length >= 10, records.join(', '));
  records.forEach((name, index) => {
    t.true(name.startsWith(String(index + 1).padStart(4, '0')), `numbered without gaps: ${name}`);
  });
  for (const name of records) {
    const text = readFileSync(join(root, 'docs', 'decisions', name), 'utf8');
    t.regex(text, new RegExp(`^# ${name.slice(0, 4)} `), `${name} is titled with its number`);
    t.regex(text, /^## Context$/m, `${name} has its context`);
    t.regex(text, /^## Decision$/m, `${name} has its decision`);
  }
  const index = readFileSync(join(root, 'docs', 'decisions', 'README.md'), 'utf8');
  for (const name of records) t.true(index.includes(`(${name})`), `docs/decisions/README.md lists ${name}`);

  const cited = new Map<string, string[]>();
  for (const file of repositoryFiles()) {
    const text = textOf(file);
    if (text === undefined) continue;
    for (const match of text.matchAll(/docs\/decisions\/([\w.-]+\.md)/g))
      cited.set(match[1]!, [...(cited.get(match[1]!) ?? []), file]);
  }
  t.true(cited.size >= 4, 'the code cites its decisions');
  for (const [name, files] of cited)
    t.true(
      records.includes(name) || name === 'README.md',
      `docs/decisions/${name}, cited by ${files.join(', ')}, exists`,
    );
  // The code that used to send readers outside the repository now cites a record inside it.
  for (const file of ['prisma/schema.prisma', 'server/modules/customers/repository.ts', 'scripts/generate.ts']) {
    t.regex(readFileSync(join(root, file), 'utf8'), /docs\/decisions\/\d{4}-[\w-]+\.md/, file);
  }
});
