// Behind a connection pooler: the service as managed PostgreSQL is often reached, through Debian's PgBouncer in
// transaction mode, which hands each transaction whichever server connection is free. The test starts its own
// pgbouncer (an ini and userlist in a temp dir, a free port) in front of the run's PostgreSQL, then the README's
// split layout as compiled processes, an API and a worker started at once, with DATABASE_URL through pgbouncer and
// DATABASE_DIRECT_URL straight to the server. Migrations from two starts at once through the pooler, on an empty
// database; then keyed requests, creates with Idempotency-Key, a DMS push posted by the worker's jobs, a webhook delivery, and a
// key revocation that must reach the API's key cache through its LISTEN. pgbouncer picks its server connections in
// turn (server_round_robin), so anything of a session carried from one transaction to the next lands elsewhere at
// once instead of now and then (docs/decisions/0043-behind-a-transaction-pooler.md). .ci/run installs pgbouncer;
// without it this test fails, it never skips.
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chmodSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { freePort } from '../../scripts/lib/free-port.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { listenToChannel, type ChannelListener } from '../../server/platform/database/notifications.js';
import { applyMigrations, readMigrations } from '../../server/platform/database/migrations.js';
import { migrateSimulators } from '../../server/connectors/simulators/database.js';
import { inTransaction } from '../../server/platform/database/transaction.js';
import { setConnection, SIMULATOR_BASE_URL } from '../../server/connectors/connections.js';
import { addEndpoint } from '../../server/platform/webhooks/endpoints.js';
import { webhookEventTypes } from '../../server/composition/modules.js';
import { addConnection } from '../../server/modules/dms/connections.js';
import { operatorActor } from '../../server/platform/access/actor.js';
import { actingOrganization, getOrganization } from '../../server/platform/access/organizations.js';
import { API_BASE_PATH } from '../../server/platform/spec.js';
import { ConfigError, loadConfig } from '../../server/platform/config.js';
import { ALL_SCOPES, createCaller, type TestCaller } from '../support/callers.js';
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from '../support/database.js';
import { dmsSetUp, masterData, saleInvoice, stockDay } from '../support/dms.js';
import { TEST_SECRETS, TEST_WEBHOOK_SECRET_KEY } from '../support/secrets.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { eventually, startReceiver, verifySignature, type Receiver } from '../webhooks/receiver.js';

const PGBOUNCER_MISSING =
  'PgBouncer is not installed (no `pgbouncer` on PATH or in /usr/sbin). This test runs the service behind it: ' +
  "install Debian's package (`apt-get install --no-install-recommends pgbouncer`, as .ci/run does).";

interface PgBouncer {
  port: number;
  /** The URL of `database` through pgbouncer, with the server's user and password. */
  url(database: string): string;
  /** A command of pgbouncer's admin console (SHOW CLIENTS, SHOW STATS...), its rows. */
  show(command: string): Promise<Record<string, unknown>[]>;
  output(): string;
  stop(): Promise<void>;
}

