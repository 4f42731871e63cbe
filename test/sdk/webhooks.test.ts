// Webhook verification and deduplication in the SDK, on deliveries the real service sends (spec: Events >
// Signature and Delivery rules): verifyWebhook accepts a real delivery, also during a secret rotation with either
// secret, and refuses a changed body, a wrong secret, an old timestamp and malformed headers; the event gate drops
// a repeated event id (claimed atomically, so two deliveries at once are processed once) and a record older than
// the copy held.
import test, { type ExecutionContext } from 'ava';
import { createHmac } from 'node:crypto';
import {
  createErpClient, createEventGate, verifyWebhook, WebhookVerificationError,
  type ErpClient, type WebhookEvent, type WebhookVerificationFailure,
} from '../../client-sdk/src/index.js';
import { addEndpoint, rotateSecret, type EndpointSettings } from '../../server/platform/webhooks/endpoints.js';
import { webhookEventTypes } from '../../server/webhook-objects.js';
import { createCaller } from '../support/callers.js';
import { useTestService } from '../support/service.js';
import { startReceiver, type Received, type Receiver } from '../webhooks/receiver.js';

const api = useTestService(test, 'sdk_webhooks', { env: { WEBHOOK_ALLOW_LOOPBACK: 'true' } });
const pool = () => api().service.database.pool;
const settings = (): EndpointSettings => ({ policy: { allowLoopback: true }, secretKey: api().config.webhookSecretKey, eventTypes: webhookEventTypes });
const receivers: Receiver[] = [];
test.after.always(async () => { await Promise.all(receivers.map((r) => r.close())); });

let sequence = 0;
interface Subscription { erp: ErpClient; hook: Receiver; endpoint: { id: string; secret: string } }
async function subscribe(): Promise<Subscription> {
  // Without customers:pii, so that the API's answers are what a delivery carries (never personal fields).
  const caller = await createCaller(pool(), { scopes: ['customers:read', 'customers:write'] });
  const hook = await startReceiver();
  receivers.push(hook);
  const endpoint = await addEndpoint(pool(), settings(), { organizationId: caller.organizationId, url: hook.url, events: ['customer.created', 'customer.updated'] });
  return { erp: createErpClient({ apiKey: caller.secret, baseUrl: `${api().baseUrl}/api/v1` }), hook, endpoint };
}
const createCustomer = async (erp: ErpClient) =>
  (await erp.POST('/customers', { body: { outletCode: `UG${String(9_000_000 + ++sequence).padStart(7, '0')}`, name: 'Hook Shop', channel: 'retail' } })).data;
const signature = (request: Received) => request.headers['service-signature'] as string;

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
  if (event.type !== 'customer.created' || 'deleted' in event.data.object || 'truncated' in event.data.object) return t.fail('a customer');
  const name: string = event.data.object.name; // narrowed by type: the customer as GET returns it
  t.is(name, 'Hook Shop');
  t.deepEqual(event.data.object, customer);
  t.deepEqual(verifyWebhook(Buffer.from(delivery!.raw, 'utf8'), header, [endpoint.secret]), event, 'the raw body as bytes');

  refusal(t, 'no_matching_signature', () => verifyWebhook(`${delivery!.raw} `, header, endpoint.secret), 'a trailing space');
  refusal(t, 'no_matching_signature', () => verifyWebhook(delivery!.raw.replace('Hook Shop', 'Hook Shoq'), header, endpoint.secret), 'a changed body');
  refusal(t, 'no_matching_signature', () => verifyWebhook(delivery!.raw, header, 'whsec_not_the_secret'), 'another secret');
  const sentAt = new Date(Number(/t=(\d+)/.exec(header)![1]) * 1000);
  refusal(t, 'timestamp_out_of_tolerance', () => verifyWebhook(delivery!.raw, header, endpoint.secret, { now: new Date(sentAt.getTime() + 301_000) }), 'replayed 5 minutes later');
  t.notThrows(() => verifyWebhook(delivery!.raw, header, endpoint.secret, { now: new Date(sentAt.getTime() + 299_000) }));
  refusal(t, 'timestamp_out_of_tolerance', () => verifyWebhook(delivery!.raw, header, endpoint.secret, { now: new Date(sentAt.getTime() + 61_000), toleranceSeconds: 60 }), 'a tighter tolerance');
  refusal(t, 'missing_header', () => verifyWebhook(delivery!.raw, undefined, endpoint.secret), 'no header');
  refusal(t, 'missing_header', () => verifyWebhook(delivery!.raw, '', endpoint.secret), 'an empty header');
  const v1 = header.slice(header.indexOf('v1='));
  for (const malformed of [v1, `t=soon,${v1}`, `t=1,t=2,${v1}`, header.split(',')[0]!, `${header.split(',')[0]},v1=xyz`]) {
    refusal(t, 'malformed_header', () => verifyWebhook(delivery!.raw, malformed, endpoint.secret), malformed);
  }
});

test('during a secret rotation a delivery carries two v1 signatures and verifies with either secret', async (t) => {
  const { erp, hook, endpoint } = await subscribe();
  const customer = await createCustomer(erp);
  await hook.waitFor(1);
  const rotated = await rotateSecret(pool(), api().config.webhookSecretKey, endpoint.id, 1);
  await erp.PATCH('/customers/{id}', { params: { path: { id: customer.id } }, body: { name: 'Rotated Shop' } });
  const delivery = (await hook.waitFor(2))[1]!;
  const header = signature(delivery);
  t.is(header.split(',').filter((part) => part.startsWith('v1=')).length, 2);

  for (const secrets of [endpoint.secret, rotated.secret, [rotated.secret, endpoint.secret], ['whsec_unrelated', rotated.secret]]) {
    t.is(verifyWebhook(delivery.raw, header, secrets).type, 'customer.updated', `secrets ${JSON.stringify(secrets)}`);
  }
  refusal(t, 'no_matching_signature', () => verifyWebhook(delivery.raw, header, ['whsec_unrelated']), 'neither secret');
});

