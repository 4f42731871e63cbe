// The compiled service (docs/decisions/0028-the-service-runs-compiled.md): `npm run build` (scripts/build.mjs) writes
// one bundle per entry script into dist/; `npm start`, `npm run api`/`worker`, `npm run admin` and `npm run contract`
// build first and run that, so a stale dist/ never runs, and builds at the same moment do not break each other. A
// stack trace names the .ts lines, the bundles hold no absolute path of the checkout (it can be moved with its
// dist/), and they import only `dependencies`.
import test from 'ava';
import { TEST_SECRETS } from '../support/secrets.js';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { build, ENTRIES } from '../../scripts/build.mjs';
import { freePort } from '../../scripts/lib/free-port.js';
import { apiVersion } from '../../server/platform/spec.js';
import { createTestDatabase } from '../support/database.js';

const root = process.cwd();
const scratch = join(root, 'node_modules', '.cache', `erp-build-test-${process.pid}`);
test.after.always(() => rmSync(scratch, { recursive: true, force: true }));

function run(
  command: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => {
      output += c;
    });
    child.stderr.on('data', (c: Buffer) => {
      output += c;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

test('the build writes one bundle and map per entry, with no absolute path of the checkout, and a stack trace names the .ts line', async (t) => {
  const outDir = join(scratch, 'dist');
  const { files } = await build({ outDir });
  t.deepEqual(
    files.map((f) => f.slice(outDir.length + 1)).sort(),
    Object.values(ENTRIES)
      .flatMap((f) => [f, `${f}.map`])
      .sort(),
  );
  for (const file of Object.values(ENTRIES)) {
    const text = readFileSync(join(outDir, file), 'utf8');
    t.false(text.includes(root), `${file} names the checkout's path`);
    t.true(text.endsWith(`//# sourceMappingURL=${file}.map\n`), file);
    const map = JSON.parse(readFileSync(join(outDir, `${file}.map`), 'utf8')) as { sources: string[] };
    t.true(
      map.sources.every((s) => !s.startsWith('/') && existsSync(resolve(dirname(join(outDir, file)), s))),
      'the map names the sources relative to itself',
    );
  }

  // The line of server/platform/spec.ts that finds generated/openapi.json, replaced in place by a throw.
  const bundle = readFileSync(join(outDir, ENTRIES['server/main.ts']), 'utf8').split('\n');
  const line = bundle.findIndex((l) => l.includes('"generated", "openapi.json"'));
  t.not(line, -1);
  bundle[line] = 'throw new Error("probe");';
  writeFileSync(join(outDir, 'probe.mjs'), bundle.join('\n'));
  const { code, output } = await run(process.execPath, ['--enable-source-maps', join(outDir, 'probe.mjs')]);
  t.is(code, 1);
  t.regex(output, /Error: probe\n\s+at .*server\/platform\/spec\.ts:16:\d+/, output);
});

test('two builds at once into one directory both succeed and leave whole files, no temporary ones', async (t) => {
  const outDir = join(scratch, 'together');
  const runs = await Promise.all([0, 1, 2].map(() => run(process.execPath, ['scripts/build.mjs', '--out', outDir])));
  t.deepEqual(
    runs.map((r) => r.code),
    [0, 0, 0],
    runs.map((r) => r.output).join('\n'),
  );
  t.deepEqual(
    runs.map((r) => r.output),
    ['', '', ''],
    'a build that succeeds prints nothing (npm run --silent admin stays parseable)',
  );
  t.deepEqual(
    readdirSync(outDir).sort(),
    Object.values(ENTRIES)
      .flatMap((f) => [f, `${f}.map`])
      .sort(),
  );
  const { code, output } = await run(process.execPath, [
    '--enable-source-maps',
    join(outDir, ENTRIES['scripts/admin/cli.ts']),
    '--help',
  ]);
  t.is(code, 0, output);
  t.true(output.includes('Operator CLI'), output);
});

test('npm run api builds dist/ before it starts (a stale one never runs) and the compiled API answers /health', async (t) => {
  t.timeout(120_000);
  const database = await createTestDatabase('build_api');
  mkdirSync(join(root, 'dist'), { recursive: true });
  // What a stale dist/ would run: were it not rebuilt, the start would print this and end.
  writeFileSync(join(root, 'dist', `.stale-${process.pid}.mjs`), 'console.log("stale build ran"); process.exit(3);\n');
  renameSync(join(root, 'dist', `.stale-${process.pid}.mjs`), join(root, 'dist', ENTRIES['server/main.ts']));
  const port = await freePort();
  const child = spawn('npm', ['run', 'api'], {
    detached: true, // its own process group: npm, its shell and node stop together
    env: {
      ...process.env,
      ...TEST_SECRETS,
      DATABASE_URL: database.url,
      PORT: String(port),
      SANDBOX_BOOTSTRAP: 'false',
      SIMULATORS: 'false',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => {
    output += c;
  });
  child.stderr.on('data', (c: Buffer) => {
    output += c;
  });
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  try {
    for (
      const deadline = Date.now() + 100_000;
      !output.includes('API listening') && child.exitCode === null && Date.now() < deadline;
    ) {
      await new Promise((r) => setTimeout(r, 100));
    }
    t.false(output.includes('stale build ran'), output);
    t.true(output.includes('node --enable-source-maps dist/server-main.mjs --role api'), output);
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
    t.is(response.status, 200, output);
    t.like(await response.json(), { status: 'ok', version: apiVersion });
  } finally {
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGTERM');
    await exited;
    await database.drop();
  }
});
