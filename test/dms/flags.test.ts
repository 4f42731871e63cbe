// The DMS document flag, one test per row of the spec's state table and per reason code, at the service level
// (the push's own ingestBatch, the workers' own processDocuments, no HTTP). Each test names the rule it proves.
// The ledger checker runs over every organisation when the file closes.
import test from 'ava';
import { sql } from 'kysely';
import { closePeriod } from '../../server/domain/periods.js';
import { setConnection, SIMULATOR_BASE_URL } from '../../server/connectors/connections.js';
import { locations } from '../../server/modules/locations/service.js';
import { reprocessDocuments, whyNotReprocessable } from '../../server/modules/dms/operations.js';
import { ACCOUNTING_NOTE, PREVIOUS_POSTING_NOTE } from '../../server/modules/dms/reasons.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';
import { DAY, doc, dmsShop, masterData, saleInvoice, stockDay, type DmsShop } from '../support/dms.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('dms-flags');
});
test.after.always(async () => {
  await world?.close();
});

/** A shop whose master data and van stock (10 cases on R01) are posted, with customers UG0000001 and UG0000002. */
async function readyShop(): Promise<DmsShop> {
  const shop = await dmsShop(world);
  const flags = await shop.push(
    masterData.soda,
    masterData.water,
    masterData.prices,
    masterData.salesman(),
    masterData.customer('UG0000001'),
    masterData.customer('UG0000002'),
    ...stockDay(10),
  );
  if (flags.some((flag) => flag.state !== 'posted')) throw new Error(`set-up did not post: ${JSON.stringify(flags)}`);
  return shop;
}

const count = async (table: 'invoices' | 'dms_documents' | 'payments' | 'credit_notes', organizationId: string) =>
  Number(
    (
      await world.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('organization_id', '=', organizationId)
        .executeTakeFirstOrThrow()
    ).n,
  );

/** Moves a waiting document's 48-hour window into the past, as if it had waited that long. */
async function endWindow(shop: DmsShop, id: string): Promise<void> {
  await world.db
    .updateTable('dms_documents')
    // The past, by the database's clock.
    .set({ retry_until: sql<Date>`now() - interval '1 second'`, next_attempt_at: sql<Date>`now()` })
    .where('organization_id', '=', shop.organizationId)
    .where('id', '=', id)
    .execute();
}

test('(new) -> received: a document that passes the format checks is received, and its flag is in the answer at once', async (t) => {
  const shop = await dmsShop(world);
  const [flag] = await shop.send(masterData.soda);
  t.like(flag, { state: 'received', documentType: 'product', documentNumber: '100201', distributorCode: 'DIST001' });
  t.regex(flag!.documentId, /^dmd_[0-9A-HJKMNP-TV-Z]{26}$/);
  t.is(flag!.mikonoRef, undefined);
});

test('(new) -> rejected: a document that fails the format checks is rejected at once with R09 naming the field, and the others go on', async (t) => {
  const shop = await dmsShop(world);
  const bad = { ...masterData.soda, body: { name: 'Soda', packSize: 0, taxRate: '18' } };
  const flags = await shop.send(bad, masterData.water, 'not a document', { documentType: 'product' });
  t.deepEqual(
    flags.map((f) => f.state),
    ['rejected', 'received', 'rejected', 'rejected'],
  );
  t.is(flags[0]!.reasonCode, 'R09');
  t.regex(flags[0]!.reasonText!, /\/body\/packSize must be >= 1/);
  t.regex(flags[2]!.reasonText!, /a document is a JSON object/);
  t.regex(flags[3]!.reasonText!, /must have required property 'distributorCode'/);
  await shop.drain();
  t.deepEqual(
    (await shop.flags(flags.map((f) => f.documentId))).map((f) => f.state),
    ['rejected', 'posted', 'rejected', 'rejected'],
    'nothing of a rejected document is posted',
  );
});

test('received -> posted: posting sets mikonoRef, postedAt and quickbooksRef (null without an accounting connection)', async (t) => {
  const shop = await readyShop();
  const [flag] = await shop.push(saleInvoice('CSR01000001', 'UG0000001', 2));
  t.is(flag!.state, 'posted');
  t.is(flag!.mikonoRef!.table, 'invoices');
  t.is(flag!.quickbooksRef, null);
  t.truthy(flag!.postedAt);
  const invoice = await world.db
    .selectFrom('invoices')
    .select(['total', 'status', 'trip_id'])
    .where('organization_id', '=', shop.organizationId)
    .where('id', '=', flag!.mikonoRef!.id)
    .executeTakeFirstOrThrow();
  t.is(Number(invoice.total), 56640, '2 cases at 24 000 + 18 %');
  t.truthy(invoice.trip_id, "a van sale on the salesman's DMS day");
});

