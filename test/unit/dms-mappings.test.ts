// The DMS mappings of the document modules, pure (no database): each `…ToCommand(document, lookups)` turns a
// canonical DMS document and the ids its handler looked up into its posting function's command, written out here
// field by field (not read back from the function). The handlers that look the ids up, check and post are held end to
// end by test/dms/documents.test.ts and test/dms/flags.test.ts.
import test from 'ava';
import { DmsRejection } from '../../server/modules/dms/reasons.js';
import type { CanonicalDocument } from '../../server/modules/dms/handlers/types.js';
import { saleInvoiceToCommand } from '../../server/modules/invoices/dms.js';
import { creditNoteToCommand } from '../../server/modules/credit-notes/dms.js';
import { returnToCommand } from '../../server/modules/returns/dms.js';
import { collectionToCommand } from '../../server/modules/payments/dms.js';
import { routeSettlementToCommands } from '../../server/modules/settlements/dms.js';
import {
  companyInvoiceToCommand,
  stockAdjustmentToCommand,
  vanReplenishmentToCommand,
  vanStockOutToCommand,
} from '../../server/modules/stock/dms.js';

/** A canonical document with this body (the envelope's other fields are not read by a mapping). */
function dms(number: string, date: string, body: Record<string, unknown>): CanonicalDocument {
  return { number, date, document: { body } as unknown as CanonicalDocument['document'] };
}

const products = new Map([
  ['COKE', { id: 'prd_coke', tax_rate: '18.00' }],
  ['CRATE', { id: 'prd_crate', tax_rate: '0.00' }],
]);

test('a CS invoice: the van day, each line as a sale or a free issue with its discount, cash paid or on credit', (t) => {
  const document = dms('CS-1', '2026-03-02', {
    routeCode: 'R1',
    customerCode: 'C1',
    currency: 'UGX',
    lines: [
      { productCode: 'COKE', unit: 'case', quantity: 2, unitPrice: '24000', discount: '1000' },
      { productCode: 'CRATE', unit: 'piece', quantity: 1, unitPrice: '0', free: true },
    ],
    payment: { method: 'cash', reference: 'R-9' },
  });
  const lookups = {
    customerId: 'cus_1',
    products,
    vanId: 'loc_van',
    salespersonId: 'sp_1',
    fiscalApplies: true,
  };
  t.deepEqual(saleInvoiceToCommand(document, lookups), {
    customerId: 'cus_1',
    locationId: 'loc_van',
    issueDate: '2026-03-02',
    currency: 'UGX',
    salespersonId: 'sp_1',
    externalCodes: { dms: 'CS-1' },
    lines: [
      { kind: 'sale', productId: 'prd_coke', unit: 'case', quantity: 2, unitPrice: '24000', discount: '1000' },
      { kind: 'free', productId: 'prd_crate', unit: 'piece', quantity: 1, unitPrice: '0' },
    ],
    payment: { method: 'cash', reference: 'R-9' },
    fiscalise: true,
    refuseUnfiscalisable: true,
  });
  const credit = saleInvoiceToCommand(
    dms('CS-2', '2026-03-02', {
      routeCode: 'R1',
      customerCode: 'C1',
      currency: 'UGX',
      lines: [{ productCode: 'COKE', unit: 'bottle', quantity: 1, unitPrice: '1000' }],
      payment: { method: 'mobile_money' },
    }),
    { ...lookups, fiscalApplies: false },
  );
  t.deepEqual(credit.payment, { method: 'mobile_money', reference: null }, 'no reference: null');
  t.deepEqual(credit.lines, [{ kind: 'sale', productId: 'prd_coke', unit: 'bottle', quantity: 1, unitPrice: '1000' }]);
  t.false(credit.fiscalise);
  t.false(credit.refuseUnfiscalisable);
  const onCredit = saleInvoiceToCommand(
    dms('CS-3', '2026-03-02', {
      routeCode: 'R1',
      currency: 'UGX',
      lines: [],
      payment: { method: 'credit' },
    }),
    lookups,
  );
  t.is(onCredit.payment, null, 'on credit: no payment');
});

