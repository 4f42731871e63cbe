// The DMS flag and the accounting posting, at the service level against the QuickBooks simulator: `posted` means
// posted, the accounting posting included (the spec's "received -> posted: succeeds, including the accounting
// posting"), and the way back after an accounting failure, tried as an operator would (`admin postings retry`,
// `admin dms reprocess`) for an invoice, a collection (PY) and a credit note. Each test names the rule it proves.
// The ledger checker runs over every organisation when the file closes.
import test, { type ExecutionContext } from 'ava';
import pino from 'pino';
import { setConnection, SIMULATOR_BASE_URL } from '../../server/connectors/connections.js';
import { injectFailure } from '../../server/connectors/simulators/failures.js';
import { startSimulatorServer, type SimulatorServer } from '../../server/connectors/simulators/server.js';
import { reprocessDocuments, whyNotReprocessable } from '../../server/modules/dms/operations.js';
import { ACCOUNTING_NOTE, PREVIOUS_POSTING_NOTE } from '../../server/modules/dms/reasons.js';
import { retryPostings } from '../../server/modules/postings/operations.js';
import { runPosting } from '../../server/modules/postings/run.js';
import type { SendMany } from '../../server/platform/jobs/jobs.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';
import { doc, dmsShop, masterData, saleInvoice, stockDay, type DmsShop } from '../support/dms.js';

let world: DomainWorld;
let simulators: SimulatorServer;
test.before(async () => {
  world = await domainWorld('dms-accounting');
  simulators = await startSimulatorServer(world.db);
});
test.after.always(async () => {
  await simulators?.stop();
  await world?.close();
});

interface Shop extends DmsShop {
  realm: string;
}

let realms = 770_000;

/** A DMS shop connected to the QuickBooks simulator, its master data and 10 cases on the van posted. */
async function accountingShop(t: Pick<ExecutionContext, 'deepEqual' | 'like'>): Promise<Shop> {
  const shop = await dmsShop(world, { settings: { secretKey: Buffer.alloc(32, 7), simulatorUrl: simulators.url } });
  const realm = String(realms++);
  await world.post((tx) =>
    setConnection(tx, shop.organizationId, 'accounting', { baseUrl: SIMULATOR_BASE_URL, account: realm }, null),
  );
  const flags = await shop.push(
    masterData.soda,
    masterData.prices,
    masterData.salesman(),
    masterData.customer('UG0000001'),
    ...stockDay(10),
  );
  // Master data and the van's load (a transfer between booked locations: no accounting posting) are posted at once;
  // the company invoice is held for its Bill, as an invoice is for its Invoice (decision 0046).
  const bill = flags.find((flag) => flag.documentType === 'company_invoice')!;
  t.deepEqual(
    flags.map((flag) => [flag.documentNumber, flag.state, flag.quickbooksRef ?? null]),
    flags.map((flag) => [flag.documentNumber, flag === bill ? 'received' : 'posted', null]),
    'documents without an accounting posting are posted at once',
  );
  t.like(bill, { note: ACCOUNTING_NOTE });
  // The company invoice's Bill goes first, so the failures a test injects next meet its own documents.
  await runPostings(shop);
  const received = await world.db
    .selectFrom('stock_documents')
    .select(['id', 'posting_status', 'accounting_type', 'accounting_ref'])
    .where('organization_id', '=', shop.organizationId)
    .where('reason_code', '=', 'SUPPLIER_RECEIPT')
    .executeTakeFirstOrThrow();
  t.like(received, { posting_status: 'posted', accounting_type: 'Bill' });
  t.like((await shop.flags([bill.documentId]))[0], {
    state: 'posted',
    quickbooksRef: (await postingOf(shop, received.id)).external_ref,
    mikonoRef: { table: 'stock_documents', id: received.id },
  });
  return { ...shop, realm };
}

const noJobs: SendMany = async () => {};