test('received -> rejected: a posting that fails with a reason code rejects the document (R03 for a warehouse matching no location)', async (t) => {
  const shop = await dmsShop(world);
  const [flag] = await shop.push(doc('warehouse', 'M09', { name: 'Far warehouse' }, { status: 'active' }));
  t.like(flag, { state: 'rejected', reasonCode: 'R03' });
  t.regex(flag!.reasonText!, /M09 matches no location/);
});

test('received -> received with note (R08): a document that depends on one not yet received waits, and posts once that one arrives', async (t) => {
  const shop = await readyShop();
  const [waiting] = await shop.push(saleInvoice('CSR01000002', 'UG0000009', 1));
  t.like(waiting, { state: 'received', note: 'Customer UG0000009 has not been received.' });
  await shop.push(masterData.customer('UG0000009'));
  const [after] = await shop.flags([waiting!.documentId]);
  t.is(after!.state, 'posted', "woken by the customer's arrival");
});

test('received -> rejected (R08): when the 48-hour window ends the waiting document is rejected with the same text as its note', async (t) => {
  const shop = await readyShop();
  const [waiting] = await shop.push(saleInvoice('CSR01000003', 'UG0000010', 1));
  await endWindow(shop, waiting!.documentId);
  await shop.drain();
  const [after] = await shop.flags([waiting!.documentId]);
  t.like(after, { state: 'rejected', reasonCode: 'R08', reasonText: 'Customer UG0000010 has not been received.' });
});

test('received, no mapping: a type this version does not map stays received with the note "No mapper for <type> yet"', async (t) => {
  const shop = await dmsShop(world);
  const flags = await shop.push(
    doc('delivery_note', 'DN-1', { anything: true }),
    doc('fiscal_status', 'FS-1', { documentNumber: 'CSR01000001' }),
  );
  t.deepEqual(
    flags.map((f) => [f.state, f.note]),
    [
      ['received', 'No mapper for delivery_note yet'],
      ['received', 'No mapper for fiscal_status yet'],
    ],
  );
});

test("received, previous version awaiting its accounting posting: the new version stays received with the spec's note, is never R08, and is held after 48 hours until re-processed", async (t) => {
  const shop = await readyShop();
  // Connected to an accounting system whose postings never run in this file: the invoice's posting stays pending.
  await world.post((tx) =>
    setConnection(tx, shop.organizationId, 'accounting', { baseUrl: SIMULATOR_BASE_URL, account: '1' }, null),
  );
  const [first] = await shop.push(saleInvoice('CSR01000004', 'UG0000001', 1));
  t.like(first, { state: 'received', note: ACCOUNTING_NOTE }, 'applied, held for its accounting posting');
  const [cancel] = await shop.push(saleInvoice('CSR01000004', 'UG0000001', 1, { status: 'cancelled' }));
  t.like(cancel, { state: 'received', note: PREVIOUS_POSTING_NOTE });
  await endWindow(shop, cancel!.documentId);
  await shop.drain();
  t.like((await shop.flags([cancel!.documentId]))[0], { state: 'received', note: PREVIOUS_POSTING_NOTE }, 'never R08');
  const held = await world.db
    .selectFrom('dms_documents')
    .select('next_attempt_at')
    .where('organization_id', '=', shop.organizationId)
    .where('id', '=', cancel!.documentId)
    .executeTakeFirstOrThrow();
  t.is(held.next_attempt_at, null, 'no more checks until someone re-processes it');
  t.deepEqual(await reprocessDocuments(world.db, shop.organizationId, { documentId: cancel!.documentId }), [
    cancel!.documentId,
  ]);
  await shop.drain();
  t.like(
    (await shop.flags([cancel!.documentId]))[0],
    { state: 'received', note: PREVIOUS_POSTING_NOTE },
    're-processing checked the posting again: still pending',
  );
  t.is(
    (await shop.flags([first!.documentId]))[0]!.state,
    'received',
    'the earlier version is not superseded while its posting is pending',
  );
  t.is(await count('invoices', shop.organizationId), 1, 'neither version applied the invoice twice');
});

