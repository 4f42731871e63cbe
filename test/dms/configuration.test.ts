// R03, configuration missing (issue 36 item 10): a DMS document whose organisation lacks the set-up it needs is
// rejected R03 with a text naming what to configure and the command, and posts once the operator configures it and
// re-processes (`admin dms reprocess --date --reason R03`, reprocessDocuments). At the service level, one test per
// check; the ledger checker runs over every organisation when the file closes.
import test from 'ava';
import { setConnection, SIMULATOR_BASE_URL } from '../../server/connectors/connections.js';
import { reprocessDocuments } from '../../server/modules/dms/operations.js';
import { ACCOUNTING_NOTE } from '../../server/modules/dms/reasons.js';
import { salespeople } from '../../server/modules/salespeople/service.js';
import { setAccounts } from '../../server/platform/access/accounts.js';
import type { DmsFlag } from '../../server/modules/dms/flags.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';
import { DAY, doc, dmsShop, masterData, saleInvoice, stockDay, type DmsShop } from '../support/dms.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('dms-configuration');
});
test.after.always(async () => {
  await world?.close();
});

let realms = 880_000;

/** A shop whose master data and van stock (10 cases on R01) are posted; with `accounting`, connected to QuickBooks. */
async function readyShop(options: { accounting?: boolean } = {}): Promise<DmsShop> {
  const shop = await dmsShop(world);
  if (options.accounting) {
    await world.post((tx) =>
      setConnection(
        tx,
        shop.organizationId,
        'accounting',
        { baseUrl: SIMULATOR_BASE_URL, account: String(realms++) },
        null,
      ),
    );
  }
  const flags = await shop.push(
    masterData.soda,
    masterData.water,
    masterData.prices,
    masterData.salesman(),
    masterData.customer('UG0000001'),
    ...stockDay(10),
  );
  // With an accounting connection the company invoice is held for its Bill (applied, its flag follows the posting).
  if (flags.some((flag) => !applied(flag))) throw new Error(`set-up did not apply: ${JSON.stringify(flags)}`);
  return shop;
}

/** What the operator does once the configuration is fixed: re-process the day's R03 documents, then the workers post. */
async function reprocessR03(shop: DmsShop, ids: readonly string[]): Promise<DmsFlag[]> {
  const reprocessed = await reprocessDocuments(world.db, shop.organizationId, { date: DAY, reasons: ['R03'] });
  if ([...ids].sort().join() !== [...reprocessed].sort().join())
    throw new Error(`re-processed ${JSON.stringify(reprocessed)}, expected ${JSON.stringify(ids)}`);
  await shop.drain();
  return shop.flags(ids);
}

/** Applied in the service: posted, or (with an accounting connection) held for its QuickBooks posting. */
const applied = (flag: DmsFlag | undefined) =>
  flag !== undefined &&
  flag.mikonoRef !== null &&
  (flag.state === 'posted' || (flag.state === 'received' && flag.note === ACCOUNTING_NOTE));

const salesmanSM01 = (shop: DmsShop) =>
  world.db
    .selectFrom('salespeople')
    .select(['id', 'member_id'])
    .where('organization_id', '=', shop.organizationId)
    .where('salesman_code', '=', 'SM01')
    .executeTakeFirstOrThrow();

