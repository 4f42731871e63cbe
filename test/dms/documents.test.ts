// What each kind of DMS document does, proved at the service level: it maps onto the same posting functions as the
// REST API (an invoice from the DMS writes the same ledger rows as one from POST /invoices), master data is created
// and updated by its codes, stock moves, money is allocated and reversed, a day sent out of order posts once its
// dependencies arrive, and the fiscal rules refuse before posting anything. The ledger checker runs over every
// organisation when the file closes.
import test from 'ava';
import { sql } from 'kysely';
import { setConnection, SIMULATOR_BASE_URL } from '../../server/connectors/connections.js';
import { createInvoice } from '../../server/modules/invoices/documents.js';
import { changeConnection } from '../../server/modules/dms/operations.js';
import { inTransaction } from '../../server/platform/database/transaction.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';
import { DAY, doc, dmsShop, masterData, saleInvoice, stockDay, type DmsShop } from '../support/dms.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('dms-documents');
});
test.after.always(async () => {
  await world?.close();
});

async function readyShop(options: { fiscal?: boolean } = {}): Promise<DmsShop> {
  const shop = await dmsShop(world);
  if (options.fiscal)
    await world.post((tx) =>
      setConnection(
        tx,
        shop.organizationId,
        'fiscal',
        { baseUrl: SIMULATOR_BASE_URL, account: '1000000001', deviceNo: 'D1' },
        null,
      ),
    );
  const flags = await shop.push(
    masterData.soda,
    masterData.water,
    masterData.prices,
    masterData.salesman(),
    masterData.customer('UG0000001'),
    masterData.customer('UG0000002'),
    ...stockDay(20),
  );
  if (flags.some((flag) => flag.state !== 'posted')) throw new Error(`set-up did not post: ${JSON.stringify(flags)}`);
  return shop;
}

const level = async (shop: DmsShop, locationCode: string, productCode: string): Promise<number> => {
  const row = await world.db
    .selectFrom('stock_levels as l')
    .innerJoin('locations as loc', (j) =>
      j.onRef('loc.organization_id', '=', 'l.organization_id').onRef('loc.id', '=', 'l.location_id'),
    )
    .innerJoin('products as p', (j) =>
      j.onRef('p.organization_id', '=', 'l.organization_id').onRef('p.id', '=', 'l.product_id'),
    )
    .select('l.quantity')
    .where('l.organization_id', '=', shop.organizationId)
    .where('loc.code', '=', locationCode)
    .where('p.product_code', '=', productCode)
    .executeTakeFirst();
  return row ? Number(row.quantity) : 0;
};

const invoiceRow = (shop: DmsShop, id: string) =>
  world.db
    .selectFrom('invoices')
    .select(['status', 'balance', 'total', 'trip_id', 'fiscal_status', 'number'])
    .where('organization_id', '=', shop.organizationId)
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

test('customer and product documents create the records by their codes, and a new version updates them', async (t) => {
  const shop = await readyShop();
  const [renamed] = await shop.push(masterData.customer('UG0000001', 'Kisenyi Corner Shop'));
  t.is(renamed!.state, 'posted');
  const customer = await world.db
    .selectFrom('customers')
    .select(['name', 'route_id', 'status'])
    .where('organization_id', '=', shop.organizationId)
    .where('outlet_code', '=', 'UG0000001')
    .executeTakeFirstOrThrow();
  t.is(customer.name, 'Kisenyi Corner Shop');
  t.truthy(customer.route_id, 'on route R01');
  const versions = await world.db
    .selectFrom('dms_documents')
    .select(['version', 'state'])
    .where('organization_id', '=', shop.organizationId)
    .where('natural_key', '=', 'DIST001|customer|UG0000001')
    .orderBy('version')
    .execute();
  t.deepEqual(
    versions,
    [
      { version: 1, state: 'superseded' },
      { version: 2, state: 'posted' },
    ],
    'master data: a new content is a new version',
  );
  const [inactive] = await shop.push({ ...masterData.soda, status: 'inactive' });
  t.is(inactive!.state, 'posted');
  t.is(
    (
      await world.db
        .selectFrom('products')
        .select('status')
        .where('organization_id', '=', shop.organizationId)
        .where('product_code', '=', '100201')
        .executeTakeFirstOrThrow()
    ).status,
    'inactive',
  );
});

