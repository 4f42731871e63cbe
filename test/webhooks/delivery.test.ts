// Webhook delivery end to end: the real service (role all, with its webhooks.deliver jobs) against real HTTP receivers
// on 127.0.0.1. WEBHOOK_ALLOW_LOOPBACK lets it reach them; WEBHOOK_RETRY_SCHEDULE=1,1,1 shortens the retries
// through configuration (four attempts, a second apart), not through code.
import test from 'ava';
import {
  addEndpoint,
  resendDelivery,
  testEndpoint,
  type EndpointSettings,
} from '../../server/platform/webhooks/endpoints.js';
import { attemptDelivery } from '../../server/platform/webhooks/attempt.js';
import { DELIVERY_QUEUE, deliveryEnqueuer, withTestEvent } from '../../server/platform/webhooks/deliver.js';
import { DELIVERY_TIMEOUT_MS } from '../../server/platform/webhooks/send.js';
import { webhookEventTypes, webhookObjects } from '../../server/composition/modules.js';
import { newId } from '../../server/platform/ids.js';
import { createCaller, type TestCaller } from '../support/callers.js';
import { useTestService } from '../support/service.js';
import { eventually, sleep, startReceiver, verifySignature, type Receiver } from './receiver.js';
import { kyselyOver } from '../../server/platform/database/database.js';

const api = useTestService(test, 'webhook_delivery', {
  env: { WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_RETRY_SCHEDULE: '1,1,1' },
});
const pool = () => api().service.database.pool;
const enqueue = () => deliveryEnqueuer(api().service.jobs.sendMany);
const settings = (): EndpointSettings => ({
  policy: { allowLoopback: true },
  secretKey: api().config.webhookSecretKey,
  eventTypes: webhookEventTypes,
});
const receivers: Receiver[] = [];
test.after.always(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

let sequence = 0;
const outletCode = () => `UG${String(4_000_000 + ++sequence).padStart(7, '0')}`;
const createCustomer = async (caller: TestCaller, extra: Record<string, unknown> = {}) => {
  const res = await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': `wh-${++sequence}` },
    json: { outletCode: outletCode(), name: 'Webhook Shop', channel: 'retail', ...extra },
  });
  if (res.status !== 201) throw new Error(`customer not created: ${res.status} ${res.text}`);
  return res.body as Record<string, any>;
};
async function receiver(answer?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const started = await startReceiver(answer);
  receivers.push(started);
  return started;
}
const deliveriesOf = async (endpointId: string) =>
  (await pool().query('SELECT * FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY created_at, id', [endpointId]))
    .rows;

test('a delivery is signed so that an independent HMAC verifier accepts it, and carries the envelope with the record as GET returns it without personal fields', async (t) => {
  const caller = await createCaller(pool());
  const hook = await receiver();
  const endpoint = await addEndpoint(kyselyOver(pool()), settings(), {
    organizationId: caller.organizationId,
    url: hook.url,
    events: ['customer.created'],
  });
  const customer = await createCustomer(caller, {
    phone: '+256 772 123456',
    taxId: '1000234567',
    contact: { name: 'Grace', phone: '+256 772 000000', email: 'g@example.com' },
  });

  const [request] = await hook.waitFor(1);
  const header = request!.headers['service-signature'] as string;
  t.regex(header, /^t=\d+,v1=[0-9a-f]{64}$/);
  t.true(verifySignature(header, request!.raw, endpoint.secret).valid);
  t.false(verifySignature(header, request!.raw + ' ', endpoint.secret).valid, 'a changed body does not verify');
  t.false(verifySignature(header, request!.raw, 'whsec_other').valid, 'another secret does not verify');
  t.is(request!.headers['content-type'], 'application/json');

  const event = (
    await pool().query("SELECT id, created_at FROM events WHERE record_id = $1 AND type = 'customer.created'", [
      customer.id,
    ])
  ).rows[0];
  const envelope = request!.body;
  t.deepEqual(Object.keys(envelope), ['id', 'type', 'createdAt', 'apiVersion', 'organizationId', 'data']);
  t.like(envelope, {
    id: event.id,
    type: 'customer.created',
    createdAt: event.created_at.toISOString(),
    apiVersion: 'v1',
    organizationId: caller.organizationId,
  });
  t.regex(envelope.id, /^evt_/);
  const reader = await createCaller(pool(), { organizationId: caller.organizationId, scopes: ['customers:read'] });
  const read = await api().request('GET', `/customers/${customer.id}`, { headers: reader.auth });
  t.deepEqual(envelope.data.object, read.body);
  for (const field of ['phone', 'taxId', 'location', 'contact'])
    t.false(field in envelope.data.object, `${field} is personal`);

  await eventually(
    async () => (await deliveriesOf(endpoint.id))[0]?.status === 'succeeded',
    5000,
    'the delivery is recorded',
  );
  const [delivery] = await deliveriesOf(endpoint.id);
  t.like(delivery, {
    event_id: event.id,
    status: 'succeeded',
    attempts: 1,
    last_response_code: 200,
    next_attempt_at: null,
  });

  // A resend is a duplicate delivery: the same event id, signed again.
  await resendDelivery(kyselyOver(pool()), enqueue(), delivery.id);
  const second = (await hook.waitFor(2))[1]!;
  t.is(second.body.id, envelope.id);
  t.true(verifySignature(second.headers['service-signature'] as string, second.raw, endpoint.secret).valid);
  t.false(JSON.stringify(api().logs).includes(endpoint.secret), 'the secret never reaches the logs');
});

