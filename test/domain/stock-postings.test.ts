// Stock documents in the accounting system: what changes the value of the stock the books hold is posted through the
// real QuickBooks client to the simulator (a JournalEntry at cost, a supplier's Bill), and nothing else is.
import test from 'ava';
import { pino } from 'pino';
import type { OperatorActor } from '../../server/platform/access/actor.js';
import { NO_ACCOUNTING_CONNECTION } from '../../server/modules/postings/queue.js';
import { setConnection, SIMULATOR_BASE_URL } from '../../server/connectors/connections.js';
import { startSimulatorServer, type SimulatorServer } from '../../server/connectors/simulators/server.js';
import { quickBooksEntity } from '../../server/connectors/simulators/quickbooks/router.js';
import { customers } from '../../server/modules/customers/service.js';
import { createInvoice } from '../../server/modules/invoices/documents.js';
import { locations } from '../../server/modules/locations/service.js';
import { retryPostings } from '../../server/modules/postings/operations.js';
import { runPosting } from '../../server/modules/postings/run.js';
import { products } from '../../server/modules/products/service.js';
import { processReturn } from '../../server/modules/returns/documents.js';
import { NOTHING_TO_BOOK, postStockAdjustment, postStockTransfer } from '../../server/modules/stock/documents.js';
import { planStockEntry } from '../../server/modules/stock/posting.js';
import { setAccounts } from '../../server/platform/access/accounts.js';
import type { SendMany } from '../../server/platform/jobs/jobs.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';

let world: DomainWorld;
let simulators: SimulatorServer;
test.before(async () => {
  world = await domainWorld('stock-postings');
  simulators = await startSimulatorServer(world.db);
});
test.after.always(async () => {
  await simulators?.stop();
  await world?.close();
});

interface Depot {
  organizationId: string;
  operator: OperatorActor;
  realm: string;
  soda: string;
  m01: string;
  m02: string;
  d01: string;
}

let realms = 880_000;
const DAY = { day: '2026-11-20', field: '' };

/** Soda (24 a case) in M01, M02 and the damages store D01; connected to the QuickBooks simulator unless told not to. */
async function depot(connected = true): Promise<Depot> {
  const { organization, operator } = await world.organization({ modules: ['delivery', 'field-sales'] });
  const realm = String(realms++);
  return world.post(async (tx) => {
    if (connected)
      await setConnection(tx, organization.id, 'accounting', { baseUrl: SIMULATOR_BASE_URL, account: realm }, null);
    const soda = await products.create(tx, operator, {
      productCode: '300001',
      name: 'Soda 300ml',
      packSize: 24,
      sellingUnits: ['case', 'bottle'],
      taxRate: 18,
    });
    const m01 = await locations.create(tx, operator, { code: 'M01', name: 'Main' });
    const m02 = await locations.create(tx, operator, { code: 'M02', name: 'Second' });
    const d01 = await locations.create(tx, operator, { code: 'D01', name: 'Damages' });
    return { organizationId: organization.id, operator, realm, soda: soda.id, m01: m01.id, m02: m02.id, d01: d01.id };
  });
}

/** The posting worker's attempts, through the real QuickBooks client against the simulator, until none is due. */
async function runPostings(d: Depot): Promise<void> {
  const runner = {
    db: world.db,
    settings: { secretKey: Buffer.alloc(32), simulatorUrl: simulators.url },
    processId: 'test',
    sendMany: (async () => {}) as SendMany,
    logger: pino({ level: 'silent' }),
  };
  const due = await world.db
    .selectFrom('external_postings')
    .select('id')
    .where('organization_id', '=', d.organizationId)
    .where('system', '=', 'accounting')
    .where('status', '=', 'pending')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  for (const row of due) await runPosting(runner, { organizationId: d.organizationId, postingId: row.id });
}

const documentRow = (d: Depot, id: string) =>
  world.db
    .selectFrom('stock_documents')
    .select(['number', 'posting_status', 'accounting_type', 'accounting_ref', 'posting_reason'])
    .where('organization_id', '=', d.organizationId)
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

const postingsOf = (d: Depot, id: string) =>
  world.db
    .selectFrom('external_postings')
    .select(['system', 'status', 'reason'])
    .where('organization_id', '=', d.organizationId)
    .where('document_id', '=', id)
    .execute();

type JournalLine = { Amount: number; JournalEntryLineDetail: { PostingType: string; AccountRef: { value: string } } };
const journalLines = (entry: Record<string, any> | null) =>
  ((entry?.Line ?? []) as JournalLine[]).map((line) => [
    line.JournalEntryLineDetail.AccountRef.value,
    line.JournalEntryLineDetail.PostingType,
    line.Amount,
  ]);