/** The worker's posting attempts, round after round, until none posts or fails any more; then the DMS worker's. */
async function runPostings(shop: DmsShop): Promise<void> {
  const runner = {
    db: world.db,
    settings: shop.runner.settings,
    processId: 'test',
    sendMany: noJobs,
    logger: pino({ level: 'silent' }),
  };
  for (let round = 0; round < 10; round += 1) {
    const due = await world.db
      .selectFrom('external_postings')
      .select('id')
      .where('organization_id', '=', shop.organizationId)
      .where('system', '=', 'accounting')
      .where('status', '=', 'pending')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    let moved = false;
    for (const row of due) {
      const outcome = await runPosting(runner, { organizationId: shop.organizationId, postingId: row.id });
      if (outcome === 'posted' || outcome === 'failed') moved = true;
    }
    await shop.drain();
    if (!moved) return;
  }
}

const count = async (table: 'invoices' | 'payments' | 'credit_notes', organizationId: string) =>
  Number(
    (
      await world.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('organization_id', '=', organizationId)
        .executeTakeFirstOrThrow()
    ).n,
  );

const postingOf = (shop: DmsShop, documentId: string) =>
  world.db
    .selectFrom('external_postings')
    .select(['status', 'external_ref', 'attempts'])
    .where('organization_id', '=', shop.organizationId)
    .where('document_id', '=', documentId)
    .where('system', '=', 'accounting')
    .where('operation', '=', 'post')
    .executeTakeFirstOrThrow();

const collection = (number: string, invoiceNumber: string, amount: string) =>
  doc('customer_collection', number, {
    routeCode: 'R01',
    customerCode: 'UG0000001',
    method: 'cash',
    amount,
    currency: 'UGX',
    allocations: [{ invoiceNumber, amount }],
  });

const creditNote = (number: string, invoiceNumber: string) =>
  doc('credit_note', number, {
    customerCode: 'UG0000001',
    invoiceNumber,
    reason: 'Price agreed',
    lines: [{ productCode: '100201', unit: 'case', quantity: 1, unitPrice: '1000' }],
  });

/** The document's applied record, read from the row (a held or rejected flag does not show mikonoRef). */
const appliedOf = async (shop: DmsShop, documentId: string) =>
  await world.db
    .selectFrom('dms_documents')
    .select(['mikono_table', 'mikono_id'])
    .where('organization_id', '=', shop.organizationId)
    .where('id', '=', documentId)
    .executeTakeFirstOrThrow();

test('received -> posted includes the accounting posting: an invoice applied while QuickBooks is pending stays received with the note, then is posted with its quickbooksRef', async (t) => {
  const shop = await accountingShop(t);
  const [held] = await shop.push(saleInvoice('CSR01000001', 'UG0000001', 2));
  t.like(held, { state: 'received', note: ACCOUNTING_NOTE });
  t.is(held!.quickbooksRef, undefined);
  const applied = await appliedOf(shop, held!.documentId);
  t.is(applied.mikono_table, 'invoices', 'applied in the service at once');
  t.is((await postingOf(shop, applied.mikono_id!)).status, 'pending');
  await runPostings(shop);
  const [posted] = await shop.flags([held!.documentId]);
  const posting = await postingOf(shop, applied.mikono_id!);
  t.like(posted, {
    state: 'posted',
    quickbooksRef: posting.external_ref,
    mikonoRef: { table: 'invoices', id: applied.mikono_id! },
  });
  t.truthy(posted!.quickbooksRef);
  t.truthy(posted!.postedAt);
});

