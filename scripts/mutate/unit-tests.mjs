// @ts-check
// The unit stage of a mutant's test run (scripts/mutate/modules.ts): runs the named test/unit/ files compiled, as
// `npm test` runs tests (scripts/lib/compile-tests.mjs, ava.compiled.config.mjs), not through tsx. Stryker's sandbox
// holds every mutant of the module in one instrumented source, switched on at run time by the environment
// (__STRYKER_ACTIVE_MUTANT__), so the files are compiled once per sandbox, by the first run (the dry run), and every
// mutant after it only starts ava over plain JavaScript: about a third of the CPU of a run through tsx, which is what
// a run costs on a shared machine.
//
//   node scripts/mutate/unit-tests.mjs test/unit/a.test.ts [test/unit/b.test.ts ...]
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { compileTests } from '../lib/compile-tests.mjs';

const files = process.argv.slice(2);
if (files.length === 0 || files.some((file) => !file.startsWith('test/unit/'))) {
  console.error('usage: node scripts/mutate/unit-tests.mjs test/unit/<file>.test.ts ...');
  process.exit(2);
}
const root = process.cwd();
const dir = join('.test-build', `mutate-${createHash('sha256').update(files.join('\n')).digest('hex').slice(0, 12)}`);
const compiled = files.map((file) => join(dir, file.slice('test/'.length).replace(/\.ts$/, '.mjs')));
if (!existsSync(join(root, dir))) {
  // Compiled beside, then renamed into place: runs of the same sandbox at once never see half a build.
  const scratch = `${dir}.${process.pid}`;
  await compileTests({ root, outDir: join(root, scratch), files });
  try {
    renameSync(join(root, scratch), join(root, dir));
  } catch {
    rmSync(join(root, scratch), { recursive: true, force: true }); // another run renamed its build first
  }
}
const ava = spawnSync(
  process.execPath,
  [
    join('node_modules', 'ava', 'entrypoints', 'cli.mjs'),
    '--config',
    'ava.compiled.config.mjs',
    '--fail-fast',
    ...compiled,
  ],
  {
    stdio: 'inherit',
    env: { ...process.env, TEST_COMPILED_DIR: dir },
  },
);
process.exit(ava.status ?? 1);