test('an opening adjustment is a JournalEntry at cost (Inventory Asset against Opening Balance Equity) on its business date; a count that finds less books the loss to Inventory Shrinkage at the moving average cost', async (t) => {
  const d = await depot();
  const opening = await world.post((tx) =>
    postStockAdjustment(tx, d.operator, {
      reasonCode: 'OPENING',
      date: DAY,
      lines: [{ productId: d.soda, locationId: d.m01, unit: 'case', quantity: 10, unitCost: '24000' }],
    }),
  );
  t.is(opening.postingStatus, 'pending');
  // 10 cases at 24 000 and 2 more at 30 000: the moving average of a bottle is 300 000 / 288 = 1041.666667.
  await world.post((tx) =>
    postStockAdjustment(tx, d.operator, {
      reasonCode: 'OPENING',
      date: DAY,
      lines: [{ productId: d.soda, locationId: d.m01, unit: 'case', quantity: 2, unitCost: '30000' }],
    }),
  );
  const count = await world.post((tx) =>
    postStockAdjustment(tx, d.operator, {
      reasonCode: 'COUNT',
      date: { day: '2026-11-21', field: '' },
      lines: [{ productId: d.soda, locationId: d.m01, unit: 'bottle', countedQuantity: 276 }],
    }),
  );
  await runPostings(d);

  t.like(await documentRow(d, opening.id), {
    posting_status: 'posted',
    accounting_type: 'JournalEntry',
    posting_reason: null,
  });
  const entry = await quickBooksEntity(world.db, d.realm, 'JournalEntry', opening.number);
  t.is(entry?.TxnDate, '2026-11-20');
  t.deepEqual(journalLines(entry), [
    ['Inventory Asset', 'Debit', 240000],
    ['Opening Balance Equity', 'Credit', 240000],
  ]);

  // 12 bottles short at 1041.666667 each: 12 500 (rounded to the shilling once, both sides alike).
  t.like(await documentRow(d, count.id), { posting_status: 'posted', accounting_type: 'JournalEntry' });
  const loss = await quickBooksEntity(world.db, d.realm, 'JournalEntry', count.number);
  t.is(loss?.TxnDate, '2026-11-21');
  t.deepEqual(journalLines(loss), [
    ['Inventory Shrinkage', 'Debit', 12500],
    ['Inventory Asset', 'Credit', 12500],
  ]);
});

test('a transfer into the damages store writes the stock off (Damaged stock written off against Inventory Asset) and one out of it books it again; a transfer between warehouses posts nothing', async (t) => {
  const d = await depot();
  await world.post((tx) =>
    postStockAdjustment(tx, d.operator, {
      reasonCode: 'OPENING',
      date: DAY,
      lines: [{ productId: d.soda, locationId: d.m01, unit: 'case', quantity: 10, unitCost: '24000' }],
    }),
  );
  const damaged = await world.post((tx) =>
    postStockTransfer(tx, d.operator, {
      date: DAY,
      fromLocationId: d.m01,
      toLocationId: d.d01,
      lines: [{ productId: d.soda, unit: 'case', quantity: 2 }],
    }),
  );
  const back = await world.post((tx) =>
    postStockTransfer(tx, d.operator, {
      date: DAY,
      fromLocationId: d.d01,
      toLocationId: d.m01,
      lines: [{ productId: d.soda, unit: 'bottle', quantity: 6 }],
    }),
  );
  const moved = await world.post((tx) =>
    postStockTransfer(tx, d.operator, {
      date: DAY,
      fromLocationId: d.m01,
      toLocationId: d.m02,
      lines: [{ productId: d.soda, unit: 'case', quantity: 1 }],
    }),
  );
  await runPostings(d);

  t.deepEqual(journalLines(await quickBooksEntity(world.db, d.realm, 'JournalEntry', damaged.number)), [
    ['Damaged stock written off', 'Debit', 48000],
    ['Inventory Asset', 'Credit', 48000],
  ]);
  t.deepEqual(journalLines(await quickBooksEntity(world.db, d.realm, 'JournalEntry', back.number)), [
    ['Inventory Asset', 'Debit', 6000],
    ['Damaged stock written off', 'Credit', 6000],
  ]);
  t.like(await documentRow(d, damaged.id), { posting_status: 'posted', accounting_type: 'JournalEntry' });
  // Between two warehouses the books hold the same value: no posting row, and the block says why.
  t.is(moved.postingStatus, 'not_applicable');
  t.like(await documentRow(d, moved.id), {
    posting_status: 'not_applicable',
    accounting_ref: null,
    posting_reason: NOTHING_TO_BOOK,
  });
  t.deepEqual(await postingsOf(d, moved.id), []);
  t.is(await quickBooksEntity(world.db, d.realm, 'JournalEntry', moved.number), null);
});

