// One formatter and one linter over the repository (issue 37, docs/decisions/0044-one-formatter-and-linter-biome.md):
// Biome, configured by biome.jsonc, checks the formatting and the lint rules of every TypeScript, JavaScript and JSON
// file git does not ignore (and lints YAML and Markdown). Any finding fails, printed as Biome prints it; `npm run
// format` rewrites the formatting, and a lint finding is fixed by hand or its rule switched off in biome.jsonc with
// the reason beside it.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = process.cwd();
const biome = join(root, 'node_modules', '@biomejs', 'biome', 'bin', 'biome');

/** `biome check` (what `npm run lint` runs) in `cwd` over `paths`: its exit status and everything it printed. */
function check(cwd: string, paths: string[]): { status: number | null; output: string } {
  const run = spawnSync(
    process.execPath,
    [biome, 'check', '--error-on-warnings', '--colors=off', '--max-diagnostics=none', ...paths],
    {
      cwd,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

test('the configuration catches a formatting difference and a lint finding, and skips what git ignores', (t) => {
  // A scratch repository with this one's biome.jsonc and .gitignore, so that a clean run below means something.
  const scratch = mkdtempSync(join(tmpdir(), 'erp-lint-'));
  t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
  copyFileSync(join(root, 'biome.jsonc'), join(scratch, 'biome.jsonc'));
  copyFileSync(join(root, '.gitignore'), join(scratch, '.gitignore'));
  spawnSync('git', ['init', '-q'], { cwd: scratch });
  mkdirSync(join(scratch, 'server'));
  mkdirSync(join(scratch, 'generated'));
  writeFileSync(join(scratch, 'server', 'double-quotes.ts'), 'export const answer = {a: "b"}\n');
  writeFileSync(
    join(scratch, 'server', 'unused-import.ts'),
    "import { join } from 'node:path';\n\nexport const answer = 42;\n",
  );
  writeFileSync(join(scratch, 'server', 'clean.ts'), "export const answer = { a: 'b' };\n");
  writeFileSync(join(scratch, 'generated', 'api-types.ts'), 'export const generated = {a: "b"}\n'); // ignored by git

  const misformatted = check(scratch, ['server/double-quotes.ts']);
  t.is(misformatted.status, 1, misformatted.output);
  t.regex(misformatted.output, /double-quotes\.ts format/);
  const unused = check(scratch, ['server/unused-import.ts']);
  t.is(unused.status, 1, unused.output);
  t.regex(unused.output, /lint\/correctness\/noUnusedImports/);
  t.is(check(scratch, ['server/clean.ts']).status, 0);
  const whole = check(scratch, ['.']);
  t.is(whole.status, 1, whole.output);
  t.notRegex(whole.output, /generated/, 'a file git ignores is not checked');
});

test('the repository has no formatting difference and no lint finding (npm run lint)', (t) => {
  const { status, output } = check(root, ['.']);
  if (status !== 0) t.log(output);
  t.is(
    status,
    0,
    'Biome found the problems printed above: `npm run format` fixes the formatting; fix a lint finding by hand, or switch its rule off in biome.jsonc with the reason beside it',
  );
  t.regex(output, /Checked \d+ files/);
});