test('R03: a van document of a salesman not linked to a member is rejected naming `admin member`, and posts once he is linked and it is re-processed', async (t) => {
  const shop = await readyShop();
  const { id, member_id: memberId } = await salesmanSM01(shop);
  await world.post((tx) => salespeople.change(tx, shop.operator, id, { memberId: null }));

  const flags = await shop.push(
    doc('van_replenishment', 'VR000002', {
      routeCode: 'R01',
      fromLocationCode: 'M01',
      lines: [{ productCode: '100201', unit: 'case', quantity: 1 }],
    }),
    saleInvoice('CSR01000001', 'UG0000001', 1),
  );
  for (const flag of flags) {
    t.like(flag, { state: 'rejected', reasonCode: 'R03' });
    t.is(
      flag.reasonText,
      `Salesman SM01 is not linked to a member of the organisation, so his van documents cannot post. Link him: admin member add --org ${shop.organizationId} --name NAME --email EMAIL --salesman SM01 (or admin member update MEMBER_ID --org ${shop.organizationId} --salesman SM01), then re-process: admin dms reprocess --org ${shop.organizationId} --date ${DAY} --reason R03.`,
    );
  }

  // What `admin member update --salesman SM01` does: the salespeople module links him.
  await world.post((tx) => salespeople.change(tx, shop.operator, id, { memberId }));
  const after = await reprocessR03(
    shop,
    flags.map((flag) => flag.documentId),
  );
  t.deepEqual(
    after.map((flag) => [flag.documentNumber, flag.state]),
    [
      ['VR000002', 'posted'],
      ['CSR01000001', 'posted'],
    ],
  );
});

test('R03: with an accounting connection, a sale paid at once and a collection need the cash account; a credit sale does not; they post once it is mapped', async (t) => {
  const shop = await readyShop({ accounting: true });
  await setAccounts(world.db, shop.organizationId, { cashAccount: null });

  const [cashSale, creditSale, collection] = await shop.push(
    saleInvoice('CSR01000001', 'UG0000001', 1, { method: 'cash' }),
    saleInvoice('CSR01000002', 'UG0000001', 1),
    doc('customer_collection', 'PYR01000001', {
      routeCode: 'R01',
      customerCode: 'UG0000001',
      method: 'cash',
      amount: '28320',
      currency: 'UGX',
      allocations: [{ invoiceNumber: 'CSR01000002', amount: '28320' }],
    }),
  );
  const text = `The organisation has no cash account mapped in the accounting system (QuickBooks), where this document is posted. Map it: admin accounts set --org ${shop.organizationId} --cash "ACCOUNT", then re-process: admin dms reprocess --org ${shop.organizationId} --date ${DAY} --reason R03.`;
  t.like(cashSale, { state: 'rejected', reasonCode: 'R03', reasonText: text });
  t.like(collection, { state: 'rejected', reasonCode: 'R03', reasonText: text });
  t.true(applied(creditSale), JSON.stringify(creditSale));

  await setAccounts(world.db, shop.organizationId, { cashAccount: 'Cash on hand' });
  const after = await reprocessR03(shop, [cashSale!.documentId, collection!.documentId]);
  t.true(after.every(applied), JSON.stringify(after));
});

test('R03: without an accounting connection, no account mapping is needed (there is nothing to post it into)', async (t) => {
  const shop = await readyShop();
  await setAccounts(world.db, shop.organizationId, {
    cashAccount: null,
    salesAccount: null,
    promotionsExpenseAccount: null,
    vendors: { SUP01: null },
  });
  const flags = await shop.push(saleInvoice('CSR01000001', 'UG0000001', 1, { method: 'cash', discount: '1000' }), {
    ...stockDay(1)[0]!,
    documentNumber: '9550800000002',
  });
  t.deepEqual(
    flags.map((flag) => flag.state),
    ['posted', 'posted'],
    JSON.stringify(flags),
  );
});

