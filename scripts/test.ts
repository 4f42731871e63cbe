// `npm test`: one PostgreSQL for the whole run (embedded in a temp dir, or the server of DATABASE_URL), a
// template database migrated once (schema plus pg-boss's), the test files compiled once (scripts/lib/compile-tests.mjs,
// docs/decisions/0031), then ava over the compiled files; every test file clones the template. Arguments are ava's:
// test files (`test/http/customers.test.ts`, run compiled) and flags (`--match`). The entry
// scripts that tests start as child processes are compiled first, as `npm run build` compiles them (scripts/build.mjs),
// into this run's own directory (docs/decisions/0017-test-child-processes-from-bundles.md, 0028).
// Ends with the ten slowest test files and one plain line `N passed, N failed`, and exits non-zero on any failure or
// when no test ran. Files start longest first (ava.compiled.config.mjs, from test/durations.json), so that a long
// file does not start last and run alone at the end; `--update-durations` rewrites that file from a whole run.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../server/platform/database/embedded-postgres.js';
import { applyMigrations } from '../server/platform/database/migrations.js';
import { installJobsSchema } from '../server/platform/jobs/jobs.js';
import { pino } from 'pino';
import { loadConfig } from '../server/platform/config.js';
import { startService, type RunningService } from '../server/composition/service.js';
import { TEST_SECRETS } from '../test/support/secrets.js';
import { freePort } from './lib/free-port.js';
import { build } from './build.mjs';
import { compileTests } from './lib/compile-tests.mjs';
import { writePrecompiledValidators } from './contract/precompiled-validators.js';
import { apiDocument } from '../server/platform/spec.js';

const templateName = `erp_test_template_${process.pid}`;
const sharedName = `erp_test_shared_${process.pid}`;
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// Inside node_modules, so that the bundles' imports of packages resolve as the sources' do; one per run, so that a
// test never runs what another run or an `npm start` in the same checkout compiled.
const bundleDir = join(root, 'node_modules', '.cache', `erp-test-bundles-${process.pid}`);
// The compiled tests: inside the repository (packages resolve from its node_modules, ava's project is the
// repository), one directory per run, removed after it.
const compiledDir = join('.test-build', String(process.pid));
let embedded: EmbeddedPostgres | null = null;
let shared: RunningService | null = null;
let scratchDir: string | null = null;
let serverUrl: URL;

if (process.env.DATABASE_URL) {
  serverUrl = new URL(process.env.DATABASE_URL);
} else {
  scratchDir = mkdtempSync(join(tmpdir(), 'erp-test-pg-'));
  chmodSync(scratchDir, 0o755); // the postgres user must reach the data directory below it
  embedded = await startEmbeddedPostgres({
    dataDir: join(scratchDir, 'postgres'),
    port: await freePort(),
    ephemeral: true,
  });
  serverUrl = new URL(embedded.url('postgres'));
}
const urlOf = (database: string) => Object.assign(new URL(serverUrl), { pathname: `/${database}` }).toString();

