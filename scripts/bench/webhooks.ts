// The webhook part of `npm run bench`: delivery throughput to a local receiver (events/s) and the latency from
// the commit of a change to its delivery (p50/p99). The service runs as usual (API and workers in one process),
// with WEBHOOK_ALLOW_LOOPBACK so that it may deliver to the receiver on 127.0.0.1.
import { createServer, type Server } from 'node:http';
import { openPool } from '../../server/platform/database/database.js';
import { createApiKey } from '../../server/platform/access/api-keys.js';
import { addEndpoint } from '../../server/platform/webhooks/endpoints.js';
import { webhookEventTypes } from '../../server/composition/modules.js';
import { freePort } from '../lib/free-port.js';

export interface WebhookFigures {
  eventsPerSecond: number;
  events: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencySamples: number;
}

const SECRET_KEY = Buffer.alloc(32, 9);

export async function benchWebhooks(options: {
  databaseUrl: string;
  organizationId: string;
  startService: (env: Record<string, string>) => Promise<{ port: number; stop: () => Promise<void> }>;
  burst: number;
  paced: number;
}): Promise<WebhookFigures> {
  const received = new Map<string, number>(); // customer id -> receipt time
  let deliveries = 0;
  const receiver: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      deliveries += 1;
      const envelope = JSON.parse(Buffer.concat(chunks).toString()) as { data: { object: { id: string } } };
      if (!received.has(envelope.data.object.id)) received.set(envelope.data.object.id, performance.now());
      res.writeHead(204).end();
    });
  });
  const receiverPort = await freePort();
  await new Promise<void>((resolve) => receiver.listen(receiverPort, '127.0.0.1', resolve));
  const { db, close } = openPool(options.databaseUrl);
  const service = await options.startService({
    WEBHOOK_ALLOW_LOOPBACK: 'true',
    WEBHOOK_SECRET_KEY: SECRET_KEY.toString('hex'),
  });
  try {
    // Earlier scenarios' events are not part of this.
    await db
      .updateTable('events')
      .set((eb) => ({ dispatched_at: eb.fn('now') }))
      .where('dispatched_at', 'is', null)
      .execute();
    // Loopback delivery is a sandbox-only setting, so this phase runs a sandbox service with a sandbox key.
    const unlimited = { perMinute: 100_000_000, burst: 10_000_000 };
    const key = await createApiKey(db, {
      organizationId: options.organizationId,
      environment: 'sandbox',
      scopes: ['customers:write'],
      rateLimits: { read: unlimited, write: unlimited },
    });
    const auth = { Authorization: `Bearer ${key.secret}` };
    await addEndpoint(
      db,
      { policy: { allowLoopback: true }, secretKey: SECRET_KEY, eventTypes: webhookEventTypes },
      {
        organizationId: options.organizationId,
        url: `http://127.0.0.1:${receiverPort}/hooks`,
        events: ['customer.updated'],
      },
    );

    // Throughput: a burst of events committed at once, timed until the receiver has them all.
    const rows = await db
      .selectFrom('customers')
      .select('id')
      .where('organization_id', '=', options.organizationId)
      .orderBy('id')
      .limit(options.burst)
      .execute();
    const started = performance.now();
    // One multi-row insert: the whole burst commits at once, as the fan-out would see a busy moment.
    if (rows.length > 0) {
      await db
        .insertInto('events')
        .values(
          rows.map((row) => ({
            organization_id: options.organizationId,
            id: `evt_bench_${row.id}`,
            type: 'customer.updated',
            resource: 'customer',
            record_id: row.id,
          })),
        )
        .execute();
    }
    while (deliveries < rows.length && performance.now() - started < 120_000)
      await new Promise((r) => setTimeout(r, 20));
    const eventsPerSecond = rows.length / ((performance.now() - started) / 1000);

    // Latency: changes made through the API one at a time, from the write request (its commit happens before the
    // response) to the receipt of its event.
    received.clear();
    const latencies: number[] = [];
    for (let i = 0; i < Math.min(options.paced, rows.length); i += 1) {
      const id = rows[i]!.id;
      const sent = performance.now();
      const response = await fetch(`http://127.0.0.1:${service.port}/api/v1/customers/${id}`, {
        method: 'PATCH',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Paced ${i}` }),
      });
      if (!response.ok) throw new Error(`PATCH answered ${response.status}`);
      while (!received.has(id) && performance.now() - sent < 30_000) await new Promise((r) => setTimeout(r, 2));
      if (received.has(id)) latencies.push(received.get(id)! - sent);
    }
    latencies.sort((a, b) => a - b);
    const pick = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
    return {
      eventsPerSecond,
      events: rows.length,
      latencyP50Ms: pick(0.5),
      latencyP99Ms: pick(0.99),
      latencySamples: latencies.length,
    };
  } finally {
    await service.stop();
    await close();
    receiver.close();
  }
}