test('a credit note: an amount is one adjustment line, else its product lines; totals that do not add up are R04', (t) => {
  const lookups = { customerId: 'cus_1', invoiceId: 'inv_1', products, currency: 'UGX', fiscalApplies: true };
  t.deepEqual(
    creditNoteToCommand(dms('CN-1', '2026-03-03', { reason: 'Price agreed', amount: '1500.50', invoiceNumber: 'X' }), {
      ...lookups,
      fiscalApplies: false,
    }),
    {
      customer: { id: 'cus_1' },
      invoiceId: 'inv_1',
      reason: 'Price agreed',
      issueDate: '2026-03-03',
      externalCodes: { dms: 'CN-1' },
      lines: [{ type: 'adjustment', description: 'Price agreed', quantity: 1, unitPrice: '1500.5' }],
      fiscalise: false,
      refuseUnfiscalisable: false,
    },
  );
  const lines = [{ productCode: 'COKE', quantity: 2, unitPrice: '1000' }];
  const byLines = creditNoteToCommand(
    dms('CN-2', '2026-03-03', {
      reason: 'Damaged',
      lines,
      totals: { subtotal: '2000', discount: '0', tax: '360', total: '2360' },
    }),
    lookups,
  );
  t.deepEqual(byLines.lines, [{ type: 'product', product: { id: 'prd_coke' }, quantity: 2, unitPrice: '1000' }]);
  t.true(byLines.fiscalise);
  t.true(byLines.refuseUnfiscalisable);
  const wrong = t.throws(
    () =>
      creditNoteToCommand(
        dms('CN-3', '2026-03-03', {
          reason: 'Damaged',
          lines,
          totals: { subtotal: '2000', discount: '0', tax: '0', total: '2000' },
        }),
        lookups,
      ),
    { instanceOf: DmsRejection },
  );
  t.is(wrong.code, 'R04');
  t.regex(wrong.text, /tax 0 \(the lines at the products' tax rates make 360\)/);
});

test('a return: back onto the van, damaged goods to its bad stock, the reason or one naming the DMS document', (t) => {
  const lines = [
    { productCode: 'COKE', unit: 'bottle', quantity: 3, condition: 'good' },
    { productCode: 'COKE', unit: 'bottle', quantity: 1, condition: 'damaged' },
  ];
  const lookups = { invoiceId: 'inv_1', products, vanId: 'loc_van', badStockId: 'loc_bad', fiscalApplies: true };
  t.deepEqual(returnToCommand(dms('RT-1', '2026-03-04', { reason: 'Expired', lines }), lookups), {
    invoiceId: 'inv_1',
    returnDate: '2026-03-04',
    reason: 'Expired',
    locationId: 'loc_van',
    badStockLocationId: 'loc_bad',
    lines: [
      { productId: 'prd_coke', unit: 'bottle', quantity: 3, condition: 'good' },
      { productId: 'prd_coke', unit: 'bottle', quantity: 1, condition: 'damaged' },
    ],
    fiscalise: true,
  });
  const plain = returnToCommand(dms('RT-2', '2026-03-04', { lines: [lines[0]] }), {
    ...lookups,
    badStockId: null,
    fiscalApplies: false,
  });
  t.is(plain.reason, 'DMS return RT-2');
  t.is(plain.badStockLocationId, null);
  t.false(plain.fiscalise);
});

test('a collection: each allocation to its invoice, the rest left on the account, exact', (t) => {
  const document = dms('PY-1', '2026-03-05', {
    routeCode: 'R1',
    customerCode: 'C1',
    method: 'cheque',
    amount: '1000.10',
    currency: 'UGX',
    reference: 'CHQ-7',
    allocations: [
      { invoiceNumber: 'CS-1', amount: '400.05' },
      { invoiceNumber: 'CS-2', amount: '0.05' },
    ],
  });
  t.deepEqual(collectionToCommand(document, { customerId: 'cus_1', invoiceIds: ['inv_1', 'inv_2'], tripId: 'trp_1' }), {
    customerId: 'cus_1',
    method: 'cheque',
    amount: { amount: '1000.10', currency: 'UGX' },
    paymentDate: '2026-03-05',
    reference: 'CHQ-7',
    tripId: 'trp_1',
    allocations: [
      { invoiceId: 'inv_1', amount: { amount: '400.05', currency: 'UGX' } },
      { invoiceId: 'inv_2', amount: { amount: '0.05', currency: 'UGX' } },
    ],
    unallocated: { amount: '600', currency: 'UGX' },
  });
  const unallocated = collectionToCommand(
    dms('PY-2', '2026-03-05', { routeCode: 'R1', method: 'cash', amount: '250', currency: 'UGX' }),
    { customerId: 'cus_1', invoiceIds: [], tripId: 'trp_1' },
  );
  t.deepEqual(unallocated.allocations, []);
  t.deepEqual(unallocated.unallocated, { amount: '250', currency: 'UGX' });
  t.is(unallocated.reference, null);
});

test('a route settlement: the van counted by its closing stock (unnamed: 0) or by the books, and the day settled', (t) => {
  const held = new Map([
    ['prd_coke', 10],
    ['prd_crate', 4],
  ]);
  const both = [
    { id: 'prd_coke', product_code: 'COKE', is_empty: false },
    { id: 'prd_crate', product_code: 'CRATE', is_empty: true },
    { id: 'prd_fanta', product_code: 'FANTA', is_empty: false },
  ];
  const counted = routeSettlementToCommands(
    dms('RS-1', '2026-03-06', {
      routeCode: 'R1',
      cashHandedIn: '5000',
      closingStock: [
        { productCode: 'COKE', quantity: 6 },
        { productCode: 'COKE', quantity: 1 },
        { productCode: 'FANTA', quantity: 2 },
      ],
    }),
    {
      tripId: 'trp_1',
      held,
      named: new Map([
        ['COKE', { id: 'prd_coke' }],
        ['FANTA', { id: 'prd_fanta' }],
      ]),
      products: both,
    },
  );
  t.deepEqual(counted, {
    returnTrip: {
      tripId: 'trp_1',
      lines: [
        { productId: 'prd_coke', unit: 'bottle', countedQuantity: 7 },
        { productId: 'prd_crate', unit: 'piece', countedQuantity: 0 },
        { productId: 'prd_fanta', unit: 'bottle', countedQuantity: 2 },
      ],
    },
    settleTrip: { tripId: 'trp_1', handedIn: '5000', expenses: [], notes: 'Route settlement RS-1 from the DMS' },
    stock: [
      { productCode: 'COKE', book: 10, counted: 7, difference: -3 },
      { productCode: 'CRATE', book: 4, counted: 0, difference: -4 },
      { productCode: 'FANTA', book: 0, counted: 2, difference: 2 },
    ],
  });
  const byBooks = routeSettlementToCommands(dms('RS-2', '2026-03-06', { routeCode: 'R1', cashHandedIn: '0' }), {
    tripId: 'trp_2',
    held: new Map([['prd_coke', 5]]),
    named: new Map(),
    products: [
      { id: 'prd_coke', product_code: 'COKE', is_empty: false },
      { id: 'prd_fanta', product_code: 'FANTA', is_empty: false },
    ],
  });
  t.deepEqual(byBooks.returnTrip.lines, [{ productId: 'prd_coke', unit: 'bottle', countedQuantity: 5 }]);
  t.deepEqual(byBooks.stock, [{ productCode: 'COKE', book: 5, counted: 5, difference: 0 }]);
});

test('stock documents: a replenishment onto the van day, a stock out, an adjustment (a cost only when it adds), a company invoice', (t) => {
  const lines = [{ productCode: 'COKE', unit: 'case', quantity: 5 }];
  t.deepEqual(
    vanReplenishmentToCommand(dms('VR-1', '2026-03-07', { routeCode: 'R1', lines }), {
      warehouseId: 'loc_wh',
      vanId: 'loc_van',
      tripId: 'trp_1',
      products,
    }),
    {
      date: { day: '2026-03-07', field: '/documentDate' },
      fromLocationId: 'loc_wh',
      toLocationId: 'loc_van',
      tripId: 'trp_1',
      note: 'DMS van replenishment VR-1',
      lines: [{ productId: 'prd_coke', unit: 'case', quantity: 5 }],
    },
  );
  t.deepEqual(
    vanStockOutToCommand(dms('VU-1', '2026-03-07', { routeCode: 'R1', reasonCode: 'EXP', lines }), {
      fromId: 'loc_bad',
      toId: 'loc_damages',
      products,
    }),
    {
      date: { day: '2026-03-07', field: '/documentDate' },
      fromLocationId: 'loc_bad',
      toLocationId: 'loc_damages',
      note: 'DMS van stock out VU-1 (EXP)',
      lines: [{ productId: 'prd_coke', unit: 'case', quantity: 5 }],
    },
  );
  t.is(
    vanStockOutToCommand(dms('VU-2', '2026-03-07', { routeCode: 'R1', lines }), { fromId: 'a', toId: 'b', products })
      .note,
    'DMS van stock out VU-2',
  );
  t.deepEqual(
    stockAdjustmentToCommand(
      dms('IJ-1', '2026-03-07', {
        reasonCode: 'COUNT',
        locationCode: 'WH',
        lines: [
          { productCode: 'COKE', unit: 'bottle', quantity: 4, unitCost: '900' },
          { productCode: 'COKE', unit: 'bottle', quantity: -2, unitCost: '900' },
          { productCode: 'CRATE', unit: 'piece', quantity: 1 },
        ],
      }),
      { reason: { code: 'COUNT', description: 'Stock count' }, locationId: 'loc_wh', products },
    ),
    {
      date: { day: '2026-03-07', field: '/documentDate' },
      reasonCode: 'COUNT',
      note: 'DMS stock adjustment IJ-1: Stock count',
      lines: [
        { productId: 'prd_coke', locationId: 'loc_wh', unit: 'bottle', quantity: 4, unitCost: '900' },
        { productId: 'prd_coke', locationId: 'loc_wh', unit: 'bottle', quantity: -2 },
        { productId: 'prd_crate', locationId: 'loc_wh', unit: 'piece', quantity: 1 },
      ],
    },
  );
  t.deepEqual(
    companyInvoiceToCommand(
      dms('CI-1', '2026-03-07', {
        supplierCode: 'SUP1',
        locationCode: 'WH',
        lines: [{ productCode: 'COKE', unit: 'case', invoicedQuantity: 3, receivedQuantity: 3, unitCost: '20000' }],
      }),
      { locationId: 'loc_wh', products },
    ),
    {
      date: { day: '2026-03-07', field: '/documentDate' },
      reasonCode: 'SUPPLIER_RECEIPT',
      supplierCode: 'SUP1',
      note: 'DMS company invoice CI-1 from supplier SUP1',
      lines: [{ productId: 'prd_coke', locationId: 'loc_wh', unit: 'case', quantity: 3, unitCost: '20000' }],
    },
  );
});