test('a receiver that fails three times then recovers gets the event: four attempts, all with the same event id', async (t) => {
  const caller = await createCaller(pool());
  const hook = await receiver((index) => ({ status: index < 3 ? 503 : 204 }));
  const endpoint = await addEndpoint(kyselyOver(pool()), settings(), {
    organizationId: caller.organizationId,
    url: hook.url,
    events: ['*'],
  });
  await createCustomer(caller);
  const requests = await hook.waitFor(4, 20_000);
  t.is(new Set(requests.map((r) => r.body.id)).size, 1);
  for (let i = 1; i < 4; i++)
    t.true(requests[i]!.at - requests[i - 1]!.at >= 900, 'the retries follow the configured schedule (1 s)');
  const delivery = await eventually(
    async () => (await deliveriesOf(endpoint.id)).find((d) => d.status === 'succeeded'),
    5000,
    'success is recorded',
  );
  t.like(delivery, { attempts: 4, last_response_code: 204 });
  await sleep(1500);
  t.is(hook.received.length, 4, 'nothing is sent after the success');
});

test('a record deleted before the event is sent is the deleted-record object', async (t) => {
  const caller = await createCaller(pool());
  const customer = await createCustomer(caller);
  const hook = await receiver();
  await addEndpoint(kyselyOver(pool()), settings(), {
    organizationId: caller.organizationId,
    url: hook.url,
    events: ['customer.updated'],
  });
  const client = await pool().connect();
  try {
    await client.query('BEGIN');
    await client.query('DELETE FROM customers WHERE organization_id = $1 AND id = $2', [
      caller.organizationId,
      customer.id,
    ]);
    await client.query(
      "INSERT INTO events (organization_id, id, type, resource, record_id) VALUES ($1, $2, 'customer.updated', 'customer', $3)",
      [caller.organizationId, newId('evt'), customer.id],
    );
    await client.query('COMMIT');
  } finally {
    client.release();
  }
  const [request] = await hook.waitFor(1);
  const object = request!.body.data.object;
  t.deepEqual(Object.keys(object).sort(), ['deleted', 'deletedAt', 'id', 'updatedAt']);
  t.like(object, { id: customer.id, deleted: true });
  t.true(Date.parse(object.deletedAt) >= Date.parse(customer.updatedAt));
});