test('R03: with an accounting connection, a sale needs the default sales account and, with a discount or free issue, the promotions expense account; it posts once they are mapped', async (t) => {
  const shop = await readyShop({ accounting: true });
  await setAccounts(world.db, shop.organizationId, { salesAccount: null, promotionsExpenseAccount: null });

  const [discounted, plain] = await shop.push(
    saleInvoice('CSR01000001', 'UG0000001', 1, { discount: '1000' }),
    saleInvoice('CSR01000002', 'UG0000001', 1),
  );
  t.like(discounted, {
    state: 'rejected',
    reasonCode: 'R03',
    reasonText: `The organisation has no default sales account and no promotions expense account mapped in the accounting system (QuickBooks), where this document is posted. Map them: admin accounts set --org ${shop.organizationId} --sales "ACCOUNT" --promotions "ACCOUNT", then re-process: admin dms reprocess --org ${shop.organizationId} --date ${DAY} --reason R03.`,
  });
  t.like(plain, { state: 'rejected', reasonCode: 'R03' });
  t.regex(
    plain!.reasonText!,
    /^The organisation has no default sales account mapped .* --sales "ACCOUNT", then re-process/,
  );

  await setAccounts(world.db, shop.organizationId, {
    salesAccount: 'Sales of beverages',
    promotionsExpenseAccount: 'Trade promotions',
  });
  const after = await reprocessR03(shop, [discounted!.documentId, plain!.documentId]);
  t.true(after.every(applied), JSON.stringify(after));
});

test('R03: a product that does not track stock on a document that moves stock is rejected naming tracksStock, and posts once it tracks stock', async (t) => {
  const shop = await readyShop();
  const untracked = { ...masterData.water, body: { ...masterData.water.body, tracksStock: false } };
  t.is((await shop.push(untracked))[0]!.state, 'posted');

  const [flag] = await shop.push(
    doc('company_invoice', '9550800000002', {
      supplierCode: 'SUP01',
      locationCode: 'M01',
      currency: 'UGX',
      lines: [{ productCode: '100301', unit: 'case', invoicedQuantity: 5, receivedQuantity: 5, unitCost: '9000' }],
    }),
  );
  t.like(flag, {
    state: 'rejected',
    reasonCode: 'R03',
    reasonText: `Product 100301 does not track stock, so this document cannot move it. Set it to track stock: send its product document with "tracksStock": true, then re-process: admin dms reprocess --org ${shop.organizationId} --date ${DAY} --reason R03.`,
  });

  // The DMS sends the product again, tracking stock (a new version of master data updates the product).
  t.is(
    (await shop.push({ ...masterData.water, body: { ...masterData.water.body, tracksStock: true } }))[0]!.state,
    'posted',
  );
  const [after] = await reprocessR03(shop, [flag!.documentId]);
  t.like(after, { state: 'posted', mikonoRef: { table: 'stock_documents' } });
});

test('R03: with an accounting connection, a company invoice whose supplier has no vendor is rejected naming --vendor, and posts once the vendor is mapped', async (t) => {
  const shop = await readyShop({ accounting: true });
  const [flag] = await shop.push(
    doc('company_invoice', '9550800000002', {
      supplierCode: 'SUP02',
      locationCode: 'M01',
      currency: 'UGX',
      lines: [{ productCode: '100201', unit: 'case', invoicedQuantity: 5, receivedQuantity: 5, unitCost: '18000' }],
    }),
  );
  t.like(flag, {
    state: 'rejected',
    reasonCode: 'R03',
    reasonText: `Supplier SUP02 has no vendor mapped in the accounting system (QuickBooks). Map it: admin accounts set --org ${shop.organizationId} --vendor "SUP02=VENDOR NAME", then re-process: admin dms reprocess --org ${shop.organizationId} --date ${DAY} --reason R03.`,
  });

  await setAccounts(world.db, shop.organizationId, { vendors: { SUP02: 'Crown Beverages Ltd' } });
  const [after] = await reprocessR03(shop, [flag!.documentId]);
  // Applied, and held for its Bill in QuickBooks (its flag follows that posting, decision 0046).
  t.like(after, { state: 'received', note: ACCOUNTING_NOTE });
  const row = await world.db
    .selectFrom('dms_documents')
    .select(['mikono_table', 'accounting_type'])
    .where('organization_id', '=', shop.organizationId)
    .where('id', '=', flag!.documentId)
    .executeTakeFirstOrThrow();
  t.deepEqual(row, { mikono_table: 'stock_documents', accounting_type: 'stock_document' });
});
