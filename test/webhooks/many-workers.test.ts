// Webhook delivery by several real worker processes (node server/main.ts --role worker) on one database: the
// per-endpoint send limit holds across all of them, and a worker killed with -9 mid-send stalls its endpoint only
// for the heartbeat lease (PROCESS_LEASE_SECONDS), not for the job's 60 s expiry. The events are written by SQL (the
// fan-out of each worker turns them into deliveries); their records do not exist, so each is sent as the
// deleted-record object, which is all the receiver needs.
import test from 'ava';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { kyselyOver } from '../../server/platform/database/database.js';
import { addEndpoint } from '../../server/platform/webhooks/endpoints.js';
import { webhookEventTypes } from '../../server/composition/modules.js';
import { newId } from '../../server/platform/ids.js';
import { createCaller } from '../support/callers.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { eventually, sleep } from './receiver.js';
import { TEST_SECRETS, TEST_WEBHOOK_SECRET_KEY } from '../support/secrets.js';

/** The README's number: at most this many sends open to one endpoint across all workers. */
const PER_ENDPOINT = 4;
/**
 * A dead worker's endpoint is sent to again within this of a worker running: the slot lease and the orphaned-job
 * sweep (seconds; the README's measured 3 to 4 s is logged), not pg-boss's 60 s job expiry. The bound sits halfway
 * between the two, so a loaded machine's slower sweep passes and a fall back on the expiry fails; a tighter figure
 * would time the machine, which is the bench's job, not the suite's.
 */
const RECOVERY_BOUND_MS = 30_000;

let database: TestDatabase;
let pool: pg.Pool;
const processes: ServerProcess[] = [];
const servers: Server[] = [];

test.before(async () => {
  database = await createTestDatabase('many_workers');
  pool = new pg.Pool({ connectionString: database.url, max: 4 });
});
test.after.always(async () => {
  await Promise.all(processes.map((p) => p.stop()));
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
  await pool?.end();
  await database?.drop();
});

async function startWorker(): Promise<ServerProcess> {
  const worker = await startServerProcess(
    {
      DATABASE_URL: database.url,
      ENVIRONMENT: 'sandbox',
      SANDBOX_BOOTSTRAP: 'false',
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1,1,1',
      LOG_LEVEL: 'warn',
      ...TEST_SECRETS,
    },
    { args: ['--role', 'worker'], readyLine: 'Worker running', startTimeoutMs: 110_000 },
  );
  processes.push(worker);
  if (!worker.output().includes('Worker running'))
    throw new Error(`the worker did not start; it printed:\n${worker.output()}`);
  return worker;
}

interface SlowReceiver {
  url: string;
  /** Event ids in the order their requests arrived (a duplicate appears twice). */
  eventIds: string[];
  arrivals: number[];
  open: () => number;
  mostOpen: () => number;
}