test('a salesman document sets the route, its salesman and the outlets of its plan; outlets not yet received wait (R08)', async (t) => {
  const shop = await readyShop();
  const [plan] = await shop.push(masterData.salesman(['UG0000002', 'UG0000001', 'UG0000003']));
  t.like(plan, { state: 'received', note: 'Customer UG0000003 has not been received.' });
  await shop.push(masterData.customer('UG0000003'));
  t.is((await shop.flags([plan!.documentId]))[0]!.state, 'posted');
  const route = await world.db
    .selectFrom('routes')
    .innerJoin('salespeople as s', (j) =>
      j.onRef('s.organization_id', '=', 'routes.organization_id').onRef('s.id', '=', 'routes.salesperson_id'),
    )
    .select(['routes.id', 's.salesman_code', 'routes.van_location_id'])
    .where('routes.organization_id', '=', shop.organizationId)
    .where('routes.route_code', '=', 'R01')
    .executeTakeFirstOrThrow();
  t.is(route.salesman_code, 'SM01');
  t.truthy(route.van_location_id, "the van V_R01-G is the route's");
  const outlets = await world.db
    .selectFrom('customers')
    .select('outlet_code')
    .where('organization_id', '=', shop.organizationId)
    .where('route_id', '=', route.id)
    .orderBy('outlet_code')
    .execute();
  t.deepEqual(
    outlets.map((o) => o.outlet_code),
    ['UG0000001', 'UG0000002', 'UG0000003'],
  );
});

test("a salesman document with visits sets the route's journey plan through the journey-plans module (each weekday in the order listed); a new version replaces it; a biweekly visit without its parity is R09", async (t) => {
  const shop = await readyShop();
  const plan = (visits: unknown[]) =>
    doc(
      'salesman',
      'R01',
      {
        salesmanCode: 'SM01',
        salesmanName: 'Okello James',
        routeName: 'Kisenyi',
        outlets: ['UG0000001', 'UG0000002'],
        visits,
      },
      { status: 'active' },
    );
  const [set] = await shop.push(
    plan([
      { outletCode: 'UG0000002', weekday: 1 },
      { outletCode: 'UG0000001', weekday: 1 },
      { outletCode: 'UG0000001', weekday: 4, frequency: 'biweekly', weekParity: 1 },
    ]),
  );
  t.is(set!.state, 'posted');
  const visits = async () =>
    (
      await world.db
        .selectFrom('journey_plan_visits as v')
        .innerJoin('journey_plans as p', (j) =>
          j.onRef('p.organization_id', '=', 'v.organization_id').onRef('p.id', '=', 'v.journey_plan_id'),
        )
        .innerJoin('routes as r', (j) =>
          j.onRef('r.organization_id', '=', 'p.organization_id').onRef('r.id', '=', 'p.route_id'),
        )
        .innerJoin('customers as c', (j) =>
          j.onRef('c.organization_id', '=', 'v.organization_id').onRef('c.id', '=', 'v.customer_id'),
        )
        .select(['c.outlet_code', 'v.weekday', 'v.sequence', 'v.frequency', 'v.week_parity'])
        .where('v.organization_id', '=', shop.organizationId)
        .where('r.route_code', '=', 'R01')
        .orderBy('v.weekday')
        .orderBy('v.sequence')
        .execute()
    ).map((v) => [v.outlet_code, v.weekday, v.sequence, v.frequency, v.week_parity]);
  t.deepEqual(await visits(), [
    ['UG0000002', 1, 1, 'weekly', null],
    ['UG0000001', 1, 2, 'weekly', null],
    ['UG0000001', 4, 1, 'biweekly', 1],
  ]);
  const events = await world.db
    .selectFrom('events')
    .select('id')
    .where('organization_id', '=', shop.organizationId)
    .where('type', '=', 'journey_plan.updated')
    .execute();
  t.is(events.length, 1, "the module's own event");

  const [changed] = await shop.push(plan([{ outletCode: 'UG0000001', weekday: 2 }]));
  t.is(changed!.state, 'posted');
  t.deepEqual(await visits(), [['UG0000001', 2, 1, 'weekly', null]], 'replaced whole');
  const [refused] = await shop.push(plan([{ outletCode: 'UG0000001', weekday: 3, frequency: 'biweekly' }]));
  t.like(refused, { state: 'rejected', reasonCode: 'R09' });
  t.regex(refused!.reasonText!, /biweekly without weekParity/);
  t.deepEqual(await visits(), [['UG0000001', 2, 1, 'weekly', null]], 'nothing changed');
});

