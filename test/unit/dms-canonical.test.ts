// The checks a DMS document meets on arrival, pure (no database): the spec's schema per documentType (R09 naming
// the field), the distributor (R07), the customer (R01), the number's route, the arithmetic (R04); and what a
// document is known by (its natural key; a return's with its date, customer and lines) and compared by (the hash
// of its canonical JSON). `npm run mutate -- dms-canonical` holds these rules with this file.
import test, { type ExecutionContext } from 'ava';
import {
  checkOnArrival,
  checkTotals,
  contentHashOf,
  DOCUMENT_SCHEMAS,
  headerOf,
  MASTER_DATA_TYPES,
  naturalKeyOf,
  statusOf,
} from '../../server/modules/dms/canonical.js';
import { DmsRejection } from '../../server/modules/dms/reasons.js';
import { doc, masterData, saleInvoice } from '../support/dms.js';

function refused(t: ExecutionContext, document: unknown, code: DmsRejection['code'], text: RegExp): void {
  const error = t.throws(() => checkOnArrival(document, 'DIST001'), { instanceOf: DmsRejection }) as DmsRejection;
  t.is(error.code, code);
  t.regex(error.text, text);
}

const collection = (amount: string, allocations: string[]) =>
  doc('customer_collection', 'PYR01000001', {
    routeCode: 'R01',
    customerCode: 'UG0000001',
    method: 'cash',
    amount,
    currency: 'UGX',
    allocations: allocations.map((a, i) => ({ invoiceNumber: `CSR0100000${i}`, amount: a })),
  });

test("every document type of the spec's table has its schema, read from the description", (t) => {
  t.deepEqual([...DOCUMENT_SCHEMAS.keys()].sort(), [
    'cheque_processing',
    'company_invoice',
    'credit_note',
    'customer',
    'customer_collection',
    'daily_totals',
    'fiscal_status',
    'inventory_summary',
    'price',
    'product',
    'reason_code',
    'route_settlement',
    'sale_invoice',
    'sale_return',
    'salesman',
    'stock_adjustment',
    'van_replenishment',
    'van_stock_out',
    'warehouse',
  ]);
  t.is(DOCUMENT_SCHEMAS.get('sale_invoice'), 'DmsSaleInvoiceDocument');
});

test('a document that matches its schema passes and comes back typed', (t) => {
  const passed = checkOnArrival(saleInvoice('CSR01000001', 'UG0000001', 2), 'DIST001');
  t.is(passed.documentType, 'sale_invoice');
  t.is(checkOnArrival(masterData.soda, 'DIST001').documentNumber, '100201');
  t.is(
    checkOnArrival(doc('delivery_note', 'DN-1', { anything: [1, 2] }), 'DIST001').documentType,
    'delivery_note',
    'a type the service does not map passes the envelope',
  );
});

test('R09 on arrival names the field: not an object, the envelope, the typed body, an unknown field, a wrong number form', (t) => {
  refused(t, [1], 'R09', /a document is a JSON object/);
  refused(t, null, 'R09', /a document is a JSON object/);
  refused(t, { ...masterData.soda, documentDate: '25/11/2026' }, 'R09', /\/documentDate must match format "date"/);
  refused(
    t,
    { ...masterData.soda, body: { ...masterData.soda.body, packSize: 0 } },
    'R09',
    /^Format of a product: \/body\/packSize must be >= 1/,
  );
  refused(t, { ...masterData.soda, documentNumber: '10020' }, 'R09', /\/documentNumber must match pattern/);
  refused(
    t,
    { ...masterData.soda, body: { ...masterData.soda.body, colour: 'red' } },
    'R09',
    /\/body has an unknown field colour/,
  );
  refused(
    t,
    { ...saleInvoice('CSR01000001', 'UG0000001', 1), status: 'paid' },
    'R09',
    /\/status must be one of confirmed, cancelled/,
  );
  refused(
    t,
    { ...saleInvoice('CSR01000001', 'UG0000001', 1), documentNumber: 'CSR02000001' },
    'R09',
    /must start with CS and the document's route code R01/,
  );
});

test('R07 for another distributor code, before the customer and the arithmetic are looked at', (t) => {
  refused(
    t,
    { ...saleInvoice('CSR01000001', undefined, 1), distributorCode: 'DIST002' },
    'R07',
    /^The document is for distributor DIST002; this connection serves DIST001 only\.$/,
  );
});

test('R01 for a sale, return, credit note or collection that names no customer; master data needs none', (t) => {
  refused(t, saleInvoice('CSR01000001', undefined, 1), 'R01', /sale_invoice CSR01000001 names no customer code/);
  const { customerCode: _, ...noCustomer } = collection('100', []).body as Record<string, unknown>;
  refused(t, { ...collection('100', []), body: noCustomer }, 'R01', /customer_collection/);
  t.notThrows(() => checkOnArrival(masterData.prices, 'DIST001'));
});