let exitCode = 1;
try {
  const bundled = build({ root, outDir: bundleDir, bundlePackages: true });
  const updateDurations = process.argv.includes('--update-durations');
  const args = process.argv.slice(2).filter((arg) => arg !== '--update-durations');
  // Test files and folders named on the command line (`test/http/customers.test.ts`, `test/release/`); all by default.
  const named = args.filter((arg) => /\.test\.ts$/.test(arg) || (existsSync(arg) && statSync(arg).isDirectory()));
  const testFiles =
    named.length > 0
      ? named.flatMap((arg) =>
          arg.endsWith('.ts') ? [arg] : listTestFiles(resolve(arg)).map((file) => relative(root, file)),
        )
      : listTestFiles(join(root, 'test')).map((file) => relative(root, file));
  const compiled = compileTests({ root, outDir: join(root, compiledDir), files: testFiles });
  compiled.catch(() => {}); // awaited below
  bundled.catch(() => {}); // awaited below; a failure before that must not be an unhandled rejection
  // The tests' clients check every answer against the description: its validators compiled once here, as code, instead
  // of in every file that makes a request (test/support/api-contract.ts, decision 0057); while esbuild compiles.
  mkdirSync(join(root, compiledDir), { recursive: true });
  const responseValidators = join(root, compiledDir, 'response-validators.cjs');
  writePrecompiledValidators(apiDocument as never, responseValidators);
  await admin(`CREATE DATABASE "${templateName}"`);
  const pool = new pg.Pool({ connectionString: urlOf(templateName) });
  await applyMigrations(pool);
  await pool.end();
  await installJobsSchema(urlOf(templateName));
  shared = await startSharedService();
  await bundled;
  const compiledFiles = await compiled;

  if (testFiles.length === 0) throw new Error(`no test file in ${named.join(', ')}`);
  // The compiled files are named to ava one by one: its globbing skips a folder whose name starts with a dot.
  const avaArgs = [
    '--config',
    'ava.compiled.config.mjs',
    ...compiledFiles,
    ...args.filter((arg) => !named.includes(arg)),
  ];
  const counts = await runAva(avaArgs, {
    TEST_COMPILED_DIR: compiledDir,
    TEST_POSTGRES_URL: urlOf('postgres'),
    TEST_TEMPLATE_DATABASE: templateName,
    TEST_BUNDLE_DIR: bundleDir,
    TEST_SHARED_SERVICE_URL: shared.url!,
    TEST_SHARED_DATABASE_URL: urlOf(sharedName),
    TEST_RESPONSE_VALIDATORS: responseValidators,
  });
  const spans = fileSpans(counts.seen, counts.startedAt);
  printSlowestFiles(spans);
  if (updateDurations) {
    if (named.length > 0 || counts.failed > 0)
      console.error('--update-durations: not written (only a whole run without failures rewrites test/durations.json)');
    else writeDurations(spans);
  }
  console.log(`${counts.passed} passed, ${counts.failed} failed${counts.skipped ? `, ${counts.skipped} skipped` : ''}`);
  exitCode = counts.failed === 0 && counts.passed > 0 && counts.exitCode === 0 ? 0 : 1;
  if (counts.passed === 0) console.error('No test ran.');
} finally {
  await shared?.stop().catch((error: Error) => console.error(`the shared test service did not stop: ${error.message}`));
  await admin(`DROP DATABASE IF EXISTS "${sharedName}" WITH (FORCE)`).catch(() => {});
  await admin(`DROP DATABASE IF EXISTS "${templateName}" WITH (FORCE)`).catch(() => {});
  await embedded?.stop();
  rmSync(bundleDir, { recursive: true, force: true });
  rmSync(join(root, compiledDir), { recursive: true, force: true });
  if (scratchDir) rmSync(scratchDir, { recursive: true, force: true });
}
process.exit(exitCode);

/**
 * The run's one long-lived service (test/support/service.ts, useSharedService), on its own clone of the template: the
 * files that need only its HTTP and its database share it, each with organisations of its own, instead of each
 * cloning a database and starting a service. It runs as a test's service does (the test secrets, the run's business
 * clock, no sandbox, no scheduled jobs) but does not validate its own responses, as production does not: its files'
 * client checks each one. It logs only errors, to this run's stderr.
 */
async function startSharedService(): Promise<RunningService> {
  await admin(`CREATE DATABASE "${sharedName}" TEMPLATE "${templateName}" STRATEGY FILE_COPY`); // as test/support/database.ts says
  const clock = process.env.TEST_CLOCK_OFFSET_DAYS
    ? { TEST_CLOCK_OFFSET_DAYS: process.env.TEST_CLOCK_OFFSET_DAYS }
    : {};
  // Every file on it calls from 127.0.0.1: the budget per address would be the files' together, so it is out of the
  // way here (test/http/keyless-budget.test.ts proves the budget on a service of its own). Webhook receivers of the
  // tests listen on 127.0.0.1, so loopback destinations are allowed, as the files that test webhooks set it.
  const config = loadConfig({
    DATABASE_URL: urlOf(sharedName),
    PORT: '0',
    LOG_LEVEL: 'error',
    // As production runs: the files' client (contractCheckedRequest) judges every answer against the description, and
    // checking it again here cost a sixth of the run's HTTP files' CPU (decision 0052).
    VALIDATE_RESPONSES: 'false',
    SHUTDOWN_TIMEOUT_MS: '10000',
    SANDBOX_BOOTSTRAP: 'false',
    ANONYMOUS_RATE_LIMIT: '1000000,1000000',
    WEBHOOK_ALLOW_LOOPBACK: 'true',
    ...TEST_SECRETS,
    ...clock,
  });
  return startService(config, pino({ level: 'error' }, pino.destination(2)), { scheduledJobs: false });
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: urlOf('postgres') });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