test('van replenishment and van stock out move stock between the warehouse, the van and the damages store', async (t) => {
  const shop = await readyShop();
  t.deepEqual(
    [await level(shop, 'M01', '100201'), await level(shop, 'V_R01-G', '100201')],
    [20 * 24, 20 * 24],
    'the company invoice received 40 cases, the replenishment moved 20 to the van',
  );
  const [back] = await shop.push(
    doc('van_stock_out', 'VUR01-1', {
      routeCode: 'R01',
      destination: 'warehouse',
      lines: [{ productCode: '100201', unit: 'case', quantity: 5 }],
    }),
  );
  t.is(back!.state, 'posted');
  t.deepEqual([await level(shop, 'M01', '100201'), await level(shop, 'V_R01-G', '100201')], [25 * 24, 15 * 24]);
  const [damaged] = await shop.push(
    doc('van_stock_out', 'VUR01-2', {
      routeCode: 'R01',
      destination: 'damages',
      lines: [{ productCode: '100201', unit: 'bottle', quantity: 3 }],
    }),
  );
  t.like(damaged, { state: 'received' }, "the van's bad stock holds nothing yet: it waits for stock");
  t.regex(damaged!.note!, /^Stock not yet on the van V_R01-B/);
});

test("an invoice posts selling, free-issue and empties lines from the van, on the salesman's DMS day", async (t) => {
  const shop = await readyShop();
  await shop.push(
    doc(
      'product',
      '900001',
      { name: 'Crate', packSize: 1, taxRate: '0', isEmpty: true, sellingUnits: ['piece'], tracksStock: false },
      { status: 'active' },
    ),
    {
      ...masterData.soda,
      body: { ...masterData.soda.body, empties: [{ productCode: '900001', quantity: 1, per: 'case' }] },
    },
  );
  const invoice = saleInvoice('CSR01000101', 'UG0000001', 2);
  (invoice.body as any).lines.push({ productCode: '100201', unit: 'bottle', quantity: 4, unitPrice: '0', free: true });
  const [flag] = await shop.push(invoice);
  t.is(flag!.state, 'posted', JSON.stringify(flag));
  const lines = await world.db
    .selectFrom('invoice_lines')
    .select(['kind', 'quantity', 'unit'])
    .where('organization_id', '=', shop.organizationId)
    .where('invoice_id', '=', flag!.mikonoRef!.id)
    .orderBy('line_number')
    .execute();
  t.deepEqual(lines, [
    { kind: 'sale', quantity: 2, unit: 'case' },
    { kind: 'free', quantity: 4, unit: 'bottle' },
    { kind: 'empties', quantity: 2, unit: 'piece' },
  ]);
  t.is(await level(shop, 'V_R01-G', '100201'), 20 * 24 - 48 - 4);
  const trip = await world.db
    .selectFrom('trips')
    .select(['source', 'status', 'business_date'])
    .where('organization_id', '=', shop.organizationId)
    .where('id', '=', (await invoiceRow(shop, flag!.mikonoRef!.id)).trip_id!)
    .executeTakeFirstOrThrow();
  t.deepEqual({ source: trip.source, status: trip.status }, { source: 'dms', status: 'in_transit' });
});