test("R04 on arrival: totals that are not the lines' sums, a discount above its line, a priced free issue, allocations above the amount", (t) => {
  const wrong = (change: Record<string, string>) => {
    const invoice = saleInvoice('CSR01000001', 'UG0000001', 2);
    Object.assign((invoice.body as any).totals, change);
    return invoice;
  };
  refused(t, wrong({ subtotal: '48001' }), 'R04', /subtotal 48001 \(the lines make 48000\)/);
  refused(t, wrong({ discount: '5' }), 'R04', /discount 5 \(the lines make 0\)/);
  refused(t, wrong({ total: '56641' }), 'R04', /total 56641 \(subtotal - discount \+ tax makes 56640\)/);
  t.notThrows(
    () => checkOnArrival(wrong({ tax: '1', total: '48001' }), 'DIST001'),
    "the tax is checked at posting, with the products' rates",
  );
  const bigDiscount = saleInvoice('CSR01000001', 'UG0000001', 2);
  (bigDiscount.body as any).lines = [
    { productCode: '100201', unit: 'case', quantity: 1, unitPrice: '24000', discount: '24001' },
    { productCode: '100201', unit: 'case', quantity: 1, unitPrice: '24000' },
  ];
  Object.assign((bigDiscount.body as any).totals, { discount: '24001', tax: '4320', total: '28319' });
  refused(t, bigDiscount, 'R04', /Line 1's discount 24001 is more than its quantity x unitPrice/);
  const pricedFree = saleInvoice('CSR01000001', 'UG0000001', 1);
  (pricedFree.body as any).lines[0].free = true;
  refused(t, pricedFree, 'R04', /Line 1 is a free issue with a price/);
  refused(t, collection('100', ['60', '41']), 'R04', /allocations total 101, more than the amount 100/);
  t.notThrows(() => checkOnArrival(collection('100', ['60', '40']), 'DIST001'));
  refused(
    t,
    doc('credit_note', 'CN-1', { customerCode: 'UG0000001', invoiceNumber: 'CSR01000001', reason: 'x' }),
    'R09',
    /either lines or an amount alone/,
  );
});

test("checkTotals uses the service's arithmetic: per line rounded to the currency, tax at each line's rate", (t) => {
  const lines = [
    { quantity: 3, unitPrice: '333.33', discount: '0.01', taxRate: '18' },
    { quantity: 1, unitPrice: '10', taxRate: '0' },
  ];
  // 3 x 333.33 = 999.99, less 0.01 = 999.98, at 18 % = 179.9964 -> 180.00 on the line.
  t.notThrows(() =>
    checkTotals(lines, { subtotal: '1009.99', discount: '0.01', tax: '180', total: '1189.98' }, 'USD', true),
  );
  t.throws(
    () => checkTotals(lines, { subtotal: '1009.99', discount: '0.01', tax: '179.99', total: '1189.97' }, 'USD', true),
    { message: /R04: .*tax 179.99 \(the lines at the products' tax rates make 180.00\)/ },
  );
  t.notThrows(
    () => checkTotals(lines, { subtotal: '1009.99', discount: '0.01', tax: '179.99', total: '1189.97' }, 'USD', false),
    'without the tax check only the rest is compared',
  );
  t.notThrows(
    () =>
      checkTotals(
        [{ quantity: 1, unitPrice: '1000.4', taxRate: '0' }],
        { subtotal: '1000', discount: '0', tax: '0', total: '1000' },
        'UGX',
        true,
      ),
    'UGX has no minor units',
  );
});

test("the natural key: distributor, type and number; a return's also its date, customer and a fingerprint of its lines", (t) => {
  t.is(naturalKeyOf(checkOnArrival(masterData.soda, 'DIST001')), 'DIST001|product|100201');
  const ret = (quantity: number, date = '2026-11-25') =>
    checkOnArrival(
      doc(
        'sale_return',
        'RTR01',
        {
          routeCode: 'R01',
          customerCode: 'UG0000001',
          invoiceNumber: 'CSR01000001',
          lines: [{ productCode: '100201', unit: 'bottle', quantity, condition: 'good' }],
        },
        { documentDate: date },
      ),
      'DIST001',
    );
  const key = naturalKeyOf(ret(1));
  t.regex(key, /^DIST001\|RT\|RTR01\|2026-11-25\|UG0000001\|[0-9a-f]{32}$/);
  t.not(naturalKeyOf(ret(2)), key, 'other lines: another return');
  t.not(naturalKeyOf(ret(1, '2026-11-26')), key, 'another date: another return');
  t.is(naturalKeyOf(ret(1)), key);
});

test('content is compared as canonical JSON: key order does not change the hash, a value does', (t) => {
  const a = { documentType: 'product', body: { name: 'Soda', packSize: 24 } };
  t.is(contentHashOf({ body: { packSize: 24, name: 'Soda' }, documentType: 'product' }), contentHashOf(a));
  t.not(contentHashOf({ ...a, body: { name: 'Soda', packSize: 12 } }), contentHashOf(a));
  t.regex(contentHashOf(a), /^[0-9a-f]{64}$/);
});

test('the status a document carries, and what can be read of one that failed the checks', (t) => {
  t.is(
    statusOf(
      checkOnArrival(
        doc('van_replenishment', 'VR000001', {
          routeCode: 'R01',
          lines: [{ productCode: '100201', unit: 'case', quantity: 1 }],
        }),
        'DIST001',
      ),
    ),
    'confirmed',
  );
  t.is(
    statusOf(checkOnArrival({ ...masterData.prices }, 'DIST001')),
    'active',
    'master data without a status is active',
  );
  t.is(statusOf(checkOnArrival({ ...masterData.soda, status: undefined }, 'DIST001')), 'active');
  t.is(
    statusOf(
      checkOnArrival(doc('cheque_processing', 'C1', { collectionNumber: 'PYR011', chequeNumber: '1' }), 'DIST001'),
    ),
    'cleared',
  );
  t.is(
    statusOf(checkOnArrival({ ...saleInvoice('CSR01000001', 'UG0000001', 1), status: 'cancelled' }, 'DIST001')),
    'cancelled',
  );
  t.deepEqual([...MASTER_DATA_TYPES].sort(), ['customer', 'price', 'product', 'reason_code', 'salesman', 'warehouse']);
  t.deepEqual(
    headerOf({
      documentType: 'x'.repeat(100),
      documentNumber: 7,
      documentDate: 'soon',
      distributorCode: 'D1',
      status: 'confirmed',
    }),
    {
      documentType: 'x'.repeat(64),
      documentNumber: '',
      documentDate: null,
      distributorCode: 'D1',
      salesmanCode: null,
      status: 'confirmed',
    },
  );
  t.deepEqual(headerOf('text'), {
    documentType: '',
    documentNumber: '',
    documentDate: null,
    distributorCode: '',
    salesmanCode: null,
    status: null,
  });
});

test('R09 texts are exact: the first three problems of a document, each at its field, joined by semicolons', (t) => {
  const error = t.throws(
    () =>
      checkOnArrival(
        {
          documentType: 'product',
          distributorCode: 'DIST001',
          documentNumber: '1',
          documentDate: '2026-11-25',
          status: 'gone',
          body: { name: '', packSize: 0, taxRate: 'x' },
        },
        'DIST001',
      ),
    { instanceOf: DmsRejection },
  ) as DmsRejection;
  const parts = error.text
    .replace(/^Format of a product: /, '')
    .replace(/\.$/, '')
    .split('; ');
  t.is(parts.length, 3, error.text);
  t.true(error.text.startsWith('Format of a product: /'));
  refused(t, [1], 'R09', /^Format: a document is a JSON object \(DmsDocument in the API description\)\.$/);
  refused(t, 'text', 'R09', /^Format: a document is a JSON object/);
  refused(t, null, 'R09', /^Format: a document is a JSON object/);
  refused(
    t,
    { documentType: 'product' },
    'R09',
    /^Format: \/ must have required property 'distributorCode'; \/ must have required property 'documentNumber'; \/ must have required property 'documentDate'\.$/,
  );
  refused(t, { ...masterData.soda, extra: 1 }, 'R09', /^Format of a product: \/ has an unknown field extra\.$/);
  const line = saleInvoice('CSR01000001', 'UG0000001', 1);
  (line.body as any).lines[0].colour = 'red';
  refused(t, line, 'R09', /^Format of a sale_invoice: \/body\/lines\/0 has an unknown field colour\.$/);
  refused(
    t,
    { ...masterData.soda, status: 'gone' },
    'R09',
    /^Format of a product: \/status must be one of active, inactive\.$/,
  );
});

test("the number carries the body's route for CS, VU, RT and PY; R01 for a return and a credit note without a customer", (t) => {
  const vu = doc('van_stock_out', 'VUR02-1', {
    routeCode: 'R01',
    destination: 'warehouse',
    lines: [{ productCode: '100201', unit: 'case', quantity: 1 }],
  });
  refused(t, vu, 'R09', /must start with VU and the document's route code R01/);
  t.notThrows(() => checkOnArrival({ ...vu, documentNumber: 'VUR01-1' }, 'DIST001'));
  const rt = doc('sale_return', 'RTR02', {
    routeCode: 'R01',
    customerCode: 'UG0000001',
    invoiceNumber: 'CSR01000001',
    lines: [{ productCode: '100201', unit: 'bottle', quantity: 1, condition: 'good' }],
  });
  refused(t, rt, 'R09', /must start with RT and the document's route code R01/);
  const { customerCode: _c, ...noCustomer } = rt.body;
  refused(
    t,
    { ...rt, documentNumber: 'RTR01', body: noCustomer },
    'R01',
    /^The sale_return RTR01 names no customer code \(body.customerCode\)\.$/,
  );
  refused(
    t,
    { ...collection('100', []), documentNumber: 'PYR02000001' },
    'R09',
    /must start with PY and the document's route code R01/,
  );
  refused(
    t,
    doc('credit_note', 'CN-1', { invoiceNumber: 'CSR01000001', reason: 'x', amount: '5' }),
    'R01',
    /credit_note CN-1 names no customer code/,
  );
  t.notThrows(
    () =>
      checkOnArrival(
        doc('van_replenishment', 'VR000001', {
          routeCode: 'R09',
          lines: [{ productCode: '100201', unit: 'case', quantity: 1 }],
        }),
        'DIST001',
      ),
    'VR numbers carry no route',
  );
});

test('R04 details: a free issue with only a discount, a credit note with both lines and an amount, a collection without allocations, several wrong totals at once', (t) => {
  const free = saleInvoice('CSR01000001', 'UG0000001', 1);
  (free.body as any).lines.push({
    productCode: '100201',
    unit: 'bottle',
    quantity: 1,
    unitPrice: '0',
    discount: '5',
    free: true,
  });
  refused(t, free, 'R04', /^Line 2 is a free issue with a price or a discount; a free issue is priced 0\.$/);
  const both = doc('credit_note', 'CN-1', {
    customerCode: 'UG0000001',
    invoiceNumber: 'CSR01000001',
    reason: 'x',
    amount: '5',
    lines: [{ productCode: '100201', quantity: 1, unitPrice: '5' }],
  });
  refused(t, both, 'R09', /either lines or an amount alone/);
  t.notThrows(() =>
    checkOnArrival(
      { ...collection('100', []), body: { ...collection('100', []).body, allocations: undefined } },
      'DIST001',
    ),
  );
  const wrong = saleInvoice('CSR01000001', 'UG0000001', 1);
  Object.assign((wrong.body as any).totals, { subtotal: '1', discount: '2' });
  refused(
    t,
    wrong,
    'R04',
    /^The lines do not add up to the document's totals: subtotal 1 \(the lines make 24000\); discount 2 \(the lines make 0\); total 28320 \(subtotal - discount \+ tax makes 4319\)\.$/,
  );
});

test('what can be read of a failed document: a date only in its exact form', (t) => {
  const dateOf = (documentDate: unknown) => headerOf({ documentDate }).documentDate;
  t.is(dateOf('2026-11-25'), '2026-11-25');
  t.is(dateOf('2026-11-25T08:00:00Z'), '2026-11-25', 'the first ten characters of a timestamp');
  t.is(dateOf('x2026-11-25'), null);
  t.is(dateOf('2026-1-255'), null);
  t.is(dateOf('26-11-2025'), null);
  t.is(dateOf('2026-11-2a'), null);
  t.is(dateOf('abcd-ef-gh'), null);
  t.is(dateOf(20261125), null);
  t.is(headerOf({ salesmanCode: 'SM01', status: 'x'.repeat(30) }).status, 'x'.repeat(20));
  t.is(headerOf({ salesmanCode: 'SM01' }).salesmanCode, 'SM01');
});

test('what passes: a free issue priced 0 without a discount, a credit note with lines alone or an amount alone', (t) => {
  const free = saleInvoice('CSR01000001', 'UG0000001', 1);
  (free.body as any).lines.push({ productCode: '100201', unit: 'bottle', quantity: 2, unitPrice: '0', free: true });
  t.notThrows(() => checkOnArrival(free, 'DIST001'));
  const note = (body: Record<string, unknown>) =>
    doc('credit_note', 'CN-1', { customerCode: 'UG0000001', invoiceNumber: 'CSR01000001', reason: 'x', ...body });
  t.notThrows(() =>
    checkOnArrival(note({ lines: [{ productCode: '100201', quantity: 1, unitPrice: '5' }] }), 'DIST001'),
  );
  t.notThrows(() => checkOnArrival(note({ amount: '5' }), 'DIST001'));
});
