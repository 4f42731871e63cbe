// The operator CLI in-process (scripts/admin/run.ts): each run has its own output, environment and exit code, and
// leaves the process's own untouched; and the compiled binary, run as a child process, which is what an operator
// runs (the only child processes of the CLI tests).
import test from 'ava';
import { runCli } from '../../scripts/admin/run.js';
import { runCliProcess } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { TEST_SECRETS } from '../support/secrets.js';

let database: TestDatabase;

test.before(async () => {
  database = await createTestDatabase('admin_run');
});

test.after.always(async () => {
  await database?.drop();
});

test("runCli returns the exit code and the output of the run; process.exitCode and the process's streams are left alone", async (t) => {
  const before = process.exitCode;
  const scopes = await runCli(['scopes', '--json']);
  t.is(scopes.code, 0, scopes.stderr);
  t.true('customers:read' in JSON.parse(scopes.stdout));
  t.is(scopes.stderr, '');

  const unknown = await runCli(['no-such-command']);
  t.is(unknown.code, 2);
  t.is(unknown.stdout, '');
  t.regex(unknown.stderr, /error: unknown command 'no-such-command'/);

  const help = await runCli(['org', '--help']);
  t.is(help.code, 0);
  t.regex(help.stdout, /Usage: admin org/);
  t.is(process.exitCode, before);
});

test('the writers given receive the output as it is written, as the binary passes its stdout and stderr', async (t) => {
  const out: string[] = [];
  const err: string[] = [];
  const run = await runCli(['key', 'create', '--org', 'org_x', '--env', 'nowhere', '--scopes', 'customers:read'], {
    stdout: (text) => out.push(text),
    stderr: (text) => err.push(text),
  });
  t.is(run.code, 2);
  t.is(err.join(''), run.stderr);
  t.regex(run.stderr, /--env/);
  t.deepEqual(out, []);
});

test('each run reads its own environment, not process.env: two runs at once with different DATABASE_URLs each use their own', async (t) => {
  const env = (url: string) => ({ ENVIRONMENT: 'sandbox', ...TEST_SECRETS, DATABASE_URL: url });
  const [good, bad] = await Promise.all([
    runCli(['org', 'list', '--json'], { env: env(database.url) }),
    runCli(['org', 'list', '--json'], { env: env('postgres://nobody@127.0.0.1:1/none') }),
  ]);
  t.is(good.code, 0, good.stderr);
  t.deepEqual(JSON.parse(good.stdout), []);
  t.is(bad.code, 1);
  t.is(bad.stdout, '');
  t.regex(bad.stderr, /127\.0\.0\.1:1/);
});

test('many runs at once keep their output apart', async (t) => {
  const runs = await Promise.all(
    Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? runCli(['scopes', '--json']) : runCli([`unknown-${i}`]))),
  );
  runs.forEach((run, i) => {
    if (i % 2 === 0) t.deepEqual([run.code, run.stderr, typeof JSON.parse(run.stdout)], [0, '', 'object']);
    else
      t.deepEqual([run.code, run.stdout, run.stderr.match(/unknown command '([^']+)'/)?.[1]], [2, '', `unknown-${i}`]);
  });
});

// The binary: the same commands, from the compiled bundle, as separate processes.
test('the compiled admin binary: --json prints only the document, a usage error exits 2, a command that reports by its exit code exits 1', async (t) => {
  const created = await runCliProcess(['org', 'create', '--name', 'From the binary', '--json'], {
    DATABASE_URL: database.url,
  });
  t.is(created.code, 0, created.stderr);
  t.regex(JSON.parse(created.stdout).id, /^org_[0-9A-Z]{26}$/);

  const usage = await runCliProcess(['org', 'create'], { DATABASE_URL: database.url });
  t.is(usage.code, 2);
  t.regex(usage.stderr, /error: required option '--name <name>' not specified/);

  const health = await runCliProcess(['health', '--json'], { DATABASE_URL: database.url });
  t.is(health.code, 1, 'no worker is alive in this database');
  t.deepEqual(JSON.parse(health.stdout).workers, { alive: 0, lastHeartbeatAt: null });
});