test('one posting path: the same sale posted by REST and as a DMS CS document writes the same ledger rows', async (t) => {
  const shop = await readyShop();
  const [flag] = await shop.push(saleInvoice('CSR01000102', 'UG0000001', 3, { discount: '2000' }));
  const ids = await world.db
    .selectFrom('invoices')
    .select(['customer_id', 'location_id', 'salesperson_id'])
    .where('organization_id', '=', shop.organizationId)
    .where('id', '=', flag!.mikonoRef!.id)
    .executeTakeFirstOrThrow();
  const product = await world.db
    .selectFrom('products')
    .select('id')
    .where('organization_id', '=', shop.organizationId)
    .where('product_code', '=', '100201')
    .executeTakeFirstOrThrow();
  const rest = await world.post((tx) =>
    createInvoice(tx, shop.operator, {
      customerId: ids.customer_id,
      locationId: ids.location_id!,
      issueDate: DAY,
      currency: 'UGX',
      salespersonId: ids.salesperson_id,
      lines: [{ productId: product.id, unit: 'case', quantity: 3, unitPrice: '24000', discount: '2000' }],
    }),
  );
  const ledger = async (invoiceId: string) => ({
    stock: await world.db
      .selectFrom('stock_movements')
      .select(['line_number', 'product_id', 'from_location_id', 'to_location_id', 'quantity', 'unit_cost'])
      .where('organization_id', '=', shop.organizationId)
      .where('document_type', '=', 'invoice')
      .where('document_id', '=', invoiceId)
      .orderBy('line_number')
      .execute(),
    account: await world.db
      .selectFrom('customer_account_entries')
      .select(['type', 'customer_id', 'line_number', 'amount', 'currency'])
      .where('organization_id', '=', shop.organizationId)
      .where('document_type', '=', 'invoice')
      .where('document_id', '=', invoiceId)
      .orderBy('id')
      .execute(),
    invoice: await world.db
      .selectFrom('invoices')
      .select(['subtotal', 'discount', 'tax', 'total', 'balance', 'status', 'trip_id', 'customer_id', 'location_id'])
      .where('organization_id', '=', shop.organizationId)
      .where('id', '=', invoiceId)
      .executeTakeFirstOrThrow(),
  });
  const dms = await ledger(flag!.mikonoRef!.id);
  t.true(dms.stock.length > 0 && dms.account.length > 0);
  t.deepEqual(await ledger(rest.id), dms);
});

test("a return posts its credit note at the invoice's prices, good stock back to the van and damaged to its bad stock", async (t) => {
  const shop = await readyShop();
  const [sale] = await shop.push(saleInvoice('CSR01000103', 'UG0000001', 2));
  const [ret] = await shop.push(
    doc('sale_return', 'RTR01', {
      routeCode: 'R01',
      customerCode: 'UG0000001',
      invoiceNumber: 'CSR01000103',
      lines: [
        { productCode: '100201', unit: 'bottle', quantity: 2, condition: 'good' },
        { productCode: '100201', unit: 'bottle', quantity: 1, condition: 'damaged' },
      ],
    }),
  );
  t.is(ret!.state, 'posted', JSON.stringify(ret));
  t.is(ret!.mikonoRef!.table, 'returns');
  t.is(await level(shop, 'V_R01-B', '100201'), 1);
  const invoice = await invoiceRow(shop, sale!.mikonoRef!.id);
  t.is(Number(invoice.balance), 56640 - 3 * 1180, 'three bottles at 1 000 + 18 % credited');
  const [again] = await shop.push(
    doc('sale_return', 'RTR01', {
      routeCode: 'R01',
      customerCode: 'UG0000001',
      invoiceNumber: 'CSR01000103',
      lines: [{ productCode: '100201', unit: 'bottle', quantity: 1, condition: 'good' }],
    }),
  );
  t.is(again!.state, 'posted', 'the same RT number with other lines is another return (numbers repeat)');
});