/** A receiver that answers 200 after `delayMs` and records how many requests it holds open at once. */
async function slowReceiver(delayMs: number): Promise<SlowReceiver> {
  let open = 0;
  let mostOpen = 0;
  const eventIds: string[] = [];
  const arrivals: number[] = [];
  const server = createServer((req, res) => {
    open += 1;
    mostOpen = Math.max(mostOpen, open);
    let closed = false;
    const close = () => {
      if (!closed) {
        closed = true;
        open -= 1;
      }
    };
    res.on('close', close); // answered, or the sender's connection dropped (a killed worker)
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      arrivals.push(Date.now());
      eventIds.push(JSON.parse(Buffer.concat(chunks).toString('utf8')).id);
      setTimeout(() => {
        if (!res.destroyed) res.writeHead(200).end('ok');
      }, delayMs);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    eventIds,
    arrivals,
    open: () => open,
    mostOpen: () => mostOpen,
  };
}

/** An organisation with one endpoint at `url` for customer.created, and `count` such events written at once. */
async function eventsFor(url: string, count: number): Promise<string[]> {
  const caller = await createCaller(pool);
  const db = kyselyOver(pool);
  await addEndpoint(
    db,
    {
      policy: { allowLoopback: true },
      secretKey: Buffer.from(TEST_WEBHOOK_SECRET_KEY, 'hex'),
      eventTypes: webhookEventTypes,
    },
    { organizationId: caller.organizationId, url, events: ['customer.created'] },
  );
  const ids = Array.from({ length: count }, () => newId('evt'));
  await pool.query(
    `INSERT INTO events (organization_id, id, type, resource, record_id)
     SELECT $1, id, 'customer.created', 'customer', 'cus_' || substr(md5(id), 1, 20) FROM unnest($2::text[]) AS id`,
    [caller.organizationId, ids],
  );
  return ids;
}

test.serial(
  'two workers, one receiver answering after 100 ms: never more than 4 sends open to it at once, and every event arrives',
  async (t) => {
    const receiver = await slowReceiver(100);
    await Promise.all([startWorker(), startWorker()]);
    const events = await eventsFor(receiver.url, 80);
    await eventually(async () => new Set(receiver.eventIds).size === events.length, 60_000, 'every event delivered');
    t.deepEqual([...new Set(receiver.eventIds)].sort(), [...events].sort());
    t.log(
      `most sends open at once: ${receiver.mostOpen()} (limit ${PER_ENDPOINT}); ${receiver.eventIds.length} requests for ${events.length} events`,
    );
    t.true(receiver.mostOpen() <= PER_ENDPOINT, `${receiver.mostOpen()} sends were open at once`);
    t.true(receiver.mostOpen() >= 2, 'the workers did send side by side (the limit, not a queue of one, is what held)');
    await eventually(
      async () => (await pool.query('SELECT count(*)::int AS n FROM webhook_send_slots')).rows[0].n === 0,
      10_000,
      'every slot given back',
    );
    const jobs = (await pool.query(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'webhooks.deliver'`)).rows[0]
      .n;
    t.log(
      `${jobs} delivery jobs for ${events.length} deliveries (the rest found every slot taken and were sent again)`,
    );
    await Promise.all(processes.splice(0).map((p) => p.stop()));
  },
);

test.serial(
  `a worker killed with -9 mid-send: a new worker sends to its endpoint within ${RECOVERY_BOUND_MS / 1000} s of running, and no event is lost`,
  async (t) => {
    const receiver = await slowReceiver(1_000);
    const first = await startWorker();
    const events = await eventsFor(receiver.url, 24);
    await eventually(
      async () => receiver.open() >= PER_ENDPOINT,
      30_000,
      'the worker holds every slot of the endpoint',
    );
    first.child.kill('SIGKILL');
    const killedAt = Date.now();
    await first.exited;
    const arrivedBefore = receiver.arrivals.length;
    const held = (await pool.query('SELECT slot, process_id FROM webhook_send_slots ORDER BY slot')).rows;
    t.log(`slots held by the killed worker: ${JSON.stringify(held)}; ${arrivedBefore} sends before`);
    const second = await startWorker();
    const runningAt = Date.now();
    const next = await eventually(
      async () => receiver.arrivals.slice(arrivedBefore).find((at) => at >= runningAt),
      60_000,
      'a send after the restart',
    );
    t.log(
      `the new worker was running ${runningAt - killedAt} ms after the kill; the next send came ${next - runningAt} ms after that`,
    );
    t.true(
      next - runningAt <= RECOVERY_BOUND_MS,
      `the first send after the restart came ${next - runningAt} ms after the worker was running`,
    );
    await eventually(async () => events.every((id) => receiver.eventIds.includes(id)), 60_000, 'every event delivered');
    const pending = async () =>
      (await pool.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status <> 'succeeded'`)).rows[0]
        .n as number;
    await eventually(async () => (await pending()) === 0, 60_000, 'every delivery recorded as succeeded').catch(
      (error) => {
        t.log(second.output());
        throw error;
      },
    );
    const duplicates = receiver.eventIds.length - new Set(receiver.eventIds).size;
    t.log(`${duplicates} events were sent twice (at least once: the killed worker's sends in flight)`);
    t.true(duplicates <= PER_ENDPOINT, 'only the sends in flight at the kill are sent again');
    await second.stop();
    await sleep(0);
  },
);
