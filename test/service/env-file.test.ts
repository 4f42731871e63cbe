// One .env for the server and the operator CLI (issue 19, part 8): both read an optional .env in the working
// directory, a variable of the environment wins over it, and a webhook to this machine is allowed by the one
// setting WEBHOOK_ALLOW_LOOPBACK, which the refusal names. Each process runs in a scratch directory holding only
// its .env, as a developer's checkout would.
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { createOrganization } from '../../server/platform/access/organizations.js';
import { freePort } from '../../scripts/lib/free-port.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { entryArguments } from '../support/entry.js';
import { kyselyOver } from '../../server/platform/database/database.js';

const repository = resolve('.');
const tsx = import.meta.resolve('tsx'); // --import from another working directory needs the loader's own URL
let database: TestDatabase;
let pool: pg.Pool;
const scratch: string[] = [];

test.before(async () => {
  database = await createTestDatabase('env_file');
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
});
test.after.always(async () => {
  await pool?.end();
  await database?.drop();
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

/** A directory holding only a .env with these lines. */
function withEnvFile(lines: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'erp-env-file-'));
  scratch.push(dir);
  writeFileSync(join(dir, '.env'), `# written by env-file.test.ts\n${lines.join('\n')}\n`);
  return dir;
}

/** The environment of the test run less every setting, so that only the .env and `env` speak. */
function environment(env: Record<string, string>): Record<string, string> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) =>
        ![
          'PORT',
          'HOST',
          'DATABASE_URL',
          'DATA_DIR',
          'LOG_LEVEL',
          'WEBHOOK_ALLOW_LOOPBACK',
          'SANDBOX_BOOTSTRAP',
          'ENVIRONMENT',
        ].includes(name),
    ),
  ) as Record<string, string>;
  return { ...base, ...env };
}

/**
 * Node's arguments that run `script` from another working directory: under `npm test` the run's compiled bundle
 * (entry.ts), as `npm start` and `npm run admin` run dist/ (a bundle finds its packages and generated/ from its
 * own location, so only the .env comes from the working directory); else the sources through tsx. The bundle
 * saves each of the seven processes here loading and compiling the sources through tsx (about 1.5 CPU-s each).
 */
function scriptArguments(script: 'server/main.ts' | 'scripts/admin/cli.ts'): string[] {
  const compiled = entryArguments(script);
  return compiled[0] === '--import' ? ['--import', tsx, join(repository, script)] : compiled;
}

function run(
  script: 'server/main.ts' | 'scripts/admin/cli.ts',
  args: string[],
  cwd: string,
  env: Record<string, string>,
  until?: string,
): Promise<{ code: number | null; output: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [...scriptArguments(script), ...args], {
      cwd,
      env: environment(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk;
      if (until && output.includes(until)) child.kill('SIGTERM');
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const timer = setTimeout(() => child.kill('SIGKILL'), 100_000);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, output });
    });
  });
}

test.serial(
  'npm start reads PORT and DATABASE_URL from .env in its working directory; a variable of the environment wins over the file',
  async (t) => {
    const [filePort, envPort, pgPort] = [await freePort(), await freePort(), await freePort()];
    const dir = withEnvFile([
      `PORT=${filePort}`,
      `DATABASE_URL="${database.url}"`,
      'SANDBOX_BOOTSTRAP=false',
      'LOG_LEVEL=warn',
    ]);
    // EMBEDDED_POSTGRES_PORT only keeps a start that ignored the file off the default port.
    const fromFile = await run('server/main.ts', [], dir, { EMBEDDED_POSTGRES_PORT: String(pgPort) }, 'API listening');
    t.true(fromFile.output.includes(`API listening on http://127.0.0.1:${filePort}/api/v1`), fromFile.output);
    const overridden = await run(
      'server/main.ts',
      [],
      dir,
      { PORT: String(envPort), EMBEDDED_POSTGRES_PORT: String(pgPort) },
      'API listening',
    );
    t.true(overridden.output.includes(`API listening on http://127.0.0.1:${envPort}/api/v1`), overridden.output);
  },
);

test.serial(
  'the operator CLI reads WEBHOOK_ALLOW_LOOPBACK from the same .env: with it a receiver on 127.0.0.1 is added',
  async (t) => {
    const org = (await createOrganization(kyselyOver(pool), { name: 'Env File Distributor' })).id;
    const dir = withEnvFile([`DATABASE_URL=${database.url}`, 'WEBHOOK_ALLOW_LOOPBACK=true']);
    const added = await run(
      'scripts/admin/cli.ts',
      ['webhook', 'add', '--org', org, '--url', 'http://127.0.0.1:9/hook', '--events', '*', '--json'],
      dir,
      {},
    );
    t.is(added.code, 0, added.output);
    t.regex(JSON.parse(added.output).id, /^we_/);
  },
);

test.serial(
  'without WEBHOOK_ALLOW_LOOPBACK a receiver on this machine is refused (exit 1, nothing stored) and the refusal names the setting and where to set it',
  async (t) => {
    const org = (await createOrganization(kyselyOver(pool), { name: 'Env File Distributor' })).id;
    const dir = withEnvFile([`DATABASE_URL=${database.url}`]);
    const hint =
      'For a receiver on this machine (tests, local trials), set WEBHOOK_ALLOW_LOOPBACK=true in the environment or the .env file that both the CLI and the worker (npm start) read; production refuses it';
    const [plainHttp, localhost] = await Promise.all([
      run(
        'scripts/admin/cli.ts',
        ['webhook', 'add', '--org', org, '--url', 'http://127.0.0.1:9/hook', '--events', '*'],
        dir,
        {},
      ),
      run(
        'scripts/admin/cli.ts',
        ['webhook', 'add', '--org', org, '--url', 'https://localhost/hook', '--events', '*'],
        dir,
        {},
      ),
    ]);
    t.is(plainHttp.code, 1);
    t.is(plainHttp.output, `error: webhook URLs must use https. ${hint}\n`);
    t.is(localhost.code, 1);
    t.regex(
      localhost.output,
      new RegExp(
        `^error: localhost resolves to \\S+, a loopback address, which webhooks may not reach\\. ${hint.replace(/[().]/g, '\\$&')}\n$`,
      ),
    );
    // Not for what loopback would not allow: a private address, or plain http to a public one.
    const [privateAddress, publicHttp] = await Promise.all([
      run(
        'scripts/admin/cli.ts',
        ['webhook', 'add', '--org', org, '--url', 'https://10.0.0.1/hook', '--events', '*'],
        dir,
        {},
      ),
      run(
        'scripts/admin/cli.ts',
        ['webhook', 'add', '--org', org, '--url', 'http://93.184.215.14/hook', '--events', '*'],
        dir,
        {},
      ),
    ]);
    t.is(
      privateAddress.output,
      'error: 10.0.0.1 resolves to 10.0.0.1, a private address, which webhooks may not reach\n',
    );
    t.is(publicHttp.output, 'error: webhook URLs must use https\n');
    t.is(
      (await pool.query('SELECT count(*)::int AS n FROM webhook_endpoints WHERE organization_id = $1', [org])).rows[0]
        .n,
      0,
    );
  },
);