test('a record over 256 KB is the truncated-record object: fetch, a summary with strings cut at 1 KB and an ellipsis, summaryTruncated', async (t) => {
  const caller = await createCaller(pool());
  const customer = await createCustomer(caller, { address: { line1: 'Plot 5', city: 'Kampala', country: 'UG' } });
  const hook = await receiver();
  await addEndpoint(kyselyOver(pool()), settings(), {
    organizationId: caller.organizationId,
    url: hook.url,
    events: ['customer.updated'],
  });
  const client = await pool().connect();
  try {
    // Bigger than any API write allows (name is at most 200 characters), so written by SQL: the engine's limit is what is under test.
    await client.query('BEGIN');
    await client.query(
      "UPDATE customers SET name = repeat('é', 200000), updated_at = now() WHERE organization_id = $1 AND id = $2",
      [caller.organizationId, customer.id],
    );
    await client.query(
      "INSERT INTO events (organization_id, id, type, resource, record_id) VALUES ($1, $2, 'customer.updated', 'customer', $3)",
      [caller.organizationId, newId('evt'), customer.id],
    );
    await client.query('COMMIT');
  } finally {
    client.release();
  }
  const [request] = await hook.waitFor(1);
  t.true(request!.raw.length < 16 * 1024);
  const object = request!.body.data.object;
  t.like(object, {
    id: customer.id,
    truncated: true,
    fetch: `/api/v1/customers/${customer.id}`,
    summaryTruncated: true,
  });
  t.is(typeof object.reason, 'string');
  t.regex(object.updatedAt, /^\d{4}-/);
  t.true(object.summary.name.endsWith('\u2026'));
  t.true(Buffer.byteLength(object.summary.name, 'utf8') <= 1024);
  t.true(object.summary.name.startsWith('éééé'));
  t.like(object.summary, {
    id: customer.id,
    outletCode: customer.outletCode,
    channel: 'retail',
    address: { line1: 'Plot 5', city: 'Kampala' },
  });
});

test('webhook.test goes to the one endpoint asked, and its object is the endpoint without its secret', async (t) => {
  const caller = await createCaller(pool());
  const [asked, other] = [await receiver(), await receiver()];
  const endpoint = await addEndpoint(kyselyOver(pool()), settings(), {
    organizationId: caller.organizationId,
    url: asked.url,
    events: ['*'],
  });
  await addEndpoint(kyselyOver(pool()), settings(), {
    organizationId: caller.organizationId,
    url: other.url,
    events: ['*'],
  });
  const { eventId } = await testEndpoint(kyselyOver(pool()), enqueue(), endpoint.id);
  const [request] = await asked.waitFor(1);
  t.like(request!.body, {
    id: eventId,
    type: 'webhook.test',
    organizationId: caller.organizationId,
    data: { object: { id: endpoint.id, url: asked.url, enabled: true } },
  });
  t.false(request!.raw.includes('whsec_'));
  t.false(request!.raw.toLowerCase().includes('secret_ciphertext'));
  await sleep(1200);
  t.is(other.received.length, 0);
});

test('the 20th consecutive failed event turns the endpoint off with a reason and notifies the administrators; later events are not queued', async (t) => {
  const caller = await createCaller(pool());
  const hook = await receiver(() => ({ status: 500 }));
  const endpoint = await addEndpoint(kyselyOver(pool()), settings(), {
    organizationId: caller.organizationId,
    url: hook.url,
    events: ['customer.created'],
  });
  await Promise.all(Array.from({ length: 20 }, () => createCustomer(caller)));
  const row = await eventually(
    async () => {
      const { rows } = await pool().query('SELECT * FROM webhook_endpoints WHERE id = $1', [endpoint.id]);
      return rows[0].enabled ? null : rows[0];
    },
    40_000,
    'the endpoint is disabled',
  );
  t.is(row.consecutive_failures, 20);
  t.regex(row.disabled_reason, /20 consecutive events failed/);
  const deliveries = await deliveriesOf(endpoint.id);
  t.is(deliveries.length, 20);
  t.true(deliveries.every((d) => d.status === 'failed' && d.attempts === 4 && d.last_response_code === 500));
  const { rows: notes } = await pool().query('SELECT * FROM notifications WHERE organization_id = $1', [
    caller.organizationId,
  ]);
  t.is(notes.length, 1);
  t.is(notes[0].kind, 'webhook_endpoint.disabled');
  t.true(notes[0].message.includes(endpoint.id));
  t.is(hook.received.length, 80);
  const customer = await createCustomer(caller);
  t.truthy(customer.id, 'a failed delivery never undoes the change: writes go on');
  await sleep(1200);
  t.is((await deliveriesOf(endpoint.id)).length, 20, 'no delivery is queued for a disabled endpoint');
});

