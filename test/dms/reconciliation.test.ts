// The route settlement closes a salesman's DMS day (it waits, R08, for the documents it lists; then it counts the
// van and settles and closes the day's trip through the settlements module, booking the cash difference), and the
// daily reconciliation keeps, per salesman and day, each kind of difference the spec names (rule 2), names documents
// only from a list (rule 3), is refreshed by a late document (rule 4), notifies the administrators (rule 5) and sends
// dms.reconciliation.completed when a result changes (rule 6). The ledger checker runs when the file closes.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { listNotifications } from '../../server/platform/webhooks/notifications.js';
import { reconcileDue, type DmsReconciliation } from '../../server/modules/dms/reconciliation.js';
import { listReconciliations } from '../../server/modules/dms/reconciliation-reads.js';
import { settleTrip } from '../../server/modules/settlements/documents.js';
import { getTripSettlement } from '../../server/modules/settlements/service.js';
import { departTrip } from '../../server/modules/trips/documents.js';
import { listTrips } from '../../server/modules/trips/service.js';
import { ApiError } from '../../server/platform/errors/api-error.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';
import { DAY, doc, dmsShop, masterData, saleInvoice, stockDay, type DmsShop } from '../support/dms.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('dms-reconciliation');
});
test.after.always(async () => {
  await world?.close();
});

const PREVIOUS_DAY = '2026-11-24';
/** After DAY's cut-off (20:00 UTC, the connection's default). */
const AFTER_CUT_OFF = new Date(`${DAY}T21:00:00.000Z`);
const NEXT_DAY = new Date('2026-11-26T21:00:00.000Z');

/** A shop with its master data, and 20 cases on the van received the day before (so DAY holds only the salesman's documents). */
async function readyShop(): Promise<DmsShop> {
  const shop = await dmsShop(world);
  const flags = await shop.push(
    masterData.soda,
    masterData.prices,
    masterData.salesman(),
    masterData.customer('UG0000001'),
    masterData.customer('UG0000002'),
    ...stockDay(20).map((d) => ({ ...d, documentDate: PREVIOUS_DAY })),
  );
  if (flags.some((flag) => flag.state !== 'posted')) throw new Error(`set-up did not post: ${JSON.stringify(flags)}`);
  return shop;
}

const routeSettlement = (body: Record<string, unknown>, number = 'RS-R01-20261125') =>
  doc('route_settlement', number, { routeCode: 'R01', ...body });
const dailyTotals = (body: Record<string, unknown>, number = 'DT-SM01-20261125') => doc('daily_totals', number, body);

async function reconciled(shop: DmsShop, now = AFTER_CUT_OFF): Promise<DmsReconciliation> {
  await reconcileDue(world.db, now, shop.organizationId);
  const page = await listReconciliations(world.db, shop.connection, {}, { salesman: 'SM01', date: DAY });
  if (page.rows.length !== 1) throw new Error(`expected one reconciled day, found ${page.rows.length}`);
  return page.rows[0]!;
}

const kinds = (day: DmsReconciliation) => day.differences.map((d) => d.kind).sort();
const events = async (shop: DmsShop, day: DmsReconciliation) =>
  Number(
    (
      await world.db
        .selectFrom('events')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('organization_id', '=', shop.organizationId)
        .where('type', '=', 'dms.reconciliation.completed')
        .where('record_id', '=', day.id)
        .executeTakeFirstOrThrow()
    ).n,
  );
const level = async (shop: DmsShop, locationCode: string): Promise<number> => {
  const row = await world.db
    .selectFrom('stock_levels as l')
    .innerJoin('locations as loc', (j) =>
      j.onRef('loc.organization_id', '=', 'l.organization_id').onRef('loc.id', '=', 'l.location_id'),
    )
    .select('l.quantity')
    .where('l.organization_id', '=', shop.organizationId)
    .where('loc.code', '=', locationCode)
    .executeTakeFirst();
  return row ? Number(row.quantity) : 0;
};

test('route settlement: waits (R08, the note naming the document) while a listed document has not posted, and posts once it has', async (t) => {
  const shop = await readyShop();
  await shop.push(saleInvoice('CSR01000001', 'UG0000001', 2, { method: 'cash' }));
  const [settlement] = await shop.push(
    routeSettlement({ cashHandedIn: '56640', documents: ['CSR01000001', 'CSR01000002'] }),
  );
  t.like(settlement, {
    state: 'received',
    note: 'Document CSR01000002, listed by the route settlement, has not been received.',
  });
  const [late] = await shop.push(saleInvoice('CSR01000002', 'UG0000002', 1));
  t.is(late!.state, 'posted');
  const [now] = await shop.flags([settlement!.documentId]);
  t.like(now, { state: 'posted', mikonoRef: { table: 'settlements' } }, 'woken by the listed document and posted');
});