test('a correctly signed body that is no event envelope is refused as malformed_payload', (t) => {
  const secret = 'whsec_test_only';
  const timestamp = Math.floor(Date.now() / 1000);
  const signed = (body: string) => `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
  for (const body of ['not json', '[]', JSON.stringify({ id: 'evt_1', type: 'customer.created' }), JSON.stringify({ id: 'cus_1', type: 'x', createdAt: 'x', apiVersion: 'v1', organizationId: 'o', data: { object: {} } })]) {
    refusal(t, 'malformed_payload', () => verifyWebhook(body, signed(body), secret), body);
  }
  t.throws(() => verifyWebhook('{}', signed('{}'), []), { instanceOf: TypeError }, 'no secret at all is a programming error');
});

test('the event gate drops a repeated event id and an event whose record is older than the copy held', async (t) => {
  const { erp, hook, endpoint } = await subscribe();
  const customer = await createCustomer(erp);
  await hook.waitFor(1); // the created event's object is read before the update below
  await erp.PATCH('/customers/{id}', { params: { path: { id: customer.id } }, body: { name: 'Newer Shop' } });
  const [createdDelivery, updatedDelivery] = await hook.waitFor(2);
  const created = verifyWebhook(createdDelivery!.raw, signature(createdDelivery!), endpoint.secret);
  const updated = verifyWebhook(updatedDelivery!.raw, signature(updatedDelivery!), endpoint.secret);
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

test('gate.handle keeps an event claimed only when processing succeeded, so a retried delivery is processed again', async (t) => {
  const { erp, hook, endpoint } = await subscribe();
  await createCustomer(erp);
  const [delivery] = await hook.waitFor(1);
  const event = verifyWebhook(delivery!.raw, signature(delivery!), endpoint.secret);

  // A store of the receiver's own, async like a database's; the claim checks and inserts with nothing in between.
  const claimed = new Set<string>();
  const held = new Map<string, string>();
  const gate = createEventGate({
    claimEvent: async (id) => {
      if (claimed.has(id)) return false;
      claimed.add(id);
      return true;
    },
    releaseEvent: async (id) => { claimed.delete(id); },
    heldUpdatedAt: async (objectId) => held.get(objectId),
    rememberUpdatedAt: async (objectId, updatedAt) => { held.set(objectId, updatedAt); },
  });
  await t.throwsAsync(gate.handle(event, () => { throw new Error('database down'); }), { message: 'database down' });
  t.deepEqual([...claimed], [], 'the failed processing released its claim');
  let processed = 0;
  t.true(await gate.handle(event, () => { processed++; }));
  t.false(await gate.handle(event, () => { processed++; }));
  t.is(processed, 1);
  t.deepEqual([...claimed], [event.id]);
  t.is(held.get(String(event.data.object.id)), event.data.object.updatedAt);
});

test('two deliveries of one event handled at the same time run process once (the claim is atomic); a failure releases it for the next delivery', async (t) => {
  const { erp, hook, endpoint } = await subscribe();
  await createCustomer(erp);
  const [delivery] = await hook.waitFor(1);
  const event = verifyWebhook(delivery!.raw, signature(delivery!), endpoint.secret);

  const gate = createEventGate();
  let runs = 0;
  let fail!: (failure: Error) => void;
  const failing = new Promise<never>((_resolve, reject) => { fail = reject; });
  // The second delivery arrives while the first is still being processed; then that processing fails.
  const first = gate.handle(event, async () => { runs++; await failing; });
  const second = gate.handle(event, () => { runs++; });
  t.false(await second, 'the second delivery is not processed while the first is');
  fail(new Error('warehouse down'));
  await t.throwsAsync(first, { message: 'warehouse down' });
  t.is(runs, 1);

  // The service delivers again after the failure (non-2xx): this time it is processed, once.
  const [third, fourth] = await Promise.all([gate.handle(event, () => { runs++; }), gate.handle(event, () => { runs++; })]);
  t.deepEqual([third, fourth], [true, false]);
  t.is(runs, 2);
  t.false(await gate.accept(event), 'accept shares the claim');
});

test('a toleranceSeconds that is not a finite number >= 0 is refused with TypeError instead of turning the timestamp check off', (t) => {
  const secret = 'whsec_test_only';
  const hourAgo = Math.floor(Date.now() / 1000) - 3600;
  const body = JSON.stringify({ id: 'evt_1', type: 'customer.created', createdAt: new Date().toISOString(), apiVersion: 'v1', organizationId: 'org_1', data: { object: { id: 'cus_1' } } });
  const header = `t=${hourAgo},v1=${createHmac('sha256', secret).update(`${hourAgo}.${body}`).digest('hex')}`;
  for (const toleranceSeconds of [Number.NaN, -1, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, '300' as unknown as number]) {
    t.throws(() => verifyWebhook(body, header, secret, { toleranceSeconds }), { instanceOf: TypeError, message: /toleranceSeconds/ }, String(toleranceSeconds));
  }
  t.throws(() => verifyWebhook(body, header, secret, { now: new Date('not a date') }), { instanceOf: TypeError }, 'an invalid clock');
  refusal(t, 'timestamp_out_of_tolerance', () => verifyWebhook(body, header, secret, { toleranceSeconds: 0 }), 'a zero tolerance is valid and strict');
  t.is(verifyWebhook(body, header, secret, { toleranceSeconds: 3_700 }).id, 'evt_1', 'a wide finite tolerance accepts it');
});