test("goods received on a supplier's invoice are a Bill to the supplier's mapped vendor with item lines at the received cost; with no vendor mapped the posting fails, saying how to map it", async (t) => {
  const d = await depot();
  await setAccounts(world.db, d.organizationId, { vendors: { SUP01: 'Nile Breweries' } });
  const received = await world.post((tx) =>
    postStockAdjustment(tx, d.operator, {
      reasonCode: 'SUPPLIER_RECEIPT',
      supplierCode: 'SUP01',
      date: DAY,
      lines: [{ productId: d.soda, locationId: d.m01, unit: 'case', quantity: 5, unitCost: '18000' }],
    }),
  );
  const unmapped = await world.post((tx) =>
    postStockAdjustment(tx, d.operator, {
      reasonCode: 'SUPPLIER_RECEIPT',
      supplierCode: 'SUP02',
      date: DAY,
      lines: [{ productId: d.soda, locationId: d.m01, unit: 'case', quantity: 1, unitCost: '18000' }],
    }),
  );
  await runPostings(d);

  t.like(await documentRow(d, received.id), { posting_status: 'posted', accounting_type: 'Bill' });
  const bill = await quickBooksEntity(world.db, d.realm, 'Bill', received.number);
  t.like(bill, { TxnDate: '2026-11-20', VendorRef: { value: 'Nile Breweries' }, TotalAmt: 90000 });
  t.like((bill!.Line as unknown[])[0], {
    Amount: 90000,
    DetailType: 'ItemBasedExpenseLineDetail',
    ItemBasedExpenseLineDetail: { ItemRef: { value: d.soda }, Qty: 120, UnitPrice: 750 },
  });
  t.is(await quickBooksEntity(world.db, d.realm, 'JournalEntry', received.number), null, 'a Bill, not a journal entry');

  const failed = await documentRow(d, unmapped.id);
  t.is(failed.posting_status, 'failed');
  t.regex(
    failed.posting_reason ?? '',
    /Supplier SUP02 has no vendor mapped .*admin accounts set --vendor "SUP02=VENDOR NAME"/,
  );
  t.is(await quickBooksEntity(world.db, d.realm, 'Bill', unmapped.number), null);
  // Nothing was sent; mapped, `admin postings retry` posts it.
  t.like(
    await world.db
      .selectFrom('external_postings')
      .select(['status', 'attempts'])
      .where('organization_id', '=', d.organizationId)
      .where('document_id', '=', unmapped.id)
      .executeTakeFirstOrThrow(),
    { status: 'failed', attempts: 0 },
  );
  await setAccounts(world.db, d.organizationId, { vendors: { SUP02: 'Crown Beverages' } });
  t.is((await retryPostings(world.db, d.organizationId, unmapped.id)).length, 1);
  await runPostings(d);
  t.like(await documentRow(d, unmapped.id), {
    posting_status: 'posted',
    accounting_type: 'Bill',
    posting_reason: null,
  });
  t.like(await quickBooksEntity(world.db, d.realm, 'Bill', unmapped.number), {
    VendorRef: { value: 'Crown Beverages' },
    TotalAmt: 18000,
  });
});