interface Counts {
  passed: number;
  failed: number;
  skipped: number;
  exitCode: number;
  /** Per test file (ava's title prefix, `http › customers`): when its first and last TAP lines came. */
  seen: Map<string, { first: number; last: number }>;
  startedAt: number;
}

/** Runs ava with the TAP reporter, echoing its output, and counts results from the TAP stream. */
function runAva(args: string[], env: Record<string, string>): Promise<Counts> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join('node_modules', 'ava', 'entrypoints', 'cli.mjs'), '--tap', ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const counts: Counts = { passed: 0, failed: 0, skipped: 0, exitCode: 1, seen: new Map(), startedAt: Date.now() };
    let pending = '';
    child.stdout.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) count(line, counts);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      count(pending, counts);
      counts.exitCode = code ?? 1;
      resolve(counts);
    });
  });
}

function count(line: string, counts: Counts): void {
  // `ok 3 - http › customers › title` or `# http › customers › before hook`: the file is all but the last part.
  const titled = /^(?:(?:not )?ok \d+ - |# )(.+ › .+)$/.exec(line);
  if (titled) {
    const file = titled[1]!.split(' › ').slice(0, -1).join(' › ');
    const now = Date.now();
    const entry = counts.seen.get(file);
    if (entry) entry.last = now;
    else counts.seen.set(file, { first: now, last: now });
  }
  if (/^not ok \d+/.test(line)) counts.failed += 1;
  else if (/^ok \d+ .*# SKIP/i.test(line) || /^ok \d+ .*# TODO/i.test(line)) counts.skipped += 1;
  else if (/^ok \d+/.test(line)) counts.passed += 1;
}

/**
 * How long each test file took, from when its TAP lines came: a file runs from when a worker became free (the last
 * line of the file that finished most recently before its own first line) to its last line. An estimate, as ava
 * reports no time per file; enough to see where the run's minutes go, and to start the long files first.
 */
function fileSpans(
  seen: Map<string, { first: number; last: number }>,
  runStart: number,
): { file: string; seconds: number }[] {
  const finishes = [...seen.values()].map((s) => s.last).sort((a, b) => a - b);
  return [...seen]
    .map(([file, { first, last }]) => {
      let start = runStart;
      for (const finish of finishes)
        if (finish < first) start = finish;
        else break;
      return { file, seconds: (last - start) / 1000 };
    })
    .sort((a, b) => b.seconds - a.seconds);
}

function printSlowestFiles(spans: { file: string; seconds: number }[]): void {
  if (spans.length < 2) return;
  console.log('\nThe ten slowest test files (seconds, estimated from the TAP stream):');
  for (const { file, seconds } of spans.slice(0, 10)) console.log(`  ${seconds.toFixed(1).padStart(6)}  ${file}`);
}

/**
 * test/durations.json: each file's seconds in a whole run (`http/customers.test.ts: 4.8`), read by
 * ava.compiled.config.mjs to start the longest files first. Only the order matters, so it is refreshed by hand
 * (`npm test -- --update-durations`) when the suite's shape changes, not on every run.
 */
function writeDurations(spans: { file: string; seconds: number }[]): void {
  const byFile = Object.fromEntries(
    spans
      .map(({ file, seconds }) => [`${file.split(' › ').join('/')}.test.ts`, Math.round(seconds * 10) / 10] as const)
      .sort(([a], [b]) => a.localeCompare(b)),
  );
  writeFileSync(join(root, 'test', 'durations.json'), `${JSON.stringify(byFile, null, 2)}\n`);
  console.log(`test/durations.json: ${spans.length} files`);
}

/** Every `*.test.ts` below `dir`. */
function listTestFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.test.ts'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}