test('a credit note against an invoice applies to it; a cancelled version cancels it (the accounting system does not hold it)', async (t) => {
  const shop = await readyShop();
  const [sale] = await shop.push(saleInvoice('CSR01000104', 'UG0000001', 2));
  const note = doc('credit_note', 'CRN-1', {
    customerCode: 'UG0000001',
    invoiceNumber: 'CSR01000104',
    reason: 'Price agreed',
    lines: [{ productCode: '100201', unit: 'case', quantity: 1, unitPrice: '1000' }],
  });
  const [issued] = await shop.push(note);
  t.is(issued!.mikonoRef!.table, 'credit_notes');
  t.is(Number((await invoiceRow(shop, sale!.mikonoRef!.id)).balance), 56640 - 1180);
  const [cancelled] = await shop.push({ ...note, status: 'cancelled' });
  t.is(cancelled!.state, 'posted');
  t.is((await shop.flags([issued!.documentId]))[0]!.state, 'superseded');
  t.is(
    (
      await world.db
        .selectFrom('credit_notes')
        .select('status')
        .where('organization_id', '=', shop.organizationId)
        .where('id', '=', issued!.mikonoRef!.id)
        .executeTakeFirstOrThrow()
    ).status,
    'cancelled',
  );
  t.is(Number((await invoiceRow(shop, sale!.mikonoRef!.id)).balance), 56640);
});

test('a collection is allocated to CS invoices by number, the rest left on the account; a cleared cheque moves nothing, a bounced one reverses it', async (t) => {
  const shop = await readyShop();
  const [first] = await shop.push(saleInvoice('CSR01000105', 'UG0000002', 1));
  const [second] = await shop.push(saleInvoice('CSR01000106', 'UG0000002', 1));
  const collection = doc('customer_collection', 'PYR01000001', {
    routeCode: 'R01',
    customerCode: 'UG0000002',
    method: 'cheque',
    reference: '000311',
    amount: '60000',
    currency: 'UGX',
    allocations: [
      { invoiceNumber: 'CSR01000105', amount: '28320' },
      { invoiceNumber: 'CSR01000106', amount: '20000' },
    ],
  });
  const [paid] = await shop.push(collection);
  t.is(paid!.state, 'posted', JSON.stringify(paid));
  t.deepEqual(
    [
      (await invoiceRow(shop, first!.mikonoRef!.id)).status,
      Number((await invoiceRow(shop, second!.mikonoRef!.id)).balance),
    ],
    ['paid', 8320],
  );
  const receipts = await world.db
    .selectFrom('payments')
    .select(['amount', 'invoice_id', 'trip_id'])
    .where('organization_id', '=', shop.organizationId)
    .orderBy('id')
    .execute();
  t.deepEqual(
    receipts.map((r) => Number(r.amount)).sort((a, b) => a - b),
    [11680, 20000, 28320],
    'one receipt per allocation and one for the rest',
  );
  t.true(
    receipts.every((r) => r.trip_id !== null),
    "recorded on the salesman's DMS day",
  );
  await shop.push(
    doc('reason_code', 'CP01', { kind: 'cheque', description: 'Insufficient funds' }, { status: 'active' }),
  );
  const cheque = doc(
    'cheque_processing',
    'CHQ-1',
    { collectionNumber: 'PYR01000001', chequeNumber: '000311', reasonCode: 'CP01' },
    { status: 'cleared' },
  );
  const [cleared] = await shop.push(cheque);
  t.is(cleared!.state, 'posted');
  t.is((await invoiceRow(shop, first!.mikonoRef!.id)).status, 'paid', 'a cleared cheque moves nothing');
  const [bounced] = await shop.push({ ...cheque, status: 'bounced' });
  t.is(bounced!.state, 'posted', JSON.stringify(bounced));
  t.deepEqual(
    [
      (await invoiceRow(shop, first!.mikonoRef!.id)).status,
      Number((await invoiceRow(shop, second!.mikonoRef!.id)).balance),
    ],
    ['open', 28320],
  );
  const statuses = await world.db
    .selectFrom('payments')
    .select('status')
    .where('organization_id', '=', shop.organizationId)
    .execute();
  t.true(statuses.every((s) => s.status === 'reversed'));
});