test('a damaged return into the damages store is written off at the cost the sale took the goods out at; a good return posts no stock entry (its credit memo brought the goods back)', async (t) => {
  const d = await depot();
  const customer = await world.post(async (tx) => {
    await postStockAdjustment(tx, d.operator, {
      reasonCode: 'OPENING',
      date: DAY,
      lines: [{ productId: d.soda, locationId: d.m01, unit: 'case', quantity: 10, unitCost: '24000' }],
    });
    return customers.create(tx, d.operator, {
      outletCode: 'UG0000001',
      name: 'Mama Shop',
      channel: 'retail',
      paymentTermsDays: 14,
    });
  });
  const sale = await world.post((tx) =>
    createInvoice(tx, d.operator, {
      customerId: customer.id,
      locationId: d.m01,
      issueDate: '2026-11-20',
      currency: 'UGX',
      lines: [{ productId: d.soda, unit: 'case', quantity: 3, unitPrice: '30000' }],
    }),
  );
  await world.post((tx) =>
    processReturn(tx, d.operator, {
      invoiceId: sale.id,
      returnDate: '2026-11-21',
      reason: 'Broken',
      lines: [{ invoiceLineNumber: 1, unit: 'bottle', quantity: 5, condition: 'damaged' }],
    }),
  );
  await world.post((tx) =>
    processReturn(tx, d.operator, {
      invoiceId: sale.id,
      returnDate: '2026-11-21',
      reason: 'Unsold',
      lines: [{ invoiceLineNumber: 1, unit: 'bottle', quantity: 4, condition: 'good' }],
    }),
  );
  await runPostings(d);

  const returns = await world.db
    .selectFrom('stock_documents')
    .select(['id', 'number', 'posting_status', 'accounting_type'])
    .where('organization_id', '=', d.organizationId)
    .where('type', '=', 'return')
    .orderBy('number')
    .execute();
  t.deepEqual(
    returns.map((row) => [row.number, row.posting_status, row.accounting_type]),
    [
      ['RTN-000001', 'posted', 'JournalEntry'],
      ['RTN-000002', 'not_applicable', null],
    ],
  );
  const writeOff = await quickBooksEntity(world.db, d.realm, 'JournalEntry', 'RTN-000001');
  t.is(writeOff?.TxnDate, '2026-11-21', "dated the return's date");
  t.deepEqual(journalLines(writeOff), [
    ['Damaged stock written off', 'Debit', 5000],
    ['Inventory Asset', 'Credit', 5000],
  ]);
});

test('without an accounting connection a stock document that changes the books queues nothing and its block says why', async (t) => {
  const d = await depot(false);
  const opening = await world.post((tx) =>
    postStockAdjustment(tx, d.operator, {
      reasonCode: 'OPENING',
      lines: [{ productId: d.soda, locationId: d.m01, unit: 'case', quantity: 1, unitCost: '24000' }],
    }),
  );
  t.like(await documentRow(d, opening.id), {
    posting_status: 'not_applicable',
    posting_reason: NO_ACCOUNTING_CONNECTION,
  });
  t.deepEqual(await postingsOf(d, opening.id), []);
});

test('the plan rounds each pair of accounts once, so debits equal credits; stock moved at no cost, empties and moves inside the books plan nothing', (t) => {
  const at = (
    from: 'booked' | 'damages' | null,
    to: 'booked' | 'damages' | null,
    quantity: number,
    unitCost: string,
  ) => ({ productId: 'p', productName: 'P', from, to, quantity, unitCost });
  const plan = planStockEntry(
    { type: 'adjustment', reasonCode: 'COUNT', supplierCode: null },
    [at(null, 'booked', 3, '0.333333'), at(null, 'booked', 3, '0.333334'), at('booked', null, 1, '10.4')],
    'UGX',
  );
  t.deepEqual(plan, {
    kind: 'journal',
    lines: [
      { account: 'Inventory Asset', side: 'debit', amount: '2', description: 'stock added' },
      { account: 'Inventory Shrinkage', side: 'credit', amount: '2', description: 'stock added' },
      { account: 'Inventory Shrinkage', side: 'debit', amount: '10', description: 'stock removed' },
      { account: 'Inventory Asset', side: 'credit', amount: '10', description: 'stock removed' },
    ],
  });
  t.is(
    planStockEntry(
      { type: 'adjustment', reasonCode: 'COUNT', supplierCode: null },
      [at(null, 'booked', 5, '0')],
      'UGX',
    ),
    null,
  );
  t.is(
    planStockEntry(
      { type: 'adjustment', reasonCode: 'COUNT', supplierCode: null },
      [at(null, 'damages', 5, '100')],
      'UGX',
    ),
    null,
    'a damages store is not in the books',
  );
  t.is(
    planStockEntry(
      { type: 'transfer', reasonCode: null, supplierCode: null },
      [at('booked', 'booked', 5, '100'), at('damages', 'damages', 1, '100')],
      'UGX',
    ),
    null,
  );
  t.is(
    planStockEntry(
      { type: 'empties_receipt', reasonCode: null, supplierCode: null },
      [at(null, 'booked', 5, '100')],
      'UGX',
    ),
    null,
  );
  t.is(
    planStockEntry({ type: 'return', reasonCode: null, supplierCode: null }, [at(null, 'booked', 5, '100')], 'UGX'),
    null,
  );
  t.like(
    planStockEntry(
      { type: 'adjustment', reasonCode: 'SUPPLIER_RECEIPT', supplierCode: 'SUP01' },
      [at(null, 'booked', 24, '750')],
      'UGX',
    ),
    { kind: 'bill', supplierCode: 'SUP01', total: '18000' },
  );
});
