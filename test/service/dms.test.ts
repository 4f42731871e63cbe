// The DMS over HTTP, end to end: the real service (the push, the flags pull, the worker's dms.process jobs), the
// accounting and fiscal simulators it runs, and flag callbacks to a receiver. One rule per test; each test has its
// own organisation (and its own QuickBooks company and EFRIS taxpayer in the simulators).
import test from 'ava';
import { kyselyOver } from '../../server/platform/database/database.js';
import { inTransaction, type Db } from '../../server/platform/database/transaction.js';
import { setConnection, SIMULATOR_BASE_URL } from '../../server/connectors/connections.js';
import { injectFailure } from '../../server/connectors/simulators/failures.js';
import { holdQuickBooksEntity } from '../../server/connectors/simulators/quickbooks/router.js';
import { addEndpoint } from '../../server/platform/webhooks/endpoints.js';
import { webhookEventTypes } from '../../server/composition/modules.js';
import { addConnection } from '../../server/modules/dms/connections.js';
import { operatorActor } from '../../server/platform/access/actor.js';
import { actingOrganization, getOrganization } from '../../server/platform/access/organizations.js';
import { ALL_SCOPES, createCaller, type TestCaller } from '../support/callers.js';
import { useTestService } from '../support/service.js';
import { doc, dmsSetUp, masterData, saleInvoice, stockDay } from '../support/dms.js';
import { eventually, startReceiver, verifySignature, type Receiver } from '../webhooks/receiver.js';

