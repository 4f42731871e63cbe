// Webhook verification and deduplication in the SDK, on deliveries the real service sends (spec: Events >
// Signature and Delivery rules): verifyWebhook accepts a real delivery, also during a secret rotation with either
// secret, and refuses a changed body, a wrong secret, an old timestamp and malformed headers; the event gate
// claims an event id with a lease (two deliveries at once are processed once, the other hears in_progress; a claim
// whose holder died is taken again after its lease), marks it done only after processing succeeded, and drops a
// record older than the copy held (atomically, so two events of one record arriving together leave the newer one).
import test, { type ExecutionContext } from 'ava';
import { createHmac } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import {
  createErpClient,
  createEventGate,
  verifyWebhook,
  WebhookVerificationError,
  type ErpClient,
  type EventClaim,
  type EventGateStore,
  type EventOutcome,
  type WebhookEvent,
  type WebhookVerificationFailure,
} from '../../client-sdk/src/index.js';
import { addEndpoint, rotateSecret, type EndpointSettings } from '../../server/platform/webhooks/endpoints.js';
import { webhookEventTypes } from '../../server/composition/modules.js';
import { createCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';
import { startReceiver, type Received, type Receiver } from '../webhooks/receiver.js';
import { kyselyOver } from '../../server/platform/database/database.js';

const api = useSharedService(test);
const pool = () => api().pool;
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
interface Subscription {
  erp: ErpClient;
  hook: Receiver;
  endpoint: { id: string; secret: string };
}
async function subscribe(): Promise<Subscription> {
  // Without customers:pii, so that the API's answers are what a delivery carries (never personal fields).
  const caller = await createCaller(pool(), { scopes: ['customers:read', 'customers:write'] });
  const hook = await startReceiver();
  receivers.push(hook);
  const endpoint = await addEndpoint(kyselyOver(pool()), settings(), {
    organizationId: caller.organizationId,
    url: hook.url,
    events: ['customer.created', 'customer.updated'],
  });
  return { erp: createErpClient({ apiKey: caller.secret, baseUrl: `${api().baseUrl}/api/v1` }), hook, endpoint };
}
const createCustomer = async (erp: ErpClient) =>
  (
    await erp.POST('/customers', {
      body: {
        outletCode: `UG${String(9_000_000 + ++sequence).padStart(7, '0')}`,
        name: 'Hook Shop',
        channel: 'retail',
      },
    })
  ).data;
const signature = (request: Received) => request.headers['service-signature'] as string;
async function waitUntil(condition: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await delay(10);
  }
}

function refusal(t: ExecutionContext, reason: WebhookVerificationFailure, fn: () => unknown, message: string): void {
  const error = t.throws(fn, { instanceOf: WebhookVerificationError }, message);
  t.is(error?.reason, reason, message);
}

test('verifyWebhook accepts a delivered webhook and returns the typed envelope; it refuses a changed body, a wrong secret, an old timestamp and a malformed header', async (t) => {
  const { erp, hook, endpoint } = await subscribe();
  const customer = await createCustomer(erp);
  const [delivery] = await hook.waitFor(1);
  const header = signature(delivery!);

  const event: WebhookEvent = verifyWebhook(delivery!.raw, header, endpoint.secret);
  t.like(event, { type: 'customer.created', apiVersion: 'v1' });
  t.regex(event.id, /^evt_/);
  if (event.type !== 'customer.created' || 'deleted' in event.data.object || 'truncated' in event.data.object)
    return t.fail('a customer');
  const name: string = event.data.object.name; // narrowed by type: the customer as GET returns it
  t.is(name, 'Hook Shop');
  t.deepEqual(event.data.object, customer);
  t.deepEqual(
    verifyWebhook(Buffer.from(delivery!.raw, 'utf8'), header, [endpoint.secret]),
    event,
    'the raw body as bytes',
  );

  refusal(
    t,
    'no_matching_signature',
    () => verifyWebhook(`${delivery!.raw} `, header, endpoint.secret),
    'a trailing space',
  );
  refusal(
    t,
    'no_matching_signature',
    () => verifyWebhook(delivery!.raw.replace('Hook Shop', 'Hook Shoq'), header, endpoint.secret),
    'a changed body',
  );
  refusal(
    t,
    'no_matching_signature',
    () => verifyWebhook(delivery!.raw, header, 'whsec_not_the_secret'),
    'another secret',
  );
  const sentAt = new Date(Number(/t=(\d+)/.exec(header)![1]) * 1000);
  refusal(
    t,
    'timestamp_out_of_tolerance',
    () => verifyWebhook(delivery!.raw, header, endpoint.secret, { now: new Date(sentAt.getTime() + 301_000) }),
    'replayed 5 minutes later',
  );
  t.notThrows(() =>
    verifyWebhook(delivery!.raw, header, endpoint.secret, { now: new Date(sentAt.getTime() + 299_000) }),
  );
  refusal(
    t,
    'timestamp_out_of_tolerance',
    () =>
      verifyWebhook(delivery!.raw, header, endpoint.secret, {
        now: new Date(sentAt.getTime() + 61_000),
        toleranceSeconds: 60,
      }),
    'a tighter tolerance',
  );
  refusal(t, 'missing_header', () => verifyWebhook(delivery!.raw, undefined, endpoint.secret), 'no header');
  refusal(t, 'missing_header', () => verifyWebhook(delivery!.raw, '', endpoint.secret), 'an empty header');
  const v1 = header.slice(header.indexOf('v1='));
  for (const malformed of [
    v1,
    `t=soon,${v1}`,
    `t=1,t=2,${v1}`,
    header.split(',')[0]!,
    `${header.split(',')[0]},v1=xyz`,
  ]) {
    refusal(t, 'malformed_header', () => verifyWebhook(delivery!.raw, malformed, endpoint.secret), malformed);
  }
});