function findPgBouncer(): string | null {
  for (const directory of [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin']) {
    if (!directory) continue;
    try {
      accessSync(join(directory, 'pgbouncer'), constants.X_OK);
      return join(directory, 'pgbouncer');
    } catch {
      // not here
    }
  }
  return null;
}

/** pgbouncer in transaction mode on a free port, in front of `server` (the run's PostgreSQL), for any of its databases. */
async function startPgBouncer(server: URL): Promise<PgBouncer> {
  const binary = findPgBouncer();
  if (!binary) throw new Error(PGBOUNCER_MISSING);
  const dir = mkdtempSync(join(tmpdir(), 'erp-pgbouncer-'));
  chmodSync(dir, 0o755); // pgbouncer refuses to run as root: as root it runs as nobody (-u), which must read these files
  const port = await freePort();
  const user = decodeURIComponent(server.username);
  const password = decodeURIComponent(server.password);
  writeFileSync(join(dir, 'userlist.txt'), `"${user}" "${password}"\n`, { mode: 0o644 });
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = scram-sha-256',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      `admin_users = ${user}`,
      'pool_mode = transaction',
      // Each transaction on the next server connection in turn (the default reuses the last one, which hides a leak
      // of session state until the load is high enough to need a second connection).
      'server_round_robin = 1',
      // Fewer server connections than the processes' clients (pools of 20 and 10, pg-boss's 10, each): they share.
      'default_pool_size = 12',
      'max_client_conn = 400',
      // The defaults of Debian's package otherwise: no ignore_startup_parameters, max_prepared_statements unknown to 1.18.
    ].join('\n') + '\n',
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0 ? ['-u', 'nobody'] : [];
  const child: ChildProcess = spawn(binary, [...asRoot, join(dir, 'pgbouncer.ini')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk;
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = (name: string) => Object.assign(new URL(server), { port: String(port), pathname: `/${name}` }).toString();
  for (const deadline = Date.now() + 10_000; ; ) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited at start:\n${output}`);
    if (output.includes('process up')) break;
    if (Date.now() > deadline) throw new Error(`pgbouncer did not start within 10 s:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port,
    url,
    async show(command) {
      // The admin console speaks the simple query protocol only: a query without parameters.
      const client = new pg.Client({ connectionString: url('pgbouncer') });
      await client.connect();
      try {
        return (await client.query(command)).rows as Record<string, unknown>[];
      } finally {
        await client.end();
      }
    },
    output: () => output,
    async stop() {
      if (child.exitCode === null) child.kill('SIGINT'); // pgbouncer's safe shutdown: waits for its clients' transactions
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const dataDir = mkdtempSync(join(tmpdir(), 'erp-pgbouncer-service-'));
let database: TestDatabase;
let bouncer: PgBouncer;
/** Straight to the server (not through pgbouncer): the test's own look at the database, as the operator CLI's. */
let direct: pg.Pool;
let receiver: Receiver;
let api: ServerProcess;
let worker: ServerProcess;
let baseUrl: string;
const started: ServerProcess[] = [];

test.before(async () => {
  // Migrated, with pg-boss's schema (the first test migrates an empty one through the pooler): the two processes
  // start at once, and migrate the simulators' schema through it.
  database = await createTestDatabase('pgbouncer');
  bouncer = await startPgBouncer(new URL(process.env.TEST_POSTGRES_URL!));
  direct = new pg.Pool({ connectionString: database.url, max: 4 });
  receiver = await startReceiver();
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  const env = {
    DATABASE_URL: bouncer.url(database.name),
    DATABASE_DIRECT_URL: database.url,
    DATA_DIR: dataDir,
    SANDBOX_BOOTSTRAP: 'false',
    SIMULATORS: 'true',
    WEBHOOK_ALLOW_LOOPBACK: 'true',
    WEBHOOK_RETRY_SCHEDULE: '1,1,1',
    CONNECTOR_TIMEOUT_MS: '5000',
    LOG_LEVEL: 'warn',
    ...TEST_SECRETS,
  };
  const start = async (role: 'api' | 'worker', extra: Record<string, string>) => {
    const readyLine = role === 'api' ? 'API listening' : 'Worker running';
    const child = await startServerProcess(
      { ...env, ...extra },
      { args: ['--role', role], readyLine, startTimeoutMs: 110_000 },
    );
    started.push(child);
    if (child.child.exitCode !== null || !child.output().includes(readyLine))
      throw new Error(
        `--role ${role} did not start behind pgbouncer:\n${child.output()}\npgbouncer:\n${bouncer.output()}`,
      );
    return child;
  };
  [api, worker] = await Promise.all([
    start('api', { PORT: String(port), PUBLIC_BASE_URL: baseUrl }),
    start('worker', {}),
  ]);
});

test.after.always(async () => {
  await Promise.all(started.map((child) => child.stop()));
  await receiver?.close();
  await direct?.end();
  await bouncer?.stop();
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

const request = async (
  method: string,
  path: string,
  init: { headers?: Record<string, string>; json?: unknown } = {},
) => {
  const response = await fetch(baseUrl + API_BASE_PATH + path, {
    method,
    headers: { ...init.headers, ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
  });
  const text = await response.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
};
const db = () => kyselyOver(direct);
let sequence = 0;
const outletCode = () => `UG${String(7_000_000 + ++sequence).padStart(7, '0')}`;

/**
 * Advisory locks held by a server connection of the database that is between transactions: only a session-level lock
 * can be (a transaction-level one ends with its transaction), and behind a pooler that connection is any client's.
 */
const IDLE_ADVISORY_LOCKS =
  "SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND a.datname = $1 AND a.state = 'idle'";

test('DATABASE_DIRECT_URL is a postgres URL beside DATABASE_URL: refused alone or malformed, and defaults to DATABASE_URL', (t) => {
  const alone = t.throws(() => loadConfig({ DATABASE_DIRECT_URL: 'postgres://db/erp' }), {
    instanceOf: ConfigError,
  }) as ConfigError;
  t.regex(alone.message, /DATABASE_DIRECT_URL needs DATABASE_URL/);
  const malformed = t.throws(
    () => loadConfig({ DATABASE_URL: 'postgres://pooler/erp', DATABASE_DIRECT_URL: 'db:5432' }),
    { instanceOf: ConfigError },
  ) as ConfigError;
  t.regex(malformed.message, /DATABASE_DIRECT_URL="db:5432" is invalid; expected a postgres:\/\//);
  t.is(loadConfig({ DATABASE_URL: 'postgres://pooler/erp' }).databaseDirectUrl, null);
  t.is(
    loadConfig({ DATABASE_URL: 'postgres://pooler/erp', DATABASE_DIRECT_URL: 'postgres://db/erp' }).databaseDirectUrl,
    'postgres://db/erp',
  );
});

test.serial(
  'two starts at once migrate an empty database through the pooler: each migration once, no advisory lock left held',
  async (t) => {
    const empty = await createEmptyDatabase('pgbouncer_migrate');
    const pools = [0, 1].map(() => new pg.Pool({ connectionString: bouncer.url(empty.name), max: 3 }));
    try {
      const [a, b] = await Promise.all(pools.map((pool) => applyMigrations(pool)));
      t.deepEqual(
        [...a!, ...b!].sort(),
        readMigrations().map((migration) => migration.name),
      );
      const [c, d] = await Promise.all(pools.map((pool) => migrateSimulators(kyselyOver(pool))));
      t.true(c!.length + d!.length > 0);
      t.is(new Set([...c!, ...d!]).size, c!.length + d!.length, 'each simulators migration applied by one of the two');
      // A session-level lock taken through transaction pooling stays on a server connection after its "unlock" ran on
      // another (and the second start's migrations run beside the first's, into duplicate keys).
      const { rows } = await direct.query<{ n: number }>(IDLE_ADVISORY_LOCKS, [empty.name]);
      t.is(rows[0]!.n, 0, 'no advisory lock is held once the migrations are done');
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
      await empty.drop();
    }
  },
);

test.serial(
  "the service's pools are pgbouncer's clients, and its processes hold no advisory lock between transactions",
  async (t) => {
    const { rows: simulators } = await direct.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM simulators.migrations',
    );
    t.true(simulators[0]!.n > 0, 'the simulators (in both processes) migrated their schema through the pooler');
    const { rows: locks } = await direct.query<{ n: number }>(IDLE_ADVISORY_LOCKS, [database.name]);
    t.is(locks[0]!.n, 0, 'no server connection holds an advisory lock between transactions');
    // A pool lets an idle connection go after 10 s: a keyed request first, so that the API's pool has one open now
    // however long the steps before took on a loaded machine.
    const caller = await createCaller(direct, { scopes: ALL_SCOPES });
    t.is((await request('GET', '/customers?limit=1', { headers: caller.auth })).status, 200);
    const clientNames = async () =>
      new Set((await bouncer.show('SHOW CLIENTS')).map((client) => client.application_name));
    const names = await clientNames();
    for (const name of ['erp-api', 'erp-api-bookkeeping'])
      t.true(names.has(name), `${name} connects through pgbouncer (clients: ${[...names].join(', ')})`);
    // The job system's pool (erp-jobs) is used by the idle worker only for its safety net and its cron poll, each every
    // 30 s (decision 0054), and lets its connection go after 10 s idle: so it is looked for until it shows, at most
    // 45 s, rather than at one instant.
    let jobs = names;
    for (const deadline = Date.now() + 45_000; !jobs.has('erp-jobs') && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      jobs = await clientNames();
    }
    t.true(jobs.has('erp-jobs'), `erp-jobs connects through pgbouncer (clients: ${[...jobs].join(', ')})`);
  },
);

test.serial('keyed requests and creates with Idempotency-Key: many at once, each create made once', async (t) => {
  // A budget above the 32 writes and 40 reads below: the defaults' write burst (30) is not what is tested here.
  const caller = await createCaller(direct, {
    scopes: ALL_SCOPES,
    rateLimits: { read: { perMinute: 6_000, burst: 200 }, write: { perMinute: 6_000, burst: 200 } },
  });
  const reads = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      request('GET', i % 2 ? '/me' : '/customers?limit=5', { headers: caller.auth }),
    ),
  );
  t.deepEqual([...new Set(reads.map((res) => res.status))], [200], reads.find((res) => res.status !== 200)?.text);

  const creates = Array.from({ length: 8 }, (_, i) => ({
    key: `pgb-create-${i}`,
    json: { outletCode: outletCode(), name: `Pooled Shop ${i}`, channel: 'retail' },
  }));
  const send = (create: (typeof creates)[number]) =>
    request('POST', '/customers', { headers: { ...caller.auth, 'Idempotency-Key': create.key }, json: create.json });
  // Each create sent three times at once: one makes the customer, a copy that arrives while it runs is answered 409
  // idempotency_in_progress by the key's transaction-level try-lock (docs/decisions/0008), and a retry after it
  // replays the same answer.
  const answers = await Promise.all(creates.flatMap((create) => [0, 1, 2].map(() => send(create))));
  for (const [i, create] of creates.entries()) {
    const mine = answers.slice(i * 3, i * 3 + 3);
    t.is(
      mine.filter((res) => res.status === 201 && res.headers.get('idempotent-replayed') !== 'true').length,
      1,
      mine.map((res) => res.text).join('\n'),
    );
    t.true(
      mine.every((res) => res.status === 201 || (res.status === 409 && res.body.code === 'idempotency_in_progress')),
      mine.map((res) => res.text).join('\n'),
    );
    const retried = await send(create);
    t.is(retried.status, 201);
    t.is(retried.headers.get('idempotent-replayed'), 'true');
    t.deepEqual(
      new Set([...mine.filter((res) => res.status === 201), retried].map((res) => res.body.id)).size,
      1,
      `${create.key}: one customer`,
    );
  }
  const { rows } = await direct.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM customers WHERE organization_id = $1',
    [caller.organizationId],
  );
  t.is(rows[0]!.n, creates.length);
  const list = await request('GET', '/customers?limit=100', { headers: caller.auth });
  t.is(list.status, 200);
  t.is(list.body.data.length, creates.length);
});

test.serial(
  "a DMS push is answered at once and posted by the worker's jobs, to the accounting simulator too",
  async (t) => {
    const caller = await createCaller(direct, { scopes: ALL_SCOPES, modules: ['delivery', 'field-sales'] });
    const organization = actingOrganization(await getOrganization(db(), caller.organizationId));
    await inTransaction(db(), async (tx) => {
      await dmsSetUp(tx, operatorActor(organization, 'test'));
      await addConnection(tx, caller.organizationId, 'canonical', { distributorCode: 'DIST001', synchronous: false });
      await setConnection(
        tx,
        caller.organizationId,
        'accounting',
        { baseUrl: SIMULATOR_BASE_URL, account: '990001' },
        null,
      );
    });
    const documents = [
      masterData.soda,
      masterData.prices,
      masterData.salesman(),
      masterData.customer('UG0000001'),
      ...stockDay(20),
      saleInvoice('CSR01000001', 'UG0000001', 2),
    ];
    const res = await request('POST', '/dms/canonical/documents', {
      headers: { ...caller.auth, 'Idempotency-Key': 'pgb-dms-1' },
      json: { documents },
    });
    t.is(res.status, 202, res.text);
    t.deepEqual(
      res.body.flags.map((flag: any) => flag.state),
      documents.map(() => 'received'),
    );
    const posted = await eventually(
      async () => {
        const page = await request('GET', '/dms/canonical/flags?limit=100', { headers: caller.auth });
        const states = new Map<string, string>(page.body.data.map((flag: any) => [flag.documentId, flag.state]));
        return res.body.flags.every((flag: any) => states.get(flag.documentId) === 'posted') ? states : null;
      },
      60_000,
      'every document posted',
    );
    t.is(posted.size, documents.length);
    const invoice = await request('GET', '/invoices?limit=10', { headers: caller.auth });
    t.is(invoice.status, 200);
    t.is(invoice.body.data.length, 1, 'the sale invoice was posted as an invoice');
  },
);

test.serial('a webhook is delivered, signed, by the worker', async (t) => {
  const caller = await createCaller(direct, { scopes: ALL_SCOPES });
  const endpoint = await addEndpoint(
    db(),
    {
      policy: { allowLoopback: true },
      secretKey: Buffer.from(TEST_WEBHOOK_SECRET_KEY, 'hex'),
      eventTypes: webhookEventTypes,
    },
    {
      organizationId: caller.organizationId,
      url: receiver.url,
      events: ['customer.created'],
    },
  );
  const created = await request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': 'pgb-hook-1' },
    json: { outletCode: outletCode(), name: 'Hooked Shop', channel: 'retail' },
  });
  t.is(created.status, 201, created.text);
  const [delivery] = await receiver.waitFor(1, 30_000);
  t.like(delivery!.body, { type: 'customer.created', organizationId: caller.organizationId });
  t.is(delivery!.body.data.object.id, created.body.id);
  t.true(verifySignature(delivery!.headers['service-signature'] as string, delivery!.raw, endpoint.secret).valid);
  await eventually(
    async () =>
      (
        await direct.query("SELECT 1 FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'succeeded'", [
          endpoint.id,
        ])
      ).rowCount === 1,
    10_000,
    'the delivery recorded as succeeded',
  );
});

test.serial(
  'a key revoked from outside the API stops working at once: the key cache LISTENs on the direct connection',
  async (t) => {
    const caller: TestCaller = await createCaller(direct, { scopes: ALL_SCOPES });
    for (let i = 0; i < 3; i += 1) t.is((await request('GET', '/me', { headers: caller.auth })).status, 200);
    // The API's listener is a session of its own on the server, not a client of pgbouncer.
    const names = (await bouncer.show('SHOW CLIENTS')).map((client) => client.application_name);
    t.false(names.includes('erp-api-listener'), 'the LISTEN does not go through pgbouncer');
    const { rows: listening } = await direct.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'erp-api-listener' AND query = 'LISTEN access_changed'",
      [database.name],
    );
    t.is(listening[0]!.n, 1, 'one API process, one LISTEN, straight on the server');

    // As another process (the operator CLI) would: the trigger NOTIFYs on commit.
    await direct.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [caller.keyId]);
    const refused = await eventually(
      async () => {
        const res = await request('GET', '/me', { headers: caller.auth });
        return res.status === 401 ? res : null;
      },
      3_000,
      'the revoked key refused',
    );
    t.is(refused.body.code, 'unauthorized');
  },
);