test("received -> rejected (R06) when QuickBooks' books are closed; then `admin postings retry` posts it there and issues a new posted flag, and re-processing finds nothing to do", async (t) => {
  const shop = await accountingShop(t);
  await injectFailure(world.db, 'accounting', shop.realm, 'period_closed', 1);
  const [sent] = await shop.push(saleInvoice('CSR01000002', 'UG0000001', 1));
  await runPostings(shop);
  const [rejected] = await shop.flags([sent!.documentId]);
  t.like(rejected, { state: 'rejected', reasonCode: 'R06' });
  t.regex(rejected!.reasonText!, /^In the accounting system: .*books are closed/);
  const { mikono_id: invoiceId } = await appliedOf(shop, sent!.documentId);

  t.is((await retryPostings(world.db, shop.organizationId, invoiceId!)).length, 1);
  await runPostings(shop);
  const [fixed] = await shop.flags([sent!.documentId]);
  t.like(fixed, {
    state: 'posted',
    quickbooksRef: (await postingOf(shop, invoiceId!)).external_ref,
    mikonoRef: { table: 'invoices', id: invoiceId! },
  });
  t.true(fixed!.updatedAt > rejected!.updatedAt, 'a new flag');
  t.deepEqual(await reprocessDocuments(world.db, shop.organizationId, { documentId: sent!.documentId }), []);
  t.regex(
    (await whyNotReprocessable(world.db, shop.organizationId, sent!.documentId))!,
    /is posted: there is nothing to re-process/,
  );
  t.is(await count('invoices', shop.organizationId), 1);
});

test('re-processing an invoice whose accounting posting failed never applies it again: the failed posting is queued again, the flag held, then posted', async (t) => {
  const shop = await accountingShop(t);
  await injectFailure(world.db, 'accounting', shop.realm, 'period_closed', 1);
  const [sent] = await shop.push(saleInvoice('CSR01000003', 'UG0000001', 1));
  await runPostings(shop);
  t.is((await shop.flags([sent!.documentId]))[0]!.reasonCode, 'R06');
  // The operator's order of the issue: retry first (it fails again), then re-process.
  await injectFailure(world.db, 'accounting', shop.realm, 'period_closed', 1);
  await retryPostings(world.db, shop.organizationId, (await appliedOf(shop, sent!.documentId)).mikono_id!);
  await runPostings(shop);
  t.is((await shop.flags([sent!.documentId]))[0]!.reasonCode, 'R06');

  t.deepEqual(await reprocessDocuments(world.db, shop.organizationId, { documentId: sent!.documentId }), [
    sent!.documentId,
  ]);
  await shop.drain();
  const [held] = await shop.flags([sent!.documentId]);
  t.like(held, { state: 'received', note: ACCOUNTING_NOTE }, 'not R09 on its own earlier application');
  await runPostings(shop);
  const [posted] = await shop.flags([sent!.documentId]);
  t.is(posted!.state, 'posted');
  t.truthy(posted!.quickbooksRef);
  t.is(await count('invoices', shop.organizationId), 1, 'applied once');
});

test('a collection (PY) whose accounting posting failed: re-processed, it is posted once QuickBooks takes the payment, with no second receipt', async (t) => {
  const shop = await accountingShop(t);
  await shop.push(saleInvoice('CSR01000004', 'UG0000001', 1));
  await runPostings(shop);
  await injectFailure(world.db, 'accounting', shop.realm, 'period_closed', 1);
  const [paid] = await shop.push(collection('PYR01000001', 'CSR01000004', '28320'));
  t.like(paid, { state: 'received', note: ACCOUNTING_NOTE });
  await runPostings(shop);
  t.like((await shop.flags([paid!.documentId]))[0], { state: 'rejected', reasonCode: 'R06' });
  const receipts = await count('payments', shop.organizationId);

  await reprocessDocuments(world.db, shop.organizationId, { documentId: paid!.documentId });
  await shop.drain();
  await runPostings(shop);
  const [posted] = await shop.flags([paid!.documentId]);
  t.like(posted, { state: 'posted', mikonoRef: { table: 'payments' } });
  t.is(posted!.quickbooksRef, (await postingOf(shop, posted!.mikonoRef!.id)).external_ref);
  t.is(await count('payments', shop.organizationId), receipts, 'no second receipt');
});