const api = useTestService(test, 'dms', {
  env: {
    SIMULATORS: 'true',
    CONNECTOR_TIMEOUT_MS: '3000',
    WEBHOOK_ALLOW_LOOPBACK: 'true',
    WEBHOOK_RETRY_SCHEDULE: '1,1,1',
  },
});
const pool = () => api().service.database.pool;
const db = (): Db => kyselyOver(pool());
const receivers: Receiver[] = [];
test.after.always(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

interface Shop {
  caller: TestCaller;
  organizationId: string;
  realm: string;
  tin: string;
  callbackSecret: string | null;
}

let accounts = 880_000;
let keys = 0;

/** An organisation with a DMS connection, its locations, and (unless told otherwise) both external connections. */
async function shop(
  options: {
    synchronous?: boolean;
    accounting?: boolean;
    fiscal?: boolean;
    connection?: boolean;
    callbackUrl?: string;
  } = {},
): Promise<Shop> {
  const caller = await createCaller(pool(), { scopes: ALL_SCOPES, modules: ['delivery', 'field-sales'] });
  const realm = String(accounts++);
  const tin = `20000${accounts++}`;
  const organization = actingOrganization(await getOrganization(db(), caller.organizationId));
  const endpoint = options.callbackUrl
    ? await addEndpoint(
        db(),
        { policy: { allowLoopback: true }, secretKey: api().config.webhookSecretKey, eventTypes: webhookEventTypes },
        {
          organizationId: caller.organizationId,
          url: options.callbackUrl,
          events: ['dms.document.flagged'],
        },
      )
    : null;
  const endpointId = endpoint?.id ?? null;
  await inTransaction(db(), async (tx) => {
    await dmsSetUp(tx, operatorActor(organization, 'test'));
    if (options.connection !== false) {
      await addConnection(tx, caller.organizationId, 'canonical', {
        distributorCode: 'DIST001',
        synchronous: options.synchronous ?? false,
        ...(endpointId ? { returnPath: 'callback', webhookEndpointId: endpointId } : {}),
      });
    }
    if (options.accounting)
      await setConnection(
        tx,
        caller.organizationId,
        'accounting',
        { baseUrl: SIMULATOR_BASE_URL, account: realm },
        null,
      );
    if (options.fiscal)
      await setConnection(
        tx,
        caller.organizationId,
        'fiscal',
        { baseUrl: SIMULATOR_BASE_URL, account: tin, deviceNo: 'TCS01' },
        null,
      );
  });
  return { caller, organizationId: caller.organizationId, realm, tin, callbackSecret: endpoint?.secret ?? null };
}

const push = (s: Shop, body: unknown, key = `dms-${keys++}`) =>
  api().request('POST', '/dms/canonical/documents', {
    headers: { ...s.caller.auth, 'Idempotency-Key': key },
    json: body,
  });
const flagsOf = async (s: Shop, query = '') =>
  (await api().request('GET', `/dms/canonical/flags${query}`, { headers: s.caller.auth })).body;

/** The flag of a document, read from the pull until `ready` holds. */
async function flagUntil(
  s: Shop,
  documentId: string,
  ready: (flag: any) => boolean,
  what: string,
  timeoutMs = 20_000,
): Promise<any> {
  let last: any;
  try {
    return await eventually(
      async () => {
        const all: any[] = [];
        let cursor: string | null = null;
        do {
          const page: any = await flagsOf(s, `?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
          all.push(...page.data);
          cursor = page.nextCursor;
        } while (cursor);
        last = all.filter((f) => f.documentId === documentId).at(-1);
        return last && ready(last) ? last : null;
      },
      timeoutMs,
      what,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; the flag: ${JSON.stringify(last)}`);
  }
}

/** Master data and 20 cases on the van, pushed and posted. */
async function setUp(s: Shop): Promise<void> {
  const res = await push(s, {
    documents: [
      masterData.soda,
      masterData.prices,
      masterData.salesman(),
      masterData.customer('UG0000001'),
      masterData.customer('UG0000002'),
      ...stockDay(20),
    ],
  });
  if (res.status !== 202 && res.status !== 200) throw new Error(`set-up: ${res.status} ${res.text}`);
  for (const flag of res.body.flags)
    await flagUntil(s, flag.documentId, (f) => f.state === 'posted', `set-up ${flag.documentNumber} posted`);
}

test('the push answers 202 at once with a received or rejected flag per document, in order; the worker posts them within seconds; the pull lists each change oldest first', async (t) => {
  const s = await shop();
  const res = await push(s, {
    documents: [masterData.soda, { ...masterData.water, distributorCode: 'OTHER' }, masterData.prices],
  });
  t.is(res.status, 202);
  t.false(res.body.synchronous);
  t.regex(res.body.batchId, /^dmb_/);
  t.deepEqual(
    res.body.flags.map((f: any) => [f.documentNumber, f.state, f.reasonCode]),
    [
      ['100201', 'received', undefined],
      ['100301', 'rejected', 'R07'],
      ['PL-RETAIL-1', 'received', undefined],
    ],
  );
  const posted = await flagUntil(s, res.body.flags[2].documentId, (f) => f.state === 'posted', 'the price list posted');
  t.is(posted.mikonoRef.table, 'prices');
  const all = (await flagsOf(s)).data;
  const states = all.filter((f: any) => f.documentId === res.body.flags[0].documentId).map((f: any) => f.state);
  t.deepEqual(states, ['posted'], 'the pull lists a flag once, as it is now');
  const times = all.map((f: any) => f.updatedAt);
  t.deepEqual([...times].sort(), times, 'oldest change first');
  t.deepEqual(
    (await flagsOf(s, '?state=rejected')).data.map((f: any) => f.documentNumber),
    ['100301'],
  );
  const later = (await flagsOf(s, `?since=${encodeURIComponent(posted.updatedAt)}`)).data;
  t.true(later.length >= 1 && later.every((f: any) => f.updatedAt >= posted.updatedAt));
});

test('the push refuses what is not a batch of documents with 400 naming the field, a batch over 500 (over 50 when synchronous), and a system with no connection (404); it needs dms:ingest', async (t) => {
  const s = await shop();
  const tooMany = await push(s, { documents: Array.from({ length: 501 }, () => masterData.soda) });
  t.is(tooMany.status, 400);
  t.is(tooMany.body.errors[0].field, '/documents');
  t.regex(tooMany.body.detail, /1 to 500 documents; this one 501/);
  t.is((await push(s, { documents: [] })).status, 400);
  t.is((await push(s, [masterData.soda])).body.errors[0].field, '/');
  t.is((await push(s, { documents: [masterData.soda], extra: 1 })).body.code, 'unknown_field');
  const sync = await shop({ synchronous: true });
  const fiftyOne = await push(sync, { documents: Array.from({ length: 51 }, () => masterData.soda) });
  t.is(fiftyOne.status, 400);
  t.regex(fiftyOne.body.detail, /this connection is synchronous/);
  const none = await shop({ connection: false });
  const missing = await push(none, masterData.soda);
  t.is(missing.status, 404);
  t.regex(missing.body.detail, /no DMS connection named canonical/);
  t.is((await flagsOf(none)).code, 'not_found');
  const reader = await createCaller(pool(), { organizationId: s.organizationId, scopes: ['dms:flags:read'] });
  const refused = await api().request('POST', '/dms/canonical/documents', {
    headers: { ...reader.auth, 'Idempotency-Key': 'no-scope' },
    json: masterData.soda,
  });
  t.is(refused.status, 403);
  t.is(refused.body.code, 'insufficient_scope');
  t.is((await api().request('GET', '/dms/canonical/flags', { headers: reader.auth })).status, 200);
  const count = await db()
    .selectFrom('dms_documents')
    .select('id')
    .where('organization_id', '=', s.organizationId)
    .execute();
  t.is(count.length, 0, 'nothing refused was stored');
});

test('a synchronous connection posts before it answers: 200 with the final flags', async (t) => {
  const s = await shop({ synchronous: true });
  const res = await push(s, { documents: [masterData.soda, masterData.prices, masterData.customer('UG0000001')] });
  t.is(res.status, 200);
  t.true(res.body.synchronous);
  t.deepEqual(
    res.body.flags.map((f: any) => f.state),
    ['posted', 'posted', 'received'],
  );
  t.is(res.body.flags[2].note, 'Route R01 has not been received (send its salesman and route plan).');
  t.is(res.body.flags[1].mikonoRef.table, 'prices');
});

test('the same Idempotency-Key and body answer the first response again; the same documents under a new key answer their existing flags and post nothing new', async (t) => {
  const s = await shop();
  const first = await push(s, { documents: [masterData.soda] }, 'same-key');
  const replay = await push(s, { documents: [masterData.soda] }, 'same-key');
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(replay.body, first.body);
  await flagUntil(s, first.body.flags[0].documentId, (f) => f.state === 'posted', 'posted');
  const again = await push(s, { documents: [masterData.soda] });
  t.is(again.body.flags[0].documentId, first.body.flags[0].documentId);
  t.is(again.body.flags[0].state, 'posted');
  t.is(
    (await db().selectFrom('dms_documents').select('id').where('organization_id', '=', s.organizationId).execute())
      .length,
    1,
  );
});

test('with an accounting connection a posted flag gets its quickbooksRef once QuickBooks holds the invoice', async (t) => {
  const s = await shop({ accounting: true });
  await setUp(s);
  const res = await push(s, saleInvoice('CSR01000001', 'UG0000001', 2));
  const flag = await flagUntil(
    s,
    res.body.flags[0].documentId,
    (f) => f.state === 'posted' && f.quickbooksRef !== null,
    'posted with its quickbooksRef',
  );
  const invoice = (await api().request('GET', `/invoices/${flag.mikonoRef.id}`, { headers: s.caller.auth })).body;
  t.is(flag.quickbooksRef, invoice.posting.accountingRef);
  t.is(invoice.posting.accountingType, 'Invoice');
});

test("received -> rejected (R06): when the accounting system's books are closed the flag, held while QuickBooks was pending, is rejected, naming the accounting system, and the invoice stays posted in the service", async (t) => {
  const s = await shop({ accounting: true });
  await setUp(s);
  await injectFailure(db(), 'accounting', s.realm, 'period_closed', 1);
  const res = await push(s, saleInvoice('CSR01000002', 'UG0000001', 1));
  const flag = await flagUntil(s, res.body.flags[0].documentId, (f) => f.state === 'rejected', 'rejected');
  t.is(flag.reasonCode, 'R06');
  t.regex(flag.reasonText, /^In the accounting system: .*books are closed/);
  const invoice = await db()
    .selectFrom('invoices')
    .select(['status', 'posting_status'])
    .where('organization_id', '=', s.organizationId)
    .executeTakeFirstOrThrow();
  t.deepEqual(invoice, { status: 'open', posting_status: 'failed' }, 'the posting in the service stays applied');
});

test('reversal held by the accounting system: a cancelled collection whose payment QuickBooks holds is rejected with R09 naming what to void by hand, and nothing is reversed', async (t) => {
  const s = await shop({ accounting: true });
  await setUp(s);
  await push(s, saleInvoice('CSR01000003', 'UG0000001', 1));
  const collection = doc('customer_collection', 'PYR01000001', {
    routeCode: 'R01',
    customerCode: 'UG0000001',
    method: 'cash',
    amount: '28320',
    currency: 'UGX',
    allocations: [{ invoiceNumber: 'CSR01000003', amount: '28320' }],
  });
  const paid = await push(s, collection);
  const posted = await flagUntil(
    s,
    paid.body.flags[0].documentId,
    (f) => f.state === 'posted' && f.quickbooksRef !== null,
    'the collection posted in QuickBooks',
  );
  await holdQuickBooksEntity(db(), s.realm, posted.quickbooksRef);
  const cancel = await push(s, { ...collection, status: 'cancelled' });
  const refused = await flagUntil(
    s,
    cancel.body.flags[0].documentId,
    (f) => f.state === 'rejected',
    'the cancel rejected',
  );
  t.is(refused.reasonCode, 'R09');
  t.regex(
    refused.reasonText,
    new RegExp(`Void Payment ${posted.quickbooksRef} in the accounting system by hand first`),
  );
  const receipt = await db()
    .selectFrom('payments')
    .select('status')
    .where('organization_id', '=', s.organizationId)
    .where('id', '=', posted.mikonoRef.id)
    .executeTakeFirstOrThrow();
  t.is(receipt.status, 'posted', 'nothing reversed');
  t.is((await flagUntil(s, paid.body.flags[0].documentId, () => true, 'the first version')).state, 'posted');
});

test('a credit note the fiscal system holds cannot be cancelled from the DMS: R09, and nothing changes', async (t) => {
  const s = await shop({ fiscal: true });
  await setUp(s);
  const sale = await push(s, saleInvoice('CSR01000004', 'UG0000001', 2, { method: 'cash' }));
  const sold = await flagUntil(s, sale.body.flags[0].documentId, (f) => f.state === 'posted', 'the sale posted');
  await eventually(
    async () =>
      (
        await db()
          .selectFrom('invoices')
          .select('fiscal_status')
          .where('organization_id', '=', s.organizationId)
          .where('id', '=', sold.mikonoRef.id)
          .executeTakeFirstOrThrow()
      ).fiscal_status === 'fiscalised',
    20_000,
    'the invoice fiscalised',
  );
  const note = doc('credit_note', 'CRN-1', {
    customerCode: 'UG0000001',
    invoiceNumber: 'CSR01000004',
    reason: 'Price agreed',
    lines: [{ productCode: '100201', unit: 'case', quantity: 1, unitPrice: '1000' }],
  });
  const issued = await flagUntil(
    s,
    (await push(s, note)).body.flags[0].documentId,
    (f) => f.state === 'posted',
    'the credit note posted',
  );
  await eventually(
    async () =>
      (
        await db()
          .selectFrom('credit_notes')
          .select('fiscal_status')
          .where('organization_id', '=', s.organizationId)
          .where('id', '=', issued.mikonoRef.id)
          .executeTakeFirstOrThrow()
      ).fiscal_status !== 'pending',
    20_000,
    'the credit note submitted',
  );
  const cancel = await push(s, { ...note, status: 'cancelled' });
  const refused = await flagUntil(
    s,
    cancel.body.flags[0].documentId,
    (f) => f.state === 'rejected',
    'the cancel rejected',
  );
  t.is(refused.reasonCode, 'R09');
  t.regex(refused.reasonText, /the tax authority holds it, so it cannot be cancelled/);
  t.is(
    (
      await db()
        .selectFrom('credit_notes')
        .select('status')
        .where('organization_id', '=', s.organizationId)
        .where('id', '=', issued.mikonoRef.id)
        .executeTakeFirstOrThrow()
    ).status,
    'applied',
  );
});

test('flag callbacks: a connection whose return path is a callback gets every flag change as a signed dms.document.flagged webhook carrying the flag', async (t) => {
  const hook = await startReceiver();
  receivers.push(hook);
  const s = await shop({ callbackUrl: hook.url });
  const res = await push(s, { documents: [masterData.soda, { ...masterData.water, distributorCode: 'OTHER' }] });
  await hook.waitFor(3, 20_000);
  const bodies = hook.received.map((r) => r.body);
  t.true(bodies.every((b) => b.type === 'dms.document.flagged'));
  const objects = bodies.map((b) => b.data.object);
  t.true(
    objects.some(
      (o) => o.documentId === res.body.flags[1].documentId && o.state === 'rejected' && o.reasonCode === 'R07',
    ),
  );
  t.true(objects.some((o) => o.documentId === res.body.flags[0].documentId && o.state === 'posted'));
  t.true(
    hook.received.every(
      (r) => verifySignature(r.headers['service-signature'] as string, r.raw, s.callbackSecret!).valid,
    ),
    'signed like every webhook',
  );

  // Each callback is an action towards the DMS, with its status and a dms.action.status_changed event.
  const actions = await eventually(
    async () => {
      const rows = await db()
        .selectFrom('dms_actions')
        .select(['kind', 'status', 'id'])
        .where('organization_id', '=', s.organizationId)
        .where('kind', '=', 'callback')
        .execute();
      return rows.length >= 3 && rows.every((row) => row.status === 'delivered') ? rows : null;
    },
    20_000,
    'the callbacks recorded as delivered',
  );
  const events = await db()
    .selectFrom('events')
    .select('record_id')
    .where('organization_id', '=', s.organizationId)
    .where('type', '=', 'dms.action.status_changed')
    .execute();
  t.true(actions.every((action) => events.some((event) => event.record_id === action.id)));
});

test('a callback the DMS does not take is an action that is retrying, then failed, each change an event', async (t) => {
  const hook = await startReceiver(() => ({ status: 500 }));
  receivers.push(hook);
  const s = await shop({ callbackUrl: hook.url });
  await push(s, { ...masterData.water, distributorCode: 'OTHER' });
  const failed = await eventually(
    async () =>
      (await db()
        .selectFrom('dms_actions')
        .select(['id', 'status', 'detail'])
        .where('organization_id', '=', s.organizationId)
        .where('kind', '=', 'callback')
        .where('status', '=', 'failed')
        .executeTakeFirst()) ?? null,
    30_000,
    'the callback failed for good',
  );
  t.regex(failed.detail!, /^Attempt 4: HTTP 500/);
  const changes = await db()
    .selectFrom('events')
    .select('id')
    .where('organization_id', '=', s.organizationId)
    .where('type', '=', 'dms.action.status_changed')
    .where('record_id', '=', failed.id)
    .execute();
  t.is(changes.length, 2, 'retrying, then failed: the attempts in between change the detail, not the status');
});