test("route settlement: counts the van, settles and closes the DMS day's trip through the settlements module, and books the cash difference", async (t) => {
  const shop = await readyShop();
  await shop.push(
    saleInvoice('CSR01000001', 'UG0000001', 2, { method: 'cash' }),
    saleInvoice('CSR01000002', 'UG0000002', 1),
  );
  const [trip] = (await listTrips(world.db, shop.operator, {}, { status: 'in_transit' })).rows;
  t.is(trip!.source, 'dms', 'the DMS day is a trip of source dms');
  const [flag] = await shop.push(
    routeSettlement({
      cashHandedIn: '50000',
      credit: '28320',
      closingStock: [{ productCode: '100201', quantity: 400 }],
      documents: ['CSR01000001', 'CSR01000002'],
    }),
  );
  t.is(flag!.state, 'posted');
  const sheet = await getTripSettlement(world.db, shop.operator, trip!.id);
  t.like(sheet, {
    status: 'closed',
    tripStatus: 'closed',
    cashExpected: { amount: '56640' },
    handedIn: { amount: '50000' },
    variance: { amount: '-6640' },
  });
  t.is(flag!.mikonoRef!.id, sheet.id!);
  t.like(
    sheet.stock.find((line) => line.counted !== null),
    { counted: 400 },
    "the closing stock is the return's count",
  );
  t.deepEqual(
    [await level(shop, 'V_R01-G'), await level(shop, 'M01')],
    [0, 480 + 400],
    'the 400 counted went back to the warehouse; the 8 short were adjusted off the van',
  );
  const journal = await world.db
    .selectFrom('settlements')
    .select(['variance', 'posting_status'])
    .where('organization_id', '=', shop.organizationId)
    .where('id', '=', sheet.id!)
    .executeTakeFirstOrThrow();
  t.is(
    Number(journal.variance),
    -6640,
    "the cash difference is the settlement's variance (its journal entry books it)",
  );
});

test("the settlement sheet of a DMS day counts the van's replenishments as its loads: the one the evening before and one during the day", async (t) => {
  const shop = await readyShop();
  await shop.push(saleInvoice('CSR01000001', 'UG0000001', 1, { method: 'cash' }));
  const [more] = await shop.push(
    doc('van_replenishment', 'VR000002', {
      routeCode: 'R01',
      fromLocationCode: 'M01',
      lines: [{ productCode: '100201', unit: 'case', quantity: 5 }],
    }),
  );
  t.is(more!.state, 'posted');
  const [trip] = (await listTrips(world.db, shop.operator, {}, { status: 'in_transit' })).rows;
  const [flag] = await shop.push(
    routeSettlement({
      cashHandedIn: '28320',
      credit: '0',
      closingStock: [{ productCode: '100201', quantity: 456 + 120 }],
      documents: ['CSR01000001', 'VR000002'],
    }),
  );
  t.is(flag!.state, 'posted');
  const sheet = await getTripSettlement(world.db, shop.operator, trip!.id);
  t.like(
    sheet.stock.find((line) => line.counted !== null),
    { loaded: 480 + 120, sold: 24, returned: 0, counted: 576, difference: 0 },
  );
  const day = await reconciled(shop);
  t.is(day.status, 'balanced', JSON.stringify(day.differences));
});

test('a DMS trip is read-only: an operator cannot move or settle it by hand (409 invalid_state)', async (t) => {
  const shop = await readyShop();
  await shop.push(saleInvoice('CSR01000001', 'UG0000001', 1, { method: 'cash' }));
  const [trip] = (await listTrips(world.db, shop.operator, {}, { status: 'in_transit' })).rows;
  const settle = await t.throwsAsync(
    world.post((tx) => settleTrip(tx, shop.operator, { tripId: trip!.id, handedIn: '0', expenses: [] })),
    { instanceOf: ApiError },
  );
  t.is(settle!.code, 'invalid_state');
  t.regex(settle!.detail, /DMS day \(source dms\): it is read-only/);
  const move = await t.throwsAsync(
    world.post((tx) => departTrip(tx, shop.operator, trip!.id)),
    { instanceOf: ApiError },
  );
  t.is(move!.code, 'invalid_state');
  t.regex(move!.detail, /read-only/);
});