test('a credit note whose accounting posting failed: `admin postings retry` posts it and its flag follows; re-processing then has nothing to do', async (t) => {
  const shop = await accountingShop(t);
  await shop.push(saleInvoice('CSR01000005', 'UG0000001', 2));
  await runPostings(shop);
  await injectFailure(world.db, 'accounting', shop.realm, 'period_closed', 1);
  const [note] = await shop.push(creditNote('CRN-1', 'CSR01000005'));
  await runPostings(shop);
  t.like((await shop.flags([note!.documentId]))[0], { state: 'rejected', reasonCode: 'R06' });
  const { mikono_id: creditNoteId } = await appliedOf(shop, note!.documentId);

  await retryPostings(world.db, shop.organizationId, creditNoteId!);
  await runPostings(shop);
  const [posted] = await shop.flags([note!.documentId]);
  t.like(posted, { state: 'posted', mikonoRef: { table: 'credit_notes', id: creditNoteId! } });
  t.truthy(posted!.quickbooksRef);
  t.deepEqual(await reprocessDocuments(world.db, shop.organizationId, { documentId: note!.documentId }), []);
  t.is(await count('credit_notes', shop.organizationId), 1);
});

test('a cancel of an invoice held for its accounting posting waits for it, then voids the invoice (the held version counts as applied)', async (t) => {
  const shop = await accountingShop(t);
  const [first] = await shop.push(saleInvoice('CSR01000006', 'UG0000001', 1));
  t.is(first!.state, 'received');
  const [cancel] = await shop.push(saleInvoice('CSR01000006', 'UG0000001', 1, { status: 'cancelled' }));
  t.like(cancel, { state: 'received', note: PREVIOUS_POSTING_NOTE });
  await runPostings(shop);
  const { mikono_id: invoiceId } = await appliedOf(shop, first!.documentId);
  const invoice = await world.db
    .selectFrom('invoices')
    .select('status')
    .where('organization_id', '=', shop.organizationId)
    .where('id', '=', invoiceId!)
    .executeTakeFirstOrThrow();
  t.is(invoice.status, 'void');
  t.is((await shop.flags([first!.documentId]))[0]!.state, 'superseded');
  t.is((await shop.flags([cancel!.documentId]))[0]!.state, 'posted');
});

test('a stock adjustment (IJ) is held for its JournalEntry as an invoice is for its Invoice: received with the note, then posted with its quickbooksRef; one whose books are closed there is rejected (R06)', async (t) => {
  const shop = await accountingShop(t);
  await shop.push(doc('reason_code', 'OG01', { kind: 'stock', description: 'Breakage' }, { status: 'active' }));
  const [held] = await shop.push(
    doc('stock_adjustment', 'IJ000001', {
      locationCode: 'M01',
      reasonCode: 'OG01',
      lines: [{ productCode: '100201', unit: 'case', quantity: -2 }],
    }),
  );
  t.like(held, { state: 'received', note: ACCOUNTING_NOTE });
  const applied = await appliedOf(shop, held!.documentId);
  t.is(applied.mikono_table, 'stock_documents', 'applied in the service at once');
  t.is((await postingOf(shop, applied.mikono_id!)).status, 'pending');
  await runPostings(shop);
  const posting = await postingOf(shop, applied.mikono_id!);
  t.is(posting.status, 'posted');
  t.like((await shop.flags([held!.documentId]))[0], {
    state: 'posted',
    quickbooksRef: posting.external_ref!,
    mikonoRef: { table: 'stock_documents', id: applied.mikono_id! },
  });

  // QuickBooks' books are closed for the next entry: the flag is rejected, the stock stays moved in the service.
  await injectFailure(world.db, 'accounting', shop.realm, 'period_closed', 1);
  const [refused] = await shop.push(
    doc('stock_adjustment', 'IJ000002', {
      locationCode: 'M01',
      reasonCode: 'OG01',
      lines: [{ productCode: '100201', unit: 'case', quantity: -1 }],
    }),
  );
  t.like(refused, { state: 'received', note: ACCOUNTING_NOTE });
  await runPostings(shop);
  const [rejected] = await shop.flags([refused!.documentId]);
  t.like(rejected, { state: 'rejected', reasonCode: 'R06' });
  t.regex(
    rejected!.reasonText!,
    /^In the accounting system: .*books are closed.*The posting in the service stays applied\.$/,
  );
});