test('during a secret rotation a delivery carries two v1 signatures and verifies with either secret', async (t) => {
  const { erp, hook, endpoint } = await subscribe();
  const customer = await createCustomer(erp);
  await hook.waitFor(1);
  const rotated = await rotateSecret(kyselyOver(pool()), api().config.webhookSecretKey, endpoint.id, 1);
  await erp.PATCH('/customers/{id}', { params: { path: { id: customer.id } }, body: { name: 'Rotated Shop' } });
  const delivery = (await hook.waitFor(2))[1]!;
  const header = signature(delivery);
  t.is(header.split(',').filter((part) => part.startsWith('v1=')).length, 2);

  for (const secrets of [
    endpoint.secret,
    rotated.secret,
    [rotated.secret, endpoint.secret],
    ['whsec_unrelated', rotated.secret],
  ]) {
    t.is(verifyWebhook(delivery.raw, header, secrets).type, 'customer.updated', `secrets ${JSON.stringify(secrets)}`);
  }
  refusal(t, 'no_matching_signature', () => verifyWebhook(delivery.raw, header, ['whsec_unrelated']), 'neither secret');
});

test('a correctly signed body that is no event envelope is refused as malformed_payload', (t) => {
  const secret = 'whsec_test_only';
  const timestamp = Math.floor(Date.now() / 1000);
  const signed = (body: string) =>
    `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
  for (const body of [
    'not json',
    '[]',
    JSON.stringify({ id: 'evt_1', type: 'customer.created' }),
    JSON.stringify({
      id: 'cus_1',
      type: 'x',
      createdAt: 'x',
      apiVersion: 'v1',
      organizationId: 'o',
      data: { object: {} },
    }),
  ]) {
    refusal(t, 'malformed_payload', () => verifyWebhook(body, signed(body), secret), body);
  }
  t.throws(
    () => verifyWebhook('{}', signed('{}'), []),
    { instanceOf: TypeError },
    'no secret at all is a programming error',
  );
});

test('the event gate drops a repeated event id and an event whose record is older than the copy held', async (t) => {
  const { created, updated } = await deliveredPair();
  t.true(Date.parse(String(created.data.object.updatedAt)) < Date.parse(String(updated.data.object.updatedAt)));

  // Delivered out of order: the update first, then the create, then the update again (at least once).
  const gate = createEventGate();
  t.true(await gate.accept(updated));
  t.false(await gate.accept(created), 'older than the copy held');
  t.false(await gate.accept(updated), 'the same event id again');

  // In order, both pass.
  const inOrder = createEventGate();
  t.true(await inOrder.accept(created));
  t.true(await inOrder.accept(updated));
});

/** The created and the updated event of one customer, as delivered (the updated one's record is newer). */
async function deliveredPair(): Promise<{ created: WebhookEvent; updated: WebhookEvent }> {
  const { erp, hook, endpoint } = await subscribe();
  const customer = await createCustomer(erp);
  await hook.waitFor(1); // the created event's object is read before the update below
  await erp.PATCH('/customers/{id}', { params: { path: { id: customer.id } }, body: { name: 'Newer Shop' } });
  const [createdDelivery, updatedDelivery] = await hook.waitFor(2);
  const created = verifyWebhook(createdDelivery!.raw, signature(createdDelivery!), endpoint.secret);
  const updated = verifyWebhook(updatedDelivery!.raw, signature(updatedDelivery!), endpoint.secret);
  return { created, updated };
}

/** The id of an event's record (a DMS flag has none: its document is `documentId`). */
const objectId = (event: WebhookEvent) => ('id' in event.data.object ? String(event.data.object.id) : undefined);

/** A copy of `event` under another event id and record id: a fresh event of a fresh record, same shape. */
function renamed(event: WebhookEvent, suffix: string): WebhookEvent {
  return {
    ...event,
    id: `${event.id}_${suffix}`,
    data: { object: { ...event.data.object, id: `${objectId(event)}_${suffix}` } },
  } as WebhookEvent;
}

let storeTables = 0;
/**
 * A durable store in the test database, written with the statements of the SDK's README (one statement per
 * method), so that the README's SQL is what these tests run.
 */
async function pgGateStore(): Promise<
  EventGateStore & {
    events: string;
    versions: string;
    stateOf(id: string): Promise<string | undefined>;
    heldOf(objectId: string): Promise<string | undefined>;
  }
> {
  const events = `gate_events_${++storeTables}`;
  const versions = `gate_versions_${storeTables}`;
  await pool().query(
    `CREATE TABLE ${events} (id text PRIMARY KEY, state text NOT NULL CHECK (state IN ('claimed', 'done')), lease_until timestamptz)`,
  );
  await pool().query(`CREATE TABLE ${versions} (object_id text PRIMARY KEY, updated_at timestamptz NOT NULL)`);
  return {
    events,
    versions,
    async claimEvent(id, leaseMs) {
      const { rows } = await pool().query<{ claim: EventClaim }>(
        `
        WITH taken AS (
          INSERT INTO ${events} AS e (id, state, lease_until) VALUES ($1, 'claimed', now() + $2::float8 * interval '1 millisecond')
          ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until
            WHERE e.state = 'claimed' AND e.lease_until < now()
          RETURNING 'claimed' AS claim
        )
        SELECT claim FROM taken
        UNION ALL
        SELECT CASE state WHEN 'done' THEN 'done' ELSE 'in_progress' END FROM ${events} WHERE id = $1 AND NOT EXISTS (SELECT FROM taken)`,
        [id, leaseMs],
      );
      return rows[0]?.claim ?? 'in_progress';
    },
    async completeEvent(id) {
      await pool().query(
        `INSERT INTO ${events} (id, state) VALUES ($1, 'done') ON CONFLICT (id) DO UPDATE SET state = 'done', lease_until = NULL`,
        [id],
      );
    },
    async releaseEvent(id) {
      await pool().query(`DELETE FROM ${events} WHERE id = $1 AND state = 'claimed'`, [id]);
    },
    async rememberIfNewer(objectId, updatedAt) {
      const { rowCount } = await pool().query(
        `
        INSERT INTO ${versions} AS v (object_id, updated_at) VALUES ($1, $2)
        ON CONFLICT (object_id) DO UPDATE SET updated_at = excluded.updated_at WHERE v.updated_at <= excluded.updated_at`,
        [objectId, updatedAt],
      );
      return rowCount === 1;
    },
    async stateOf(id) {
      return (await pool().query<{ state: string }>(`SELECT state FROM ${events} WHERE id = $1`, [id])).rows[0]?.state;
    },
    async heldOf(objectId) {
      return (
        await pool().query<{ at: Date }>(`SELECT updated_at AS at FROM ${versions} WHERE object_id = $1`, [objectId])
      ).rows[0]?.at.toISOString();
    },
  };
}

test('gate.handle marks an event done only when processing succeeded: a failure releases the claim and the redelivery is processed (durable SQL store)', async (t) => {
  const { created: event } = await deliveredPair();
  const store = await pgGateStore();
  const gate = createEventGate(store);

  await t.throwsAsync(
    gate.handle(event, () => {
      throw new Error('database down');
    }),
    { message: 'database down' },
  );
  t.is(await store.stateOf(event.id), undefined, 'the failed processing released its claim');
  let processed = 0;
  t.is(
    await gate.handle(event, () => {
      processed++;
    }),
    'processed',
  );
  t.is(
    await gate.handle(event, () => {
      processed++;
    }),
    'duplicate',
  );
  t.false(await gate.accept(event), 'accept sees it done');
  t.is(processed, 1);
  t.is(await store.stateOf(event.id), 'done');
  t.is(await store.heldOf(String(objectId(event))), event.data.object.updatedAt);
});

test('a claim whose holder died (process never finished, or its release failed) is taken again after the lease; until then a redelivery is in_progress, not done', async (t) => {
  const { created: event, updated } = await deliveredPair();
  const store = await pgGateStore();
  const leaseMs = 400;

  // A receiver claims the event and dies mid-processing: its process never settles, nothing releases the claim.
  const crashed = createEventGate(store, { leaseMs });
  void crashed.handle(event, () => new Promise<void>(() => {}));
  await waitUntil(async () => (await store.stateOf(event.id)) === 'claimed');

  // The restarted receiver (same durable store) gets the service's redeliveries.
  const restarted = createEventGate(store, { leaseMs });
  let processed = 0;
  t.is(
    await restarted.handle(event, () => {
      processed++;
    }),
    'in_progress',
    'within the lease: answer non-2xx so that the service delivers again',
  );
  t.false(await restarted.accept(event), 'accept does not take a claim held by another delivery');
  await delay(leaseMs + 150);
  t.is(
    await restarted.handle(event, () => {
      processed++;
    }),
    'processed',
    'after the lease the redelivery is processed: the event is not lost',
  );
  t.is(
    await restarted.handle(event, () => {
      processed++;
    }),
    'duplicate',
  );
  t.is(processed, 1);

  // A processing that fails and whose release fails too: the claim expires the same way.
  const unreleasable = createEventGate(
    {
      ...store,
      releaseEvent: () => {
        throw new Error('store unreachable');
      },
    },
    { leaseMs },
  );
  const failure = await t.throwsAsync(
    unreleasable.handle(updated, () => {
      throw new Error('warehouse down');
    }),
    { instanceOf: AggregateError },
  );
  t.deepEqual(
    (failure as AggregateError).errors.map((e: Error) => e.message),
    ['warehouse down', 'store unreachable'],
  );
  t.is(
    await restarted.handle(updated, () => {
      processed++;
    }),
    'in_progress',
  );
  await delay(leaseMs + 150);
  t.is(
    await restarted.handle(
      updated,
      () => {
        processed++;
      },
      { leaseMs: 60_000 },
    ),
    'processed',
    'each claim keeps its own lease: a longer one asked now does not revive the dead claim',
  );
  t.is(processed, 2);
});

test('two deliveries of one event handled at the same time run process once: the other is in_progress; a failure releases the claim for the next delivery', async (t) => {
  const { created: event } = await deliveredPair();
  const gate = createEventGate();
  let runs = 0;
  let fail!: (failure: Error) => void;
  const failing = new Promise<never>((_resolve, reject) => {
    fail = reject;
  });
  // The second delivery arrives while the first is still being processed; then that processing fails.
  const first = gate.handle(event, async () => {
    runs++;
    await failing;
  });
  t.is(
    await gate.handle(event, () => {
      runs++;
    }),
    'in_progress',
    'not "done": the first processing may still fail',
  );
  t.false(await gate.accept(event));
  fail(new Error('warehouse down'));
  await t.throwsAsync(first, { message: 'warehouse down' });
  t.is(runs, 1);

  // The service delivers again after the failure (non-2xx): this time it is processed, once.
  const [third, fourth] = await Promise.all([
    gate.handle(event, () => {
      runs++;
    }),
    gate.handle(event, () => {
      runs++;
    }),
  ]);
  t.deepEqual([third, fourth], ['processed', 'in_progress']);
  t.is(runs, 2);
  t.is(
    await gate.handle(event, () => {
      runs++;
    }),
    'duplicate',
  );
  t.false(await gate.accept(event), 'accept shares the claim');
});

test('a stale event is marked done without processing; a newer one holds its version before processing, so an older one arriving meanwhile is stale', async (t) => {
  const { created, updated } = await deliveredPair();

  const gate = createEventGate();
  let release!: () => void;
  const newerRuns = gate.handle(
    updated,
    () =>
      new Promise<void>((resolve) => {
        release = resolve;
      }),
  );
  await delay(10);
  const processed: string[] = [];
  t.is(
    await gate.handle(created, () => {
      processed.push('older');
    }),
    'stale',
    'older than the copy being processed',
  );
  t.is(
    await gate.handle(created, () => {
      processed.push('older');
    }),
    'duplicate',
    'the stale event was marked done',
  );
  release();
  t.is(await newerRuns, 'processed');
  t.deepEqual(processed, []);

  // A newer one that fails keeps its version: an older one is stale meanwhile, and the newer one's redelivery passes.
  const other = createEventGate();
  await t.throwsAsync(
    other.handle(updated, () => {
      throw new Error('down');
    }),
  );
  t.is(
    await other.handle(created, () => {
      processed.push('older');
    }),
    'stale',
  );
  t.is(
    await other.handle(updated, () => {
      processed.push('newer');
    }),
    'processed',
    'equal is not older',
  );
  t.deepEqual(processed, ['newer']);
});

test('two events for one record arriving together (older and newer, concurrently): the newer one is held and processed, the older one is never processed after it (durable SQL store)', async (t) => {
  const { created, updated } = await deliveredPair();
  const store = await pgGateStore();
  const gate = createEventGate(store);
  t.true(Date.parse(String(created.data.object.updatedAt)) < Date.parse(String(updated.data.object.updatedAt)));
  let olderProcessed = 0;
  for (let round = 0; round < 30; round++) {
    const older = renamed(created, `r${round}`);
    const newer = renamed(updated, `r${round}`);
    const log: string[] = [];
    const process = (name: string) => async () => {
      log.push(`${name} start`);
      await delay(Math.random() * 5);
      log.push(`${name} end`);
    };
    // Both at once, each round the other one first.
    let olderCall: Promise<EventOutcome>;
    let newerCall: Promise<EventOutcome>;
    if (round % 2 === 0) {
      olderCall = gate.handle(older, process('older'));
      newerCall = gate.handle(newer, process('newer'));
    } else {
      newerCall = gate.handle(newer, process('newer'));
      olderCall = gate.handle(older, process('older'));
    }
    const [olderOutcome, newerOutcome] = await Promise.all([olderCall, newerCall]);
    t.is(newerOutcome, 'processed', `round ${round}`);
    t.true(olderOutcome === 'processed' || olderOutcome === 'stale', `round ${round}: ${olderOutcome}`);
    if (olderOutcome === 'processed') olderProcessed++;
    else t.false(log.includes('older start'), `round ${round}: a stale event is not processed`);
    if (log.includes('older start'))
      t.true(log.indexOf('older start') < log.indexOf('newer end'), `round ${round}: ${log.join(', ')}`);
    t.is(
      await store.heldOf(String(objectId(newer))),
      updated.data.object.updatedAt,
      `round ${round}: the newer version is held`,
    );
    t.is(await gate.handle(older, process('older')), 'duplicate', `round ${round}: the older one is done either way`);
    t.is(
      await gate.handle({ ...older, id: `${older.id}_late` } as WebhookEvent, process('older')),
      'stale',
      `round ${round}: any older event after them is stale`,
    );
  }
  t.log(`the older event was admitted (before the newer one) in ${olderProcessed} of 30 rounds`);
});

test('event gate options that would misbehave (a lease of NaN, 0 or negative) are refused with TypeError', (t) => {
  for (const leaseMs of [Number.NaN, 0, -1, Number.POSITIVE_INFINITY]) {
    t.throws(
      () => createEventGate(undefined, { leaseMs }),
      { instanceOf: TypeError, message: /leaseMs/ },
      String(leaseMs),
    );
  }
});

test('a toleranceSeconds that is not a finite number >= 0 is refused with TypeError instead of turning the timestamp check off', (t) => {
  const secret = 'whsec_test_only';
  const hourAgo = Math.floor(Date.now() / 1000) - 3600;
  const body = JSON.stringify({
    id: 'evt_1',
    type: 'customer.created',
    createdAt: new Date().toISOString(),
    apiVersion: 'v1',
    organizationId: 'org_1',
    data: { object: { id: 'cus_1' } },
  });
  const header = `t=${hourAgo},v1=${createHmac('sha256', secret).update(`${hourAgo}.${body}`).digest('hex')}`;
  for (const toleranceSeconds of [
    Number.NaN,
    -1,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    '300' as unknown as number,
  ]) {
    t.throws(
      () => verifyWebhook(body, header, secret, { toleranceSeconds }),
      { instanceOf: TypeError, message: /toleranceSeconds/ },
      String(toleranceSeconds),
    );
  }
  t.throws(
    () => verifyWebhook(body, header, secret, { now: new Date('not a date') }),
    { instanceOf: TypeError },
    'an invalid clock',
  );
  refusal(
    t,
    'timestamp_out_of_tolerance',
    () => verifyWebhook(body, header, secret, { toleranceSeconds: 0 }),
    'a zero tolerance is valid and strict',
  );
  t.is(
    verifyWebhook(body, header, secret, { toleranceSeconds: 3_700 }).id,
    'evt_1',
    'a wide finite tolerance accepts it',
  );
});