test('any current flag -> superseded: the same key with different content and a different status supersedes the earlier version, whose posting is reversed', async (t) => {
  const shop = await readyShop();
  const [first] = await shop.push(saleInvoice('CSR01000005', 'UG0000001', 1));
  const [cancel] = await shop.push(saleInvoice('CSR01000005', 'UG0000001', 1, { status: 'cancelled' }));
  t.is(cancel!.state, 'posted');
  t.deepEqual(cancel!.mikonoRef, first!.mikonoRef, 'the new version carries the current flag of the same record');
  t.is((await shop.flags([first!.documentId]))[0]!.state, 'superseded');
  const invoice = await world.db
    .selectFrom('invoices')
    .select('status')
    .where('organization_id', '=', shop.organizationId)
    .where('id', '=', first!.mikonoRef!.id)
    .executeTakeFirstOrThrow();
  t.is(invoice.status, 'void', 'the earlier posting is reversed');
});

test('any -> unchanged: the same key with the same content answers the existing flag and posts nothing (key order and number forms do not matter)', async (t) => {
  const shop = await readyShop();
  const invoice = saleInvoice('CSR01000006', 'UG0000001', 1);
  const [first] = await shop.push(invoice);
  const before = {
    invoices: await count('invoices', shop.organizationId),
    documents: await count('dms_documents', shop.organizationId),
  };
  const reordered = Object.fromEntries(Object.entries(invoice).reverse());
  const [again] = await shop.push(reordered);
  t.deepEqual(again, first);
  t.deepEqual(
    {
      invoices: await count('invoices', shop.organizationId),
      documents: await count('dms_documents', shop.organizationId),
    },
    before,
  );
});

test('any -> rejected (R05): the same key with different content and the same status is rejected, posts nothing and cannot be re-processed', async (t) => {
  const shop = await readyShop();
  const [first] = await shop.push(saleInvoice('CSR01000007', 'UG0000001', 1));
  const invoices = await count('invoices', shop.organizationId);
  const [changed] = await shop.push(saleInvoice('CSR01000007', 'UG0000001', 3));
  t.like(changed, { state: 'rejected', reasonCode: 'R05' });
  t.regex(changed!.reasonText!, /send a status change or a new number/);
  t.is(await count('invoices', shop.organizationId), invoices);
  t.is((await shop.flags([first!.documentId]))[0]!.state, 'posted', 'the earlier version keeps its flag');
  t.deepEqual(await reprocessDocuments(world.db, shop.organizationId, { documentId: changed!.documentId }), []);
  t.regex(
    (await whyNotReprocessable(world.db, shop.organizationId, changed!.documentId))!,
    /R05 .* cannot be re-processed/,
  );
});

test('rejected -> re-process: once the cause is fixed in the service, re-processing issues a new flag and posts', async (t) => {
  const shop = await dmsShop(world);
  const [first] = await shop.push(doc('warehouse', 'M08', { name: 'New warehouse' }, { status: 'active' }));
  t.is(first!.reasonCode, 'R03');
  await world.post((tx) => locations.create(tx, shop.operator, { code: 'M08', name: 'New warehouse' }));
  t.deepEqual(await reprocessDocuments(world.db, shop.organizationId, { documentId: first!.documentId }), [
    first!.documentId,
  ]);
  const [reissued] = await shop.flags([first!.documentId]);
  t.like(reissued, { state: 'received', note: 'Re-processing was asked for.' });
  await shop.drain();
  const [after] = await shop.flags([first!.documentId]);
  t.is(after!.state, 'posted');
  t.is(after!.mikonoRef!.table, 'locations');
  t.true(after!.updatedAt > first!.updatedAt);
});

test('R01: a sale that names no customer code is rejected on arrival', async (t) => {
  const shop = await readyShop();
  const [flag] = await shop.send(saleInvoice('CSR01000008', undefined, 1));
  t.like(flag, { state: 'rejected', reasonCode: 'R01' });
});

test('R02 is never sent: an unknown product code waits (R08)', async (t) => {
  const shop = await readyShop();
  const invoice = saleInvoice('CSR01000009', 'UG0000001', 1);
  (invoice.body as any).lines[0].productCode = '999999';
  const [flag] = await shop.push(invoice);
  t.like(flag, { state: 'received', note: 'Product 999999 has not been received.' });
});