test('a slow endpoint does not delay deliveries to another endpoint', async (t) => {
  const caller = await createCaller(pool());
  // The slow endpoint never answers: each send to it ends only when the service gives up on it (DELIVERY_TIMEOUT_MS).
  const slow = await receiver(() => ({ status: 200, delayMs: 60_000 }));
  const fast = await receiver();
  await addEndpoint(kyselyOver(pool()), settings(), {
    organizationId: caller.organizationId,
    url: slow.url,
    events: ['customer.created'],
  });
  await addEndpoint(kyselyOver(pool()), settings(), {
    organizationId: caller.organizationId,
    url: fast.url,
    events: ['customer.created'],
  });
  await Promise.all(Array.from({ length: 8 }, () => createCustomer(caller)));
  await fast.waitFor(8, 30_000);
  t.true(slow.received.length >= 1, 'the slow endpoint is being sent to');
  // Measured against the slow endpoint's first send, not a wall-clock budget (which a loaded machine breaks): the
  // fast endpoint had every event while that send was still open, so none of its sends waited behind it.
  const lastFast = Math.max(...fast.received.map((request) => request.at));
  t.true(
    lastFast < slow.received[0]!.at + DELIVERY_TIMEOUT_MS,
    `the fast endpoint's last event came ${lastFast - slow.received[0]!.at} ms after the slow endpoint's first send`,
  );
  await slow.close(); // its attempts fail and go on by the schedule, on their own
});

test('a destination refused at send time is never contacted: the attempt fails with the reason in the log', async (t) => {
  const caller = await createCaller(pool());
  const endpoint = await addEndpoint(kyselyOver(pool()), settings(), {
    organizationId: caller.organizationId,
    url: 'http://127.0.0.1:9/hook',
    events: ['customer.created'],
  });
  // The URL changes after the add (as a DNS answer would): now a link-local metadata address.
  await pool().query("UPDATE webhook_endpoints SET url = 'http://169.254.169.254/latest' WHERE id = $1", [endpoint.id]);
  await createCustomer(caller);
  const delivery = await eventually(
    async () => (await deliveriesOf(endpoint.id)).find((d) => d.attempts >= 1 && d.last_error),
    5000,
    'an attempt is recorded',
  );
  t.regex(delivery.last_error, /destination refused: .*169\.254\.169\.254.*linkLocal/);
  t.is(delivery.last_response_code, null);
});

test('a name that resolves to loopback is refused at send when loopback is not allowed (localhost, WEBHOOK_ALLOW_LOOPBACK=false)', async (t) => {
  const caller = await createCaller(pool());
  const hook = await receiver();
  const endpoint = await addEndpoint(kyselyOver(pool()), settings(), {
    organizationId: caller.organizationId,
    url: hook.url,
    events: ['customer.created'],
  });
  await pool().query('UPDATE webhook_endpoints SET url = $2 WHERE id = $1', [
    endpoint.id,
    `https://localhost:${hook.port}/hook`,
  ]);
  // A webhook.test delivery written without its job, so the running worker never takes it: the attempt below is the only one.
  const eventId = newId('evt');
  const deliveryId = newId('whd');
  await pool().query(
    "INSERT INTO events (organization_id, id, type, resource, record_id, dispatched_at) VALUES ($1, $2, 'webhook.test', 'webhook_endpoint', $3, now())",
    [caller.organizationId, eventId, endpoint.id],
  );
  await pool().query(
    "INSERT INTO webhook_deliveries (organization_id, id, endpoint_id, event_id, event_type, status, next_attempt_at) VALUES ($1, $2, $3, $4, 'webhook.test', 'pending', now())",
    [caller.organizationId, deliveryId, endpoint.id, eventId],
  );
  const outcome = await attemptDelivery(
    kyselyOver(pool()),
    {
      objects: withTestEvent(webhookObjects),
      policy: { allowLoopback: false },
      secretKey: api().config.webhookSecretKey,
      timeoutMs: 10_000,
      objectLimitBytes: 256 * 1024,
    },
    { organizationId: caller.organizationId, id: deliveryId, endpointId: endpoint.id, attempt: 1 },
  );
  t.false(outcome.ok);
  t.regex(outcome.error!, /destination refused: localhost resolves to .*loopback/);
  t.is(hook.received.length, 0);
});