test('rule 2 and 3: a listed document that never arrived is named missing', async (t) => {
  const shop = await readyShop();
  await shop.push(
    saleInvoice('CSR01000001', 'UG0000001', 1, { method: 'cash' }),
    routeSettlement({ cashHandedIn: '28320', documents: ['CSR01000001', 'CSR01000009'] }),
  );
  const day = await reconciled(shop);
  const missing = day.differences.find((d) => d.kind === 'missing');
  t.like(missing, { documentNumber: 'CSR01000009' });
  t.like(
    day.differences.find((d) => d.kind === 'not_posted'),
    { documentType: 'route_settlement', state: 'received' },
    'the route settlement waits for it',
  );
  t.is(day.status, 'differences');
});

test('rule 2 and 3: a document that arrived and did not post is named, with or without a list', async (t) => {
  const shop = await readyShop();
  const [waiting] = await shop.push(
    saleInvoice('CSR01000001', 'UG0000077', 1),
    saleInvoice('CSR01000002', 'UG0000001', 1, { method: 'cash' }),
  );
  t.is(waiting!.state, 'received', 'customer UG0000077 never arrived (R08 wait)');
  await shop.push(dailyTotals({ totals: [{ documentType: 'sale_invoice', count: 2, value: '56640' }] }));
  const day = await reconciled(shop);
  const notPosted = day.differences.filter((d) => d.kind === 'not_posted');
  t.is(notPosted.length, 1);
  t.like(notPosted[0], {
    documentNumber: 'CSR01000001',
    state: 'received',
    note: 'Customer UG0000077 has not been received.',
  });
  t.like(
    day.totals.find((x) => x.documentType === 'sale_invoice'),
    {
      counts: { received: 2, posted: 1, rejected: 0, pending: 1 },
      values: { posted: '28320', pending: '28320' },
      dms: { count: 2, value: '56640' },
    },
  );
  t.false(
    day.differences.some((d) => d.kind === 'totals'),
    "the waiting document explains the daily totals' count and value",
  );
});

test('rule 2 and 3: a posted document the DMS does not list is named unlisted', async (t) => {
  const shop = await readyShop();
  await shop.push(
    saleInvoice('CSR01000001', 'UG0000001', 1, { method: 'cash' }),
    saleInvoice('CSR01000002', 'UG0000002', 1, { method: 'cash' }),
  );
  await shop.push(
    dailyTotals({ totals: [{ documentType: 'sale_invoice', count: 1, value: '28320' }], documents: ['CSR01000001'] }),
  );
  const day = await reconciled(shop);
  t.deepEqual(
    day.differences.filter((d) => d.kind === 'unlisted').map((d) => d.documentNumber),
    ['CSR01000002'],
  );
  t.false(
    day.differences.some((d) => d.kind === 'totals'),
    'the unlisted document explains the count',
  );
});

test('rule 2: a count or value per type that the documents do not explain is named', async (t) => {
  const shop = await readyShop();
  await shop.push(
    saleInvoice('CSR01000001', 'UG0000001', 1, { method: 'cash' }),
    saleInvoice('CSR01000002', 'UG0000002', 1, { method: 'cash' }),
  );
  await shop.push(
    dailyTotals({
      totals: [
        { documentType: 'sale_invoice', count: 3, value: '90000' },
        { documentType: 'customer_collection', count: 1, value: '5000' },
      ],
    }),
  );
  const day = await reconciled(shop);
  const totals = day.differences
    .filter((d) => d.kind === 'totals')
    .map((d) => `${d.documentType} ${d.measure} ${d.expected} ${d.actual} ${d.difference}`);
  t.deepEqual(totals.sort(), [
    'customer_collection count 1 0 1',
    'customer_collection value 5000 0 5000',
    'sale_invoice count 3 2 1',
    'sale_invoice value 90000 56640 33360',
  ]);
});

test("rule 2: the route settlement's cash, credit and stock differences are kept", async (t) => {
  const shop = await readyShop();
  await shop.push(
    saleInvoice('CSR01000001', 'UG0000001', 2, { method: 'cash' }),
    saleInvoice('CSR01000002', 'UG0000002', 1),
  );
  await shop.push(
    routeSettlement({
      cashHandedIn: '50000',
      credit: '30000',
      closingStock: [{ productCode: '100201', quantity: 400 }],
      documents: ['CSR01000001', 'CSR01000002'],
    }),
  );
  const day = await reconciled(shop);
  t.deepEqual(kinds(day), ['cash', 'credit', 'stock']);
  const of = (kind: string) => day.differences.find((d) => d.kind === kind);
  t.like(of('cash'), { expected: '56640', actual: '50000', difference: '-6640' });
  t.like(of('credit'), { expected: '30000', actual: '28320', difference: '1680' });
  t.like(of('stock'), { productCode: '100201', expected: '400', actual: '408', difference: '-8' });
  t.like(day.comparedWith.routeSettlement, { documentNumber: 'RS-R01-20261125', state: 'posted' });
});

