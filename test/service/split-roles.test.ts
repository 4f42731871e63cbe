// The split-role layout of the README's "Running as several processes": two `npm run api` processes and one
// `npm run worker` on one DATABASE_URL, each with the settings the README lists for its role, started at the same
// moment on an empty database. Stopping any one of them leaves the others working; a split role without
// DATABASE_URL refuses to start with one line naming it (it would otherwise start or share an embedded PostgreSQL
// that the first process to stop takes down under the others).
import test from 'ava';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../../scripts/lib/free-port.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { addEndpoint } from '../../server/platform/webhooks/endpoints.js';
import { webhookEventTypes } from '../../server/composition/modules.js';
import { createEmptyDatabase, type TestDatabase } from '../support/database.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { eventually, startReceiver, type Receiver } from '../webhooks/receiver.js';

const WEBHOOK_SECRET_KEY = 'ab'.repeat(32);
const CURSOR_SECRET = 'a-cursor-secret-of-this-layout';
const dataDir = mkdtempSync(join(tmpdir(), 'erp-split-roles-'));
let database: TestDatabase;
let pool: pg.Pool;
let receiver: Receiver;
const started: ServerProcess[] = [];

test.before(async () => {
  database = await createEmptyDatabase('split_roles'); // empty: the processes migrate it and bootstrap the sandbox, as on a fresh clone
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
  receiver = await startReceiver();
});
test.after.always(async () => {
  await Promise.all(started.map((p) => p.stop()));
  await receiver?.close();
  await pool?.end();
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The README's settings per role (see "Running as several processes"); every process shares DATABASE_URL. */
const shared = () => ({ DATABASE_URL: database.url, DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
const apiSettings = (port: number) => ({ ...shared(), PORT: String(port), CURSOR_SECRET, WEBHOOK_SECRET_KEY });
const workerSettings = () => ({ ...shared(), CURSOR_SECRET, WEBHOOK_SECRET_KEY, WEBHOOK_ALLOW_LOOPBACK: 'true' });

async function start(env: Record<string, string>, role: 'api' | 'worker'): Promise<ServerProcess> {
  const child = await startServerProcess(env, {
    args: ['--role', role],
    startTimeoutMs: 110_000,
    ...(role === 'worker' ? { readyLine: 'Worker running' } : {}),
  });
  started.push(child);
  if (
    child.child.exitCode !== null ||
    !child.output().includes(role === 'worker' ? 'Worker running' : 'API listening')
  ) {
    throw new Error(`--role ${role} did not start; it printed:\n${child.output()}`);
  }
  return child;
}

test.serial(
  'a split role without DATABASE_URL refuses to start with one line naming DATABASE_URL, and starts no PostgreSQL',
  async (t) => {
    for (const role of ['api', 'worker'] as const) {
      const child = await startServerProcess(
        { DATA_DIR: dataDir, PORT: String(await freePort()), EMBEDDED_POSTGRES_PORT: String(await freePort()) },
        { args: ['--role', role], readyLine: role === 'api' ? 'API listening' : 'Worker running' },
      );
      if (child.child.exitCode === null) {
        await child.stop();
        t.fail(`--role ${role} started without DATABASE_URL:\n${child.output()}`);
        continue;
      }
      t.is(await child.exited, 1, `--role ${role} exits 1`);
      const lines = child.output().trim().split('\n');
      t.is(lines.length, 1, child.output());
      t.regex(lines[0]!, new RegExp(`--role ${role} needs DATABASE_URL`));
    }
    t.throws(() => readFileSync(join(dataDir, 'postgres', 'PG_VERSION')), undefined, 'no embedded cluster was created');
  },
);

test.serial(
  'a split role without CURSOR_SECRET or WEBHOOK_SECRET_KEY refuses to start with one line naming what is missing, and generates no secrets',
  async (t) => {
    // Generated secrets live in one DATA_DIR; split processes on other machines would generate their own, and a cursor of
    // one API process, or a secret the CLI sealed, would not work on another.
    const cases = [
      {
        role: 'api' as const,
        env: { WEBHOOK_SECRET_KEY },
        missing: /--role api needs CURSOR_SECRET: /,
        named: 'CURSOR_SECRET',
      },
      {
        role: 'worker' as const,
        env: { CURSOR_SECRET },
        missing: /--role worker needs WEBHOOK_SECRET_KEY: /,
        named: 'WEBHOOK_SECRET_KEY',
      },
      {
        role: 'worker' as const,
        env: {},
        missing: /--role worker needs CURSOR_SECRET and WEBHOOK_SECRET_KEY: /,
        named: 'both',
      },
    ];
    for (const { role, env, missing, named } of cases) {
      const child = await startServerProcess(
        { ...shared(), PORT: String(await freePort()), CURSOR_SECRET: '', WEBHOOK_SECRET_KEY: '', ...env },
        { args: ['--role', role], readyLine: role === 'api' ? 'API listening' : 'Worker running' },
      );
      if (child.child.exitCode === null) {
        await child.stop();
        t.fail(`--role ${role} started without ${named}:\n${child.output()}`);
        continue;
      }
      t.is(await child.exited, 1, `--role ${role} exits 1`);
      const lines = child.output().trim().split('\n');
      t.is(lines.length, 1, child.output());
      t.regex(lines[0]!, missing);
    }
    t.throws(() => readFileSync(join(dataDir, 'secrets.json')), undefined, 'no secrets were generated in DATA_DIR');
  },
);

test.serial(
  'two API processes and a worker started together on one DATABASE_URL; stopping any one leaves the others working',
  async (t) => {
    const ports = [await freePort(), await freePort()];
    const [api1, api2, worker] = await Promise.all([
      start(apiSettings(ports[0]!), 'api'),
      start(apiSettings(ports[1]!), 'api'),
      start(workerSettings(), 'worker'),
    ]);
    const outputs = [api1!, api2!].map((p) => p.output());
    t.is(
      outputs.filter((o) => o.includes('Sandbox ready')).length,
      1,
      'exactly one API process bootstraps the sandbox and prints its key',
    );
    const key = readFileSync(join(dataDir, 'sandbox-key.txt'), 'utf8').trim();
    const {
      rows: [org],
    } = await pool.query(`SELECT organization_id FROM api_keys LIMIT 1`);
    await addEndpoint(
      kyselyOver(pool),
      {
        policy: { allowLoopback: true },
        secretKey: Buffer.from(WEBHOOK_SECRET_KEY, 'hex'),
        eventTypes: webhookEventTypes,
      },
      { organizationId: org.organization_id, url: receiver.url, events: ['customer.created'] },
    );

    const base = (i: number) => `http://127.0.0.1:${ports[i]}/api/v1`;
    let sequence = 0;
    const create = async (i: number) => {
      sequence += 1;
      const res = await fetch(`${base(i)}/customers`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'idempotency-key': `split-${sequence}`,
        },
        body: JSON.stringify({
          outletCode: `UG${String(7_100_000 + sequence).padStart(7, '0')}`,
          name: 'Split Shop',
          channel: 'retail',
        }),
      });
      return res.status;
    };
    const health = async (i: number) =>
      (await (await fetch(`${base(i)}/health`)).json()) as { workers: { alive: number } };

    t.deepEqual([await create(0), await create(1)], [201, 201]);
    await receiver.waitFor(2, 20_000);
    t.is((await health(1)).workers.alive, 1, '/health of an API process sees the worker');

    await api1!.stop();
    t.is(await create(1), 201, 'the other API process goes on');
    await receiver.waitFor(3, 20_000);

    await worker!.stop();
    await eventually(
      async () => (await health(1)).workers.alive === 0,
      3_000,
      'a stopped worker is not alive (/health reads the heartbeats once a second)',
    );
    t.is(await create(1), 201, 'writes go on without a worker; their events wait');
    await start(workerSettings(), 'worker');
    await receiver.waitFor(4, 20_000);
    await eventually(async () => (await health(1)).workers.alive === 1, 10_000, 'the new worker is seen');
    t.is(new Set(receiver.received.map((r) => r.body.id)).size, 4, 'four events, each delivered');
  },
);