test.serial('nothing in either process logged an error, and pgbouncer saw no protocol error', (t) => {
  const errors = [api, worker].flatMap((child) =>
    child
      .output()
      .split('\n')
      .filter((line) => /"level":(50|60)/.test(line)),
  );
  t.deepEqual(errors, []);
  t.notRegex(
    bouncer.output(),
    /prepared statement|unsupported startup parameter: options=-c synchronous_commit|ERROR/i,
  );
});

test.serial(
  'why: through pgbouncer a LISTEN hears nothing, a session lock stays on a pooled server connection, and a session setting is refused',
  async (t) => {
    const logger = pino({ level: 'silent' });
    const heard = { direct: [] as string[], pooled: [] as string[] };
    const ready = { direct: false, pooled: false };
    const listeners: ChannelListener[] = (['direct', 'pooled'] as const).map((route) =>
      listenToChannel(
        route === 'direct' ? database.url : bouncer.url(database.name),
        'pgbouncer_probe',
        {
          onNotification: (payload) => heard[route].push(payload),
          onListening: () => {
            ready[route] = true;
          },
          onLost: () => {
            ready[route] = false;
          },
        },
        logger,
      ),
    );
    try {
      await eventually(async () => ready.direct && ready.pooled, 5_000, 'both LISTENs in place');
      for (let i = 0; i < 5; i += 1) await direct.query("SELECT pg_notify('pgbouncer_probe', $1)", [String(i)]);
      await eventually(async () => heard.direct.length === 5, 5_000, 'the direct listener heard the five');
      t.deepEqual(heard.direct, ['0', '1', '2', '3', '4']);
      t.deepEqual(heard.pooled, [], 'the LISTEN through pgbouncer said it was listening, and heard nothing');
    } finally {
      await Promise.all(listeners.map((listener) => listener.close()));
    }
    // A session-level advisory lock taken through the pooler: its server connection goes back to the pool holding it,
    // between transactions, where any client's next transaction may run (and the unlock most likely runs elsewhere).
    const client = new pg.Client({ connectionString: bouncer.url(database.name) });
    await client.connect();
    try {
      await client.query('SELECT pg_advisory_lock(7245999)');
      const { rows } = await direct.query<{ n: number }>(IDLE_ADVISORY_LOCKS, [database.name]);
      t.is(rows[0]!.n, 1, 'the lock is held between transactions, where the migration checks above look for it');
      const {
        rows: [unlock],
      } = await client.query<{ released: boolean }>('SELECT pg_advisory_unlock(7245999) AS released');
      t.log(
        `the unlock through pgbouncer ${unlock!.released ? 'found the lock' : 'ran on another server connection and released nothing'}`,
      );
    } finally {
      await client.end();
      await direct.query(
        "SELECT pg_terminate_backend(l.pid) FROM pg_locks l WHERE l.locktype = 'advisory' AND l.objid = 7245999",
      );
    }
    const session = new pg.Client({
      connectionString: bouncer.url(database.name),
      options: '-c synchronous_commit=off',
    });
    const refused = await session.connect().then(
      () => null,
      (error: Error) => error,
    );
    await session.end().catch(() => {});
    t.regex(refused?.message ?? 'connected', /unsupported startup parameter/);
  },
);