test('rule 2: a day with no route settlement is named; a day that agrees is balanced', async (t) => {
  const shop = await readyShop();
  await shop.push(saleInvoice('CSR01000001', 'UG0000001', 1, { method: 'cash' }));
  t.deepEqual(kinds(await reconciled(shop)), ['no_route_settlement']);
  await shop.push(
    routeSettlement({
      cashHandedIn: '28320',
      credit: '0',
      closingStock: [{ productCode: '100201', quantity: 456 }],
      documents: ['CSR01000001'],
    }),
    dailyTotals({ totals: [{ documentType: 'sale_invoice', count: 1, value: '28320' }], documents: ['CSR01000001'] }),
  );
  const day = await reconciled(shop);
  t.deepEqual(day.differences, []);
  t.is(day.status, 'balanced');
  t.is(day.differenceCount, 0);
});

test('rule 3: a comparison document the other lists (the route settlement in the daily totals) arrived: it is not missing, and a day that agrees is balanced', async (t) => {
  const shop = await readyShop();
  await shop.push(saleInvoice('CSR01000001', 'UG0000001', 1, { method: 'cash' }));
  const [settlement] = await shop.push(
    routeSettlement({
      cashHandedIn: '28320',
      credit: '0',
      closingStock: [{ productCode: '100201', quantity: 456 }],
      documents: ['CSR01000001'],
    }),
  );
  t.is(settlement!.state, 'posted');
  await shop.push(
    dailyTotals({
      totals: [
        { documentType: 'sale_invoice', count: 1, value: '28320' },
        { documentType: 'route_settlement', count: 1, value: '0' },
      ],
      documents: ['CSR01000001', 'RS-R01-20261125'],
    }),
  );
  const day = await reconciled(shop);
  t.deepEqual(day.differences, [], JSON.stringify(day.differences));
  t.is(day.status, 'balanced');
  t.like(
    day.totals.find((x) => x.documentType === 'route_settlement'),
    { counts: { received: 1, posted: 1 }, dms: { count: 1, value: '0' } },
  );
});

test('rule 3: a listed route settlement that did not post is named once, as not posted (not missing)', async (t) => {
  const shop = await readyShop();
  await shop.push(saleInvoice('CSR01000001', 'UG0000001', 1, { method: 'cash' }));
  const [settlement] = await shop.push(
    routeSettlement({ cashHandedIn: '28320', documents: ['CSR01000001', 'CSR01000009'] }),
  );
  t.is(settlement!.state, 'received');
  await shop.push(
    dailyTotals({
      totals: [{ documentType: 'sale_invoice', count: 1, value: '28320' }],
      documents: ['CSR01000001', 'RS-R01-20261125'],
    }),
  );
  const day = await reconciled(shop);
  t.deepEqual(day.differences.map((d) => `${d.kind} ${d.documentNumber ?? ''}`).sort(), [
    'missing CSR01000009',
    'not_posted RS-R01-20261125',
  ]);
});

test("a document rejected R07 (another distributor's) is no document of the day: not named, not counted, and makes no day due", async (t) => {
  const shop = await readyShop();
  await shop.push(
    saleInvoice('CSR01000001', 'UG0000001', 1, { method: 'cash' }),
    routeSettlement({
      cashHandedIn: '28320',
      credit: '0',
      closingStock: [{ productCode: '100201', quantity: 456 }],
      documents: ['CSR01000001'],
    }),
  );
  const [foreign] = await shop.send({
    ...saleInvoice('CSR01000002', 'UG0000002', 1, { method: 'cash' }),
    distributorCode: 'DIST002',
  });
  t.like(foreign, { state: 'rejected', reasonCode: 'R07' });
  const day = await reconciled(shop);
  t.deepEqual(day.differences, [], JSON.stringify(day.differences));
  t.like(
    day.totals.find((x) => x.documentType === 'sale_invoice'),
    { counts: { received: 1, posted: 1, rejected: 0, pending: 0 } },
  );
  // Another distributor's document alone on a day: that day is no day of this connection's.
  await shop.send({
    ...saleInvoice('CSR01000003', 'UG0000001', 1, { method: 'cash' }),
    distributorCode: 'DIST002',
    documentDate: PREVIOUS_DAY,
    salesmanCode: 'SM09',
  });
  await reconcileDue(world.db, AFTER_CUT_OFF, shop.organizationId);
  const page = await listReconciliations(world.db, shop.connection, {}, { salesman: 'SM09', date: PREVIOUS_DAY });
  t.is(page.rows.length, 0);
});