test('R03: a van document of a route with no van location is rejected, naming what to set up', async (t) => {
  const shop = await readyShop();
  await shop.push(
    doc(
      'salesman',
      'R02',
      { salesmanCode: 'SM02', salesmanName: 'Akello Ruth', routeName: 'Nakawa' },
      { status: 'active' },
    ),
  );
  const [flag] = await shop.push(
    doc('van_replenishment', 'VR000002', {
      routeCode: 'R02',
      lines: [{ productCode: '100201', unit: 'case', quantity: 1 }],
    }),
  );
  t.like(flag, { state: 'rejected', reasonCode: 'R03' });
  t.regex(flag!.reasonText!, /no van location \(V_R02-G\)/);
});

test("R04: lines that do not add up are rejected on arrival; a tax that is not the products' is rejected at posting", async (t) => {
  const shop = await readyShop();
  const wrongSubtotal = saleInvoice('CSR01000010', 'UG0000001', 1);
  (wrongSubtotal.body as any).totals.subtotal = '25000';
  const wrongTax = saleInvoice('CSR01000011', 'UG0000001', 1);
  Object.assign((wrongTax.body as any).totals, { tax: '0', total: '24000' });
  const flags = await shop.send(wrongSubtotal, wrongTax);
  t.like(flags[0], { state: 'rejected', reasonCode: 'R04' });
  t.regex(flags[0]!.reasonText!, /subtotal 25000 \(the lines make 24000\)/);
  t.is(flags[1]!.state, 'received');
  await shop.drain();
  const [taxed] = await shop.flags([flags[1]!.documentId]);
  t.like(taxed, { state: 'rejected', reasonCode: 'R04' });
  t.regex(taxed!.reasonText!, /tax 0 \(the lines at the products' tax rates make 4320\)/);
});

test('R06: a document dated in a period closed in the service is rejected, and the text says it was the service', async (t) => {
  const shop = await readyShop();
  await world.post((tx) => closePeriod(tx, shop.organizationId, DAY));
  const [flag] = await shop.push(saleInvoice('CSR01000012', 'UG0000001', 1));
  t.like(flag, { state: 'rejected', reasonCode: 'R06' });
  t.regex(flag!.reasonText!, /^In the service: /);
});

test('R06: a stock adjustment (IJ) and a company invoice dated in a period closed in the service move no stock and are rejected, as invoices are', async (t) => {
  const shop = await readyShop();
  await shop.push(
    doc('reason_code', 'OG01', { kind: 'stock', description: 'Found at the count' }, { status: 'active' }),
  );
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
  await world.post((tx) => closePeriod(tx, shop.organizationId, DAY));
  const flags = await shop.push(
    doc('stock_adjustment', 'IJ000001', {
      locationCode: 'M01',
      reasonCode: 'OG01',
      lines: [{ productCode: '100201', unit: 'case', quantity: 2, unitCost: '18000' }],
    }),
    doc('company_invoice', '9550800000003', {
      supplierCode: 'SUP01',
      locationCode: 'M01',
      currency: 'UGX',
      lines: [{ productCode: '100201', unit: 'case', invoicedQuantity: 5, receivedQuantity: 5, unitCost: '18000' }],
    }),
  );
  t.deepEqual(
    flags.map((flag) => [flag.state, flag.reasonCode]),
    [
      ['rejected', 'R06'],
      ['rejected', 'R06'],
    ],
  );
  for (const flag of flags)
    t.regex(
      flag.reasonText!,
      /^In the service: The books are closed through 2026-11-25; 2026-11-25 is in a closed period/,
    );
  t.is(await movements(), before, 'no stock moved');
});

test('R07: a document for another distributor code is rejected on arrival', async (t) => {
  const shop = await dmsShop(world);
  const [flag] = await shop.send({ ...masterData.soda, distributorCode: 'DIST002' });
  t.like(flag, {
    state: 'rejected',
    reasonCode: 'R07',
    reasonText: 'The document is for distributor DIST002; this connection serves DIST001 only.',
  });
});

test('R09: a company invoice whose received and invoiced quantities disagree posts nothing', async (t) => {
  const shop = await readyShop();
  const [flag] = await shop.push(
    doc('company_invoice', '9550800000002', {
      supplierCode: 'SUP01',
      locationCode: 'M01',
      currency: 'UGX',
      lines: [{ productCode: '100201', unit: 'case', invoicedQuantity: 10, receivedQuantity: 9, unitCost: '18000' }],
    }),
  );
  t.like(flag, { state: 'rejected', reasonCode: 'R09' });
  t.regex(flag!.reasonText!, /line 1 \(100201\): invoiced 10, received 9/);
});