test("a bounced cheque waits (R08) while the collection's accounting posting is pending, then is rejected with R08 after 48 hours", async (t) => {
  const shop = await readyShop();
  await world.post((tx) =>
    setConnection(tx, shop.organizationId, 'accounting', { baseUrl: SIMULATOR_BASE_URL, account: '2' }, null),
  );
  await shop.push(saleInvoice('CSR01000107', 'UG0000002', 1));
  await shop.push(
    doc('customer_collection', 'PYR01000002', {
      routeCode: 'R01',
      customerCode: 'UG0000002',
      method: 'cheque',
      reference: '77',
      amount: '28320',
      currency: 'UGX',
      allocations: [{ invoiceNumber: 'CSR01000107', amount: '28320' }],
    }),
  );
  const [bounced] = await shop.push(
    doc('cheque_processing', 'CHQ-2', { collectionNumber: 'PYR01000002', chequeNumber: '77' }, { status: 'bounced' }),
  );
  t.is(bounced!.state, 'received');
  t.regex(bounced!.note!, /^The accounting posting of RCT-\d+ is pending \(not sent yet\); the reversal waits for it/);
  t.regex(
    (
      await world.db
        .selectFrom('dms_documents')
        .select('waiting_for')
        .where('id', '=', bounced!.documentId)
        .executeTakeFirstOrThrow()
    ).waiting_for!,
    /^posting:payment:pmt_/,
    'woken when that posting settles',
  );
  await world.db
    .updateTable('dms_documents')
    .set({ retry_until: sql<Date>`now() - interval '1 second'`, next_attempt_at: sql<Date>`now()` })
    .where('organization_id', '=', shop.organizationId)
    .where('id', '=', bounced!.documentId)
    .execute();
  await shop.drain();
  t.like((await shop.flags([bounced!.documentId]))[0], {
    state: 'rejected',
    reasonCode: 'R08',
    reasonText: bounced!.note,
  });
});

test('a day sent out of order (collection before its invoice, return before its invoice, sale before the stock) posts everything once the dependencies arrive', async (t) => {
  const shop = await dmsShop(world);
  const day = [
    doc('customer_collection', 'PYR01000003', {
      routeCode: 'R01',
      customerCode: 'UG0000001',
      method: 'cash',
      amount: '28320',
      currency: 'UGX',
      allocations: [{ invoiceNumber: 'CSR01000108', amount: '28320' }],
    }),
    doc('sale_return', 'RTR01', {
      routeCode: 'R01',
      customerCode: 'UG0000002',
      invoiceNumber: 'CSR01000109',
      lines: [{ productCode: '100201', unit: 'bottle', quantity: 1, condition: 'good' }],
    }),
    saleInvoice('CSR01000108', 'UG0000001', 1),
    saleInvoice('CSR01000109', 'UG0000002', 1),
    ...stockDay(5).reverse(),
    masterData.customer('UG0000002'),
    masterData.customer('UG0000001'),
    masterData.prices,
    masterData.soda,
    masterData.salesman(),
  ];
  const flags = await shop.push(...day);
  t.deepEqual(
    flags.map((f) => `${f.documentNumber} ${f.state}`),
    day.map((d) => `${d.documentNumber} posted`),
  );
});