test('rule 4, 5 and 6: a late document refreshes its day, with an event and a notification; an unchanged day sends nothing', async (t) => {
  const shop = await readyShop();
  await shop.push(
    saleInvoice('CSR01000001', 'UG0000001', 1, { method: 'cash' }),
    dailyTotals({
      totals: [{ documentType: 'sale_invoice', count: 2, value: '56640' }],
      documents: ['CSR01000001', 'CSR01000002'],
    }),
  );
  const first = await reconciled(shop);
  t.deepEqual(kinds(first), ['missing', 'no_route_settlement']);
  t.is(await events(shop, first), 1, 'the first result is an event');
  const notified = (await listNotifications(world.db, shop.organizationId)).filter(
    (n) => n.kind === 'dms_reconciliation' && n.message.includes(DAY),
  );
  t.is(notified.length, 1);
  t.regex(notified[0]!.message, /salesman SM01 on 2026-11-25: 2 differences \(missing, no_route_settlement\)/);

  await reconciled(shop);
  t.is(await events(shop, first), 1, 'checked again unchanged: no event');

  // The next day, the missing invoice arrives late: its day is refreshed.
  await shop.push(saleInvoice('CSR01000002', 'UG0000002', 1, { method: 'cash' }));
  const refreshed = await reconciled(shop, NEXT_DAY);
  t.deepEqual(kinds(refreshed), ['no_route_settlement']);
  t.is(await events(shop, first), 2);
  t.true(refreshed.updatedAt > first.updatedAt);
  t.is(
    (await listNotifications(world.db, shop.organizationId)).filter(
      (n) => n.kind === 'dms_reconciliation' && n.message.includes(DAY),
    ).length,
    2,
  );
});

test('rule 4: a day older than the last three is checked again only when one of its documents changed', async (t) => {
  const shop = await readyShop();
  await shop.push(saleInvoice('CSR01000001', 'UG0000001', 1, { method: 'cash' }));
  const first = await reconciled(shop);
  const weekLater = new Date('2026-12-02T21:00:00.000Z');
  await reconcileDue(world.db, weekLater, shop.organizationId);
  const untouched = (await listReconciliations(world.db, shop.connection, {}, { date: DAY })).rows[0]!;
  t.is(untouched.checkedAt, first.checkedAt, 'not among the last three days and nothing changed: not checked');
  await shop.push(routeSettlement({ cashHandedIn: '28320', documents: ['CSR01000001'] }));
  const late = await reconciled(shop, weekLater);
  t.not(late.checkedAt, first.checkedAt);
  t.deepEqual(kinds(late), []);
});

/** The spec's example of a documentType on POST /dms/{system}/documents (generated/openapi.json). */
function specExample(name: string): Record<string, unknown> {
  const spec = JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8'));
  return structuredClone(
    spec.paths['/dms/{system}/documents'].post.requestBody.content['application/json'].examples[name].value,
  );
}

test("route settlement credit is what the day's sales still owe (not the gross credit sale): the spec's example day balances, and the gross figure is a credit difference", async (t) => {
  const day = ['sale_invoice', 'customer_collection', 'daily_totals'].map(specExample);
  const settlement = specExample('route_settlement') as { body: { credit: string } };
  // The example's invoice of 55 460 on credit, 30 000 collected on it: 25 460 still owed.
  t.is(settlement.body.credit, '25460');

  const shop = await readyShop();
  await shop.push(masterData.customer('UG0000123'));
  const flags = await shop.push(...day, settlement);
  t.deepEqual(
    flags.map((flag) => flag.state),
    ['posted', 'posted', 'posted', 'posted'],
  );
  const result = await world.db
    .selectFrom('dms_documents')
    .select('result')
    .where('organization_id', '=', shop.organizationId)
    .where('id', '=', flags[3]!.documentId)
    .executeTakeFirstOrThrow();
  t.like(result.result, { credit: { stated: '25460', posted: '25460' } });
  const balanced = await reconciled(shop);
  t.deepEqual(balanced.differences, [], 'the example day agrees with what posted');
  t.is(balanced.status, 'balanced');

  const gross = await readyShop();
  await gross.push(masterData.customer('UG0000123'));
  await gross.push(...day, { ...settlement, body: { ...settlement.body, credit: '55460' } });
  const differs = await reconciled(gross);
  t.deepEqual(kinds(differs), ['credit']);
  t.like(differs.differences[0], { expected: '55460', actual: '25460', difference: '30000' });
});
