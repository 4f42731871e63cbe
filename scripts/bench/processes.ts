// The several-processes part of `npm run bench` (issue 23): the split roles on one database, as the README's
// "Running as several processes" lays them out.
//   - API throughput: POST /customers over the 50 keys with one `--role api` process and a `--role worker`, then with
//     two API processes and the worker (each API process driven by its own autocannon with half the connections).
//   - Webhook delivery: a burst of events, each wanted by several endpoints (one endpoint's sends are limited to 4 at
//     once, so one endpoint alone would measure that limit), delivered by one `--role worker`, then by two; the
//     receiver answers after a few milliseconds, as a real one would. The figure is deliveries/s until the last.
import type { ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import autocannon from 'autocannon';
import { openPool } from '../../server/platform/database/database.js';
import { addEndpoint } from '../../server/platform/webhooks/endpoints.js';
import { webhookEventTypes } from '../../server/composition/modules.js';
import { freePort } from '../lib/free-port.js';

export interface ProcessesFigures {
  /** POST /customers requests/s with 1 and 2 API processes (one worker running). */
  apiPerSecond: [number, number];
  apiFailed: number;
  /** Webhook deliveries/s with 1 and 2 workers. */
  deliveriesPerSecond: [number, number];
  deliveries: number;
  endpoints: number;
  receiverDelayMs: number;
}

const SECRET_KEY = Buffer.alloc(32, 11);
const ENDPOINTS = 8;
const RECEIVER_DELAY_MS = 10;

export async function benchProcesses(options: {
  databaseUrl: string;
  organizationId: string;
  keys: string[];
  seconds: number;
  warmup: number;
  connections: number;
  burst: number;
  /** Starts server/main.ts with these arguments and environment; resolves when it printed readyText. */
  start: (args: string[], env: Record<string, string>, readyText: string) => Promise<ChildProcess>;
  stop: (child: ChildProcess) => Promise<void>;
}): Promise<ProcessesFigures> {
  const { db, close } = openPool(options.databaseUrl);
  const common = {
    DATABASE_URL: options.databaseUrl,
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    CURSOR_SECRET: 'bench-cursor-secret-0123456789',
    WEBHOOK_SECRET_KEY: SECRET_KEY.toString('hex'),
    PUBLIC_BASE_URL: 'http://127.0.0.1',
  };
  // The API processes as in production (the 50 keys are production keys); the workers in sandbox, the only
  // environment that may deliver to the receiver on 127.0.0.1.
  const worker = () =>
    options.start(
      ['--role', 'worker'],
      { ...common, ENVIRONMENT: 'sandbox', SANDBOX_BOOTSTRAP: 'false', WEBHOOK_ALLOW_LOOPBACK: 'true' },
      'Worker running',
    );
  const api = async () => {
    const port = await freePort();
    return {
      port,
      child: await options.start(
        ['--role', 'api'],
        { ...common, ENVIRONMENT: 'production', PORT: String(port) },
        'API listening',
      ),
    };
  };
  const children: ChildProcess[] = [];
  let sequence = 0;
  let turn = 0;
  const drive = async (ports: number[], seconds: number): Promise<{ perSecond: number; failed: number }> => {
    const results = await Promise.all(
      ports.map((port) =>
        autocannon({
          url: `http://127.0.0.1:${port}`,
          connections: Math.max(1, Math.floor(options.connections / ports.length)),
          duration: seconds,
          requests: [
            {
              method: 'POST',
              path: '/api/v1/customers',
              setupRequest: (request: autocannon.Request) => {
                sequence += 1;
                return {
                  ...request,
                  headers: {
                    'content-type': 'application/json',
                    authorization: `Bearer ${options.keys[((turn += 1)) % options.keys.length]}`,
                    'idempotency-key': `bench-procs-${sequence}`,
                  },
                  body: JSON.stringify({
                    outletCode: `UG${8_000_000 + sequence}`,
                    name: `Bench split ${sequence}`,
                    channel: 'retail',
                  }),
                };
              },
            },
          ],
        }),
      ),
    );
    return {
      perSecond: results.reduce((sum, r) => sum + r.requests.average, 0),
      failed: results.reduce((sum, r) => sum + r.non2xx + r.errors, 0),
    };
  };
  let receiver: Server | null = null;
  try {
    // API throughput: 1 then 2 API processes, one worker beside them.
    children.push(await worker());
    const first = await api();
    children.push(first.child);
    // One create first: a setting that makes every request fail (a key of the wrong environment) stops here, with its answer.
    const probe = await fetch(`http://127.0.0.1:${first.port}/api/v1/customers`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${options.keys[0]}`,
        'idempotency-key': 'bench-procs-probe',
      },
      body: JSON.stringify({ outletCode: 'UG7999999', name: 'Bench split probe', channel: 'retail' }),
    });
    if (probe.status !== 201) throw new Error(`POST /customers answered ${probe.status}: ${await probe.text()}`);
    if (options.warmup > 0) await drive([first.port], options.warmup);
    const one = await drive([first.port], options.seconds);
    const second = await api();
    children.push(second.child);
    if (options.warmup > 0) await drive([first.port, second.port], options.warmup);
    const two = await drive([first.port, second.port], options.seconds);
    await Promise.all(children.splice(0).map(options.stop));

    // Webhook delivery: 1 then 2 workers.
    let received = 0;
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received += 1;
        setTimeout(() => res.writeHead(204).end(), RECEIVER_DELAY_MS);
      });
    });
    const receiverPort = await freePort();
    await new Promise<void>((resolve) => receiver!.listen(receiverPort, '127.0.0.1', resolve));
    await db
      .updateTable('events')
      .set((eb) => ({ dispatched_at: eb.fn('now') }))
      .where('dispatched_at', 'is', null)
      .execute(); // earlier parts' events are not part of this
    for (let i = 0; i < ENDPOINTS; i += 1) {
      await addEndpoint(
        db,
        { policy: { allowLoopback: true }, secretKey: SECRET_KEY, eventTypes: webhookEventTypes },
        {
          organizationId: options.organizationId,
          url: `http://127.0.0.1:${receiverPort}/hooks/${i}`,
          events: ['customer.updated'],
        },
      );
    }
    const customers = await db
      .selectFrom('customers')
      .select('id')
      .where('organization_id', '=', options.organizationId)
      .orderBy('id')
      .limit(options.burst)
      .execute();
    const deliver = async (workers: number, round: number): Promise<number> => {
      for (let i = 0; i < workers; i += 1) children.push(await worker());
      received = 0;
      const started = performance.now();
      // The whole burst in one statement: the workers see it all at once.
      await db
        .insertInto('events')
        .values(
          customers.map((row) => ({
            organization_id: options.organizationId,
            id: `evt_bprocs${round}_${row.id}`,
            type: 'customer.updated',
            resource: 'customer',
            record_id: row.id,
          })),
        )
        .execute();
      const expected = customers.length * ENDPOINTS;
      while (received < expected && performance.now() - started < 300_000) await new Promise((r) => setTimeout(r, 20));
      const perSecond = received / ((performance.now() - started) / 1000);
      await Promise.all(children.splice(0).map(options.stop));
      return perSecond;
    };
    const oneWorker = await deliver(1, 1);
    const twoWorkers = await deliver(2, 2);
    return {
      apiPerSecond: [one.perSecond, two.perSecond],
      apiFailed: one.failed + two.failed,
      deliveriesPerSecond: [oneWorker, twoWorkers],
      deliveries: customers.length * ENDPOINTS,
      endpoints: ENDPOINTS,
      receiverDelayMs: RECEIVER_DELAY_MS,
    };
  } finally {
    await Promise.all(children.map(options.stop));
    receiver?.close();
    await close();
  }
}

export function processesReport(f: ProcessesFigures): string[] {
  const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : '-');
  return [
    'several processes on one database (split roles):',
    `  POST /customers (50 keys), 1 API process + 1 worker: ${f.apiPerSecond[0].toFixed(0)} requests/s; 2 API processes + 1 worker: ${f.apiPerSecond[1].toFixed(0)} requests/s (x${ratio(f.apiPerSecond[1], f.apiPerSecond[0])})${f.apiFailed > 0 ? `; ${f.apiFailed} failed: invalid` : ''}`,
    `  webhook delivery (${f.deliveries} deliveries to ${f.endpoints} endpoints, receiver answering after ${f.receiverDelayMs} ms), 1 worker: ${f.deliveriesPerSecond[0].toFixed(0)} deliveries/s; 2 workers: ${f.deliveriesPerSecond[1].toFixed(0)} deliveries/s (x${ratio(f.deliveriesPerSecond[1], f.deliveriesPerSecond[0])})`,
  ];
}