test('a van day of invoices posts as one set: one short of stock and one for a customer not received wait, one with wrong totals is R04, the rest post in order; the waiting ones post when what they wait for arrives', async (t) => {
  const shop = await readyShop(); // 20 cases on the van
  const day = [
    saleInvoice('CSR01000201', 'UG0000001', 8),
    saleInvoice('CSR01000202', 'UG0000002', 15), // 12 left: short
    saleInvoice('CSR01000203', 'UG0000009', 1), // not received yet
    {
      ...saleInvoice('CSR01000204', 'UG0000002', 1),
      body: {
        ...saleInvoice('CSR01000204', 'UG0000002', 1).body,
        totals: { subtotal: '24000', discount: '0', tax: '4000', total: '28000' },
      },
    },
    saleInvoice('CSR01000205', 'UG0000002', 12), // takes what the short one did not
  ];
  const flags = await shop.push(...day);
  t.deepEqual(
    flags.map((f) => [f.documentNumber, f.state, f.reasonCode ?? f.note?.replace(/:.*/s, '') ?? null]),
    [
      ['CSR01000201', 'posted', null],
      ['CSR01000202', 'received', 'Stock not yet on the van V_R01-G'],
      ['CSR01000203', 'received', 'Customer UG0000009 has not been received.'],
      ['CSR01000204', 'rejected', 'R04'],
      ['CSR01000205', 'posted', null],
    ],
  );
  const numbers = await Promise.all(
    [flags[0]!, flags[4]!].map(async (f) => (await invoiceRow(shop, f.mikonoRef!.id)).number),
  );
  t.deepEqual(numbers, ['INV-000001', 'INV-000002'], 'numbered in the order sent, the refused ones taking none');
  t.is(await level(shop, 'V_R01-G', '100201'), 0);

  const [more, customer] = await shop.push(
    doc('van_replenishment', 'VR000002', {
      routeCode: 'R01',
      fromLocationCode: 'M01',
      lines: [{ productCode: '100201', unit: 'case', quantity: 16 }],
    }),
    masterData.customer('UG0000009'),
  );
  t.deepEqual([more!.state, customer!.state], ['posted', 'posted']);
  t.deepEqual(
    (await shop.flags([flags[1]!.documentId, flags[2]!.documentId])).map((f) => f.state),
    ['posted', 'posted'],
  );
  t.is(await level(shop, 'V_R01-G', '100201'), 0);
});