test('a delivery whose worker died mid-send is sent again when its job expires (the lease), once, with the same event id', async (t) => {
  const caller = await createCaller(pool());
  const hook = await receiver();
  const endpoint = await addEndpoint(kyselyOver(pool()), settings(), {
    organizationId: caller.organizationId,
    url: hook.url,
    events: ['customer.created'],
  });
  await pool().query("UPDATE webhook_endpoints SET created_at = now() + interval '1 hour' WHERE id = $1", [
    endpoint.id,
  ]); // fan-out skips it
  const customer = await createCustomer(caller);
  const event = (await pool().query('SELECT id FROM events WHERE record_id = $1', [customer.id])).rows[0];
  // What a worker that claimed attempt 1 and then crashed leaves: the attempt counted on the row, and its job
  // active in pg-boss with a 2 s expiry (the lease), never completed.
  const deliveryId = newId('whd');
  await pool().query(
    `INSERT INTO webhook_deliveries (organization_id, id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at)
     VALUES ($1, $2, $3, $4, 'customer.created', 'pending', 1, now() + interval '2 seconds')`,
    [caller.organizationId, deliveryId, endpoint.id, event.id],
  );
  const { boss } = api().service.jobs;
  const jobId = await boss.send(
    DELIVERY_QUEUE,
    { organizationId: caller.organizationId, deliveryId, attempts: 0 },
    { startAfter: 3600, expireInSeconds: 2, group: { id: endpoint.id } },
  );
  await pool().query(
    "UPDATE pgboss.job SET state = 'active', started_on = now(), start_after = now() WHERE name = $1 AND id = $2",
    [DELIVERY_QUEUE, jobId],
  );
  await sleep(1000);
  t.is(hook.received.length, 0, 'nothing is sent while the lease runs');
  await sleep(1500);
  // pg-boss's supervisor finds expired jobs once a minute; run its pass now rather than wait.
  await pool().query('UPDATE pgboss.queue SET monitor_on = NULL, monitor_claim_on = NULL WHERE name = $1', [
    DELIVERY_QUEUE,
  ]);
  await boss.supervise(DELIVERY_QUEUE);
  const [request] = await hook.waitFor(1, 5000);
  t.is(request!.body.id, event.id);
  await eventually(
    async () => (await deliveriesOf(endpoint.id))[0]?.status === 'succeeded',
    5000,
    'success is recorded',
  );
  t.like((await deliveriesOf(endpoint.id))[0], { attempts: 2 });
  await sleep(1000);
  t.is(hook.received.length, 1);
});

test('a delivery job left active without a send slot (its worker died after taking it) is retried within seconds by a live worker, not after its 60 s expiry', async (t) => {
  const caller = await createCaller(pool());
  const hook = await receiver();
  const endpoint = await addEndpoint(kyselyOver(pool()), settings(), {
    organizationId: caller.organizationId,
    url: hook.url,
    events: ['customer.created'],
  });
  await pool().query("UPDATE webhook_endpoints SET created_at = now() + interval '1 hour' WHERE id = $1", [
    endpoint.id,
  ]); // fan-out skips it
  const customer = await createCustomer(caller);
  const event = (await pool().query('SELECT id FROM events WHERE record_id = $1', [customer.id])).rows[0];
  // What a worker that claimed attempt 1 and died leaves when it held no slot: its job active for longer than
  // UNCLAIMED_JOB_SECONDS (jobs/lost.ts), with the queue's own 60 s expiry far off, and no send slot naming it.
  const deliveryId = newId('whd');
  await pool().query(
    `INSERT INTO webhook_deliveries (organization_id, id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at)
     VALUES ($1, $2, $3, $4, 'customer.created', 'pending', 1, now() + interval '60 seconds')`,
    [caller.organizationId, deliveryId, endpoint.id, event.id],
  );
  const { boss } = api().service.jobs;
  const jobId = await boss.send(
    DELIVERY_QUEUE,
    { organizationId: caller.organizationId, deliveryId, attempts: 0 },
    { startAfter: 3600, group: { id: endpoint.id } },
  );
  await pool().query(
    "UPDATE pgboss.job SET state = 'active', started_on = now() - interval '11 seconds', start_after = now() WHERE name = $1 AND id = $2",
    [DELIVERY_QUEUE, jobId],
  );
  const [request] = await hook.waitFor(1, 8_000); // the sweep runs every second, the retry after pg-boss's 1 s retryDelay
  t.is(request!.body.id, event.id);
  await eventually(
    async () => (await deliveriesOf(endpoint.id))[0]?.status === 'succeeded',
    5000,
    'success is recorded',
  );
  t.like((await deliveriesOf(endpoint.id))[0], { attempts: 2 });
  await sleep(1000);
  t.is(hook.received.length, 1);
});