test('fiscal rules: while fiscalisation applies, a card sale, an amount-only credit note and a credit note for a product on two lines are rejected with R09 before anything posts', async (t) => {
  const shop = await readyShop({ fiscal: true });
  const invoices = async () =>
    Number(
      (
        await world.db
          .selectFrom('invoices')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('organization_id', '=', shop.organizationId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const before = await invoices();
  const [card] = await shop.push(saleInvoice('CSR01000110', 'UG0000001', 1, { method: 'card' }));
  t.like(card, { state: 'rejected', reasonCode: 'R09' });
  t.regex(card!.reasonText!, /records cash and mobile money only/);
  t.is(await invoices(), before);
  const twoLines = saleInvoice('CSR01000111', 'UG0000001', 1, { method: 'mobile_money' });
  (twoLines.body as any).payment.reference = 'MM-1';
  (twoLines.body as any).lines.push({ productCode: '100201', unit: 'case', quantity: 1, unitPrice: '24000' });
  Object.assign((twoLines.body as any).totals, { subtotal: '48000', tax: '8640', total: '56640' });
  const [sale] = await shop.push(twoLines);
  t.is(sale!.state, 'posted', JSON.stringify(sale));
  t.is(
    (await invoiceRow(shop, sale!.mikonoRef!.id)).fiscal_status,
    'pending',
    'submitted after posting (the flag did not wait for it)',
  );
  const [amountOnly] = await shop.push(
    doc('credit_note', 'CRN-2', {
      customerCode: 'UG0000001',
      invoiceNumber: 'CSR01000111',
      reason: 'Goodwill',
      amount: '1000',
    }),
  );
  t.like(amountOnly, { state: 'rejected', reasonCode: 'R09' });
  t.regex(amountOnly!.reasonText!, /carries only an amount/);
  const [doubled] = await shop.push(
    doc('credit_note', 'CRN-3', {
      customerCode: 'UG0000001',
      invoiceNumber: 'CSR01000111',
      reason: 'Flat',
      lines: [{ productCode: '100201', unit: 'case', quantity: 1, unitPrice: '1000' }],
    }),
  );
  t.like(doubled, { state: 'rejected', reasonCode: 'R09' });
  t.regex(
    doubled!.reasonText!,
    /Product 100201 is on 2 lines of invoice INV-\d+; a fiscal credit note credits a product that is on exactly one line/,
  );
});

test('the fiscalise switch: off, DMS invoices are not submitted, and turning it off cancels the submissions not sent yet', async (t) => {
  const shop = await readyShop({ fiscal: true });
  const [before] = await shop.push(saleInvoice('CSR01000112', 'UG0000001', 1, { method: 'cash' }));
  t.is((await invoiceRow(shop, before!.mikonoRef!.id)).fiscal_status, 'pending');
  const { cancelled } = await inTransaction(world.db, (tx) =>
    changeConnection(tx, shop.organizationId, 'canonical', { fiscalise: false }),
  );
  t.is(cancelled, 1);
  t.is((await invoiceRow(shop, before!.mikonoRef!.id)).fiscal_status, 'cancelled');
  shop.connection.fiscalise = false;
  const [after] = await shop.push(saleInvoice('CSR01000113', 'UG0000001', 1, { method: 'card' }));
  t.is(after!.state, 'posted', 'a card sale posts when fiscalisation does not apply');
  t.is((await invoiceRow(shop, after!.mikonoRef!.id)).fiscal_status, null);
});

test('a stock adjustment posts with its reason code; an inventory summary writes nothing and keeps its differences', async (t) => {
  const shop = await readyShop();
  const [waiting] = await shop.push(
    doc('stock_adjustment', 'IJ000001', {
      locationCode: 'M01',
      reasonCode: 'OG01',
      lines: [{ productCode: '100201', unit: 'bottle', quantity: -6 }],
    }),
  );
  t.like(waiting, { state: 'received', note: 'Reason code OG01 has not been received.' });
  await shop.push(doc('reason_code', 'OG01', { kind: 'stock', description: 'Breakage' }, { status: 'active' }));
  t.is((await shop.flags([waiting!.documentId]))[0]!.state, 'posted');
  t.is(await level(shop, 'M01', '100201'), 20 * 24 - 6);
  const movements = async () =>
    Number(
      (
        await world.db
          .selectFrom('stock_movements')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('organization_id', '=', shop.organizationId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const before = await movements();
  const [summary] = await shop.push(
    doc('inventory_summary', 'INV-M01-1', {
      locationCode: 'M01',
      lines: [
        { productCode: '100201', quantity: 480 },
        { productCode: '100301', quantity: 0 },
      ],
    }),
  );
  t.is(summary!.state, 'posted');
  t.is(await movements(), before);
  const stored = await world.db
    .selectFrom('dms_documents')
    .select('result')
    .where('organization_id', '=', shop.organizationId)
    .where('id', '=', summary!.documentId)
    .executeTakeFirstOrThrow();
  t.deepEqual(stored.result, {
    locationCode: 'M01',
    differences: [{ productCode: '100201', dms: 480, service: 474, difference: 6 }],
  });
});
