// Credit notes and returns, proved at the service level (posting functions with an operator, no HTTP): a credit
// note applied first to its invoice's balance with the rest left on the account (and a cash refund from that rest),
// its cancel that puts the invoice's balance back and is refused when it must be, every refusal of the create
// naming its field and writing nothing; a return of part of a van sale back onto the van with its credit note at the
// invoice's prices, a second return refused beyond what is left, damaged goods to the bad-stock location, empties
// collected. The harness runs the ledger checkers (the credit notes' remaining amounts included) when the file ends.
import test, { type ExecutionContext } from 'ava';
import { ApiError } from '../../server/platform/errors/api-error.js';
import { closePeriod, reopenPeriod } from '../../server/domain/periods.js';
import { customers } from '../../server/modules/customers/service.js';
import { locations } from '../../server/modules/locations/service.js';
import { products } from '../../server/modules/products/service.js';
import { routes } from '../../server/modules/routes/service.js';
import { salespeople } from '../../server/modules/salespeople/service.js';
import { postStockAdjustment } from '../../server/modules/stock/documents.js';
import { departTrip, loadTrip, openTrip } from '../../server/modules/trips/documents.js';
import { createInvoice, voidInvoice } from '../../server/modules/invoices/documents.js';
import { auditCustomerAccount } from '../../server/modules/customer-account/audit.js';
import {
  cancelCreditNote,
  issueCreditNote,
  type IssueCreditNoteCommand,
} from '../../server/modules/credit-notes/documents.js';
import { findCreditNote } from '../../server/modules/credit-notes/repository.js';
import { toCreditNote } from '../../server/modules/credit-notes/representation.js';
import { processReturn } from '../../server/modules/returns/documents.js';
import { findReturn } from '../../server/modules/returns/repository.js';
import type { OperatorActor } from '../../server/platform/access/actor.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('credit_notes');
});
test.after.always(async () => {
  await world?.close();
});

interface Shop {
  organizationId: string;
  operator: OperatorActor;
  soda: string;
  crate: string;
  bottle: string;
  warehouse: string;
  customer: string;
  other: string;
}

/** Warehouse M01 with 10 cases of soda (24 a case, 18 % tax, 1 crate and 24 bottles per case), 20 crates, 500 bottles; two customers. */
async function shop(): Promise<Shop> {
  const { organization, operator } = await world.organization({ modules: ['delivery', 'field-sales'] });
  return world.post(async (tx) => {
    const crate = await products.create(tx, operator, {
      productCode: '900001',
      name: 'Crate 24',
      packSize: 1,
      sellingUnits: ['piece'],
      isEmpty: true,
    });
    const bottle = await products.create(tx, operator, {
      productCode: '900002',
      name: 'Bottle 300ml',
      packSize: 1,
      sellingUnits: ['piece'],
      isEmpty: true,
    });
    const soda = await products.create(tx, operator, {
      productCode: '300001',
      name: 'Soda 300ml',
      packSize: 24,
      sellingUnits: ['case', 'bottle'],
      taxRate: 18,
      empties: [
        { productCode: '900001', quantity: 1, per: 'case' },
        { productCode: '900002', quantity: 24, per: 'case' },
      ],
    });
    const warehouse = await locations.create(tx, operator, { code: 'M01', name: 'Main' });
    const customer = await customers.create(
      tx,
      operator,
      { outletCode: 'UG0000001', name: 'Mama Shop', channel: 'retail' },
      { dms: 'UG0000001' },
    );
    const other = await customers.create(tx, operator, {
      outletCode: 'UG0000002',
      name: 'Other Shop',
      channel: 'retail',
    });
    await postStockAdjustment(tx, operator, {
      reasonCode: 'OPENING',
      lines: [
        { productId: soda.id, locationId: warehouse.id, unit: 'case', quantity: 10, unitCost: '20000' },
        { productId: crate.id, locationId: warehouse.id, unit: 'piece', quantity: 20, unitCost: '3000' },
        { productId: bottle.id, locationId: warehouse.id, unit: 'piece', quantity: 500, unitCost: '200' },
      ],
    });
    return {
      organizationId: organization.id,
      operator,
      soda: soda.id,
      crate: crate.id,
      bottle: bottle.id,
      warehouse: warehouse.id,
      customer: customer.id,
      other: other.id,
    };
  });
}

/** One case of soda at 25 500 + 18 % = 30 090 (or `cases` of them). */
const sellSoda = (s: Shop, cases = 1, customerId = s.customer) =>
  world.post((tx) =>
    createInvoice(tx, s.operator, {
      customerId,
      locationId: s.warehouse,
      issueDate: '2026-11-24',
      currency: 'UGX',
      lines: [{ productId: s.soda, unit: 'case', quantity: cases, unitPrice: '25500' }],
    }),
  );

/** An adjustment credit note of one untaxed adjustment line of `amount`. */
const adjustment = (
  s: Shop,
  invoiceId: string,
  amount: string,
  change: Partial<IssueCreditNoteCommand> = {},
): IssueCreditNoteCommand => ({
  customer: { id: s.customer },
  invoiceId,
  reason: 'Promotion price difference',
  issueDate: '2026-11-25',
  lines: [{ type: 'adjustment', description: 'Promotion rebate', quantity: 1, unitPrice: amount }],
  ...change,
});

const invoiceRow = async (s: Shop, id: string) =>
  world.db
    .selectFrom('invoices')
    .select(['status', 'balance'])
    .where('organization_id', '=', s.organizationId)
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
const openBalance = async (s: Shop, customerId = s.customer) =>
  (
    await world.db
      .selectFrom('customer_balances')
      .select('open_balance')
      .where('organization_id', '=', s.organizationId)
      .where('customer_id', '=', customerId)
      .executeTakeFirst()
  )?.open_balance ?? null;
const level = async (s: Shop, productId: string, locationId: string) =>
  (
    await world.db
      .selectFrom('stock_levels')
      .select('quantity')
      .where('organization_id', '=', s.organizationId)
      .where('location_id', '=', locationId)
      .where('product_id', '=', productId)
      .executeTakeFirst()
  )?.quantity ?? 0;
const held = async (s: Shop, productId: string) =>
  (
    await world.db
      .selectFrom('customer_empties')
      .select('quantity')
      .where('organization_id', '=', s.organizationId)
      .where('customer_id', '=', s.customer)
      .where('product_id', '=', productId)
      .executeTakeFirst()
  )?.quantity ?? 0;
const entriesOf = async (s: Shop, documentId: string) =>
  world.db
    .selectFrom('customer_account_entries')
    .select(['type', 'amount', 'invoice_id'])
    .where('organization_id', '=', s.organizationId)
    .where('document_id', '=', documentId)
    .orderBy('type')
    .execute();
const creditNoteJson = async (s: Shop, id: string) => {
  const found = (await findCreditNote(world.db, s.organizationId, id))!;
  return toCreditNote(found.row, found.parts, s.operator);
};
/** How many rows the organisation has in the tables a credit note writes (refusals must leave them all alone). */
const footprint = async (s: Shop) => {
  const count = async (
    table:
      | 'credit_notes'
      | 'credit_note_lines'
      | 'customer_account_entries'
      | 'events'
      | 'external_codes'
      | 'returns'
      | 'stock_movements'
      | 'empties_movements',
  ) =>
    Number(
      (
        await world.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .where('organization_id', '=', s.organizationId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    creditNotes: await count('credit_notes'),
    lines: await count('credit_note_lines'),
    entries: await count('customer_account_entries'),
    events: await count('events'),
    codes: await count('external_codes'),
    returns: await count('returns'),
    movements: await count('stock_movements'),
    empties: await count('empties_movements'),
    balance: await openBalance(s),
  };
};

async function refusal(t: ExecutionContext, promise: Promise<unknown>): Promise<ApiError> {
  return (await t.throwsAsync(promise, { instanceOf: ApiError })) as ApiError;
}

test("a credit note larger than its invoice's balance pays the invoice and leaves the rest on the account as remainingAmount, less a cash refund", async (t) => {
  const s = await shop();
  const invoice = await sellSoda(s);
  t.is(await openBalance(s), '30090.0000');
  const posted = await world.post((tx) =>
    issueCreditNote(
      tx,
      s.operator,
      adjustment(s, invoice.id, '40000', { cashRefundAmount: '2000', externalCodes: { dms: 'CN-DMS-1' } }),
    ),
  );
  t.is(posted.number, 'CN-000001');
  // 40 000 credited: 30 090 applied to the invoice, 9 910 left, of which 2 000 paid out in cash: 7 910 remains.
  t.like(await invoiceRow(s, invoice.id), { status: 'paid', balance: '0.0000' });
  t.is(await openBalance(s), '-7910.0000', 'the customer owes 30 090 - 40 000 + 2 000: a credit of 7 910');
  t.deepEqual(await entriesOf(s, posted.id), [
    { type: 'credit_application', amount: '-30090.0000', invoice_id: invoice.id },
    { type: 'credit_refund', amount: '2000.0000', invoice_id: null },
    { type: 'credit_unapplied', amount: '-9910.0000', invoice_id: null },
  ]);
  const note = await creditNoteJson(s, posted.id);
  t.like(note, {
    status: 'applied',
    type: 'adjustment',
    invoiceId: invoice.id,
    returnId: null,
    tripId: null,
    issueDate: '2026-11-25',
    subtotal: { amount: '40000' },
    discount: { amount: '0' },
    tax: { amount: '0' },
    total: { amount: '40000' },
    remainingAmount: { amount: '7910', currency: 'UGX' },
    cashRefundAmount: { amount: '2000', currency: 'UGX' },
    externalCodes: { dms: 'CN-DMS-1' },
    customer: { id: s.customer, name: 'Mama Shop', code: 'UG0000001' },
    fiscal: { status: null, fdn: null },
    posting: { status: 'not_applicable', accountingRef: null },
  });
  t.deepEqual(
    note.applications.map((a) => [a.invoiceId, a.invoiceNumber, a.amount.amount, a.refundPaymentId]),
    [[invoice.id, invoice.number, '30090', null]],
  );
  t.like(note.lines[0], {
    type: 'adjustment',
    product: null,
    description: 'Promotion rebate',
    quantity: 1,
    taxRate: 0,
  });
  const events = await world.db
    .selectFrom('events')
    .select(['type', 'record_id'])
    .where('organization_id', '=', s.organizationId)
    .where('type', 'in', ['credit_note.created', 'invoice.updated'])
    .orderBy('type')
    .execute();
  t.deepEqual(events, [
    { type: 'credit_note.created', record_id: posted.id },
    { type: 'invoice.updated', record_id: invoice.id },
  ]);
  t.deepEqual(await auditCustomerAccount(world.db, s.organizationId), []);

  // A product line is taxed at the product's rate: 2 bottles at 1 000 less 100 -> 1 900 + 18 % (342) = 2 242, on a new invoice.
  const second = await sellSoda(s);
  const taxed = await world
    .post((tx) =>
      issueCreditNote(tx, s.operator, {
        customer: { code: 'UG0000001' },
        invoiceId: second.id,
        reason: 'Broken seal',
        issueDate: '2026-11-25',
        lines: [{ product: { code: '300001', system: 'dms' }, quantity: 2, unitPrice: '1000', discount: '100' }],
      }),
    )
    .catch((e: unknown) => e);
  // The product has no dms code (products are found by code only when they carry one): 422 naming the field.
  t.true(taxed instanceof ApiError && taxed.code === 'product_not_found');
  const byId = await world.post((tx) =>
    issueCreditNote(tx, s.operator, {
      customer: { code: 'UG0000001' },
      invoiceId: second.id,
      reason: 'Broken seal',
      issueDate: '2026-11-25',
      lines: [{ product: { id: s.soda }, quantity: 2, unitPrice: '1000', discount: '100' }],
    }),
  );
  t.like(await creditNoteJson(s, byId.id), {
    total: { amount: '2242' },
    tax: { amount: '342' },
    remainingAmount: { amount: '0' },
    lines: [
      {
        type: 'product',
        product: { id: s.soda, code: '300001', name: 'Soda 300ml' },
        description: 'Soda 300ml',
        taxRate: 18,
      },
    ],
  });
  t.like(await invoiceRow(s, second.id), { status: 'open', balance: '27848.0000' });
});

async function vanSale(s: Shop) {
  const v = await world.post(async (tx) => {
    const route = await routes.create(tx, s.operator, { routeCode: 'R01', name: 'Kampala Central' });
    const salesperson = await salespeople.create(tx, s.operator, {
      salesmanCode: 'SM01',
      name: 'Joseph Okello',
      routeId: route.id,
    });
    const van = await locations.create(tx, s.operator, { code: 'V_R01-G', name: 'Van R01', routeId: route.id });
    const bad = await locations.create(tx, s.operator, {
      code: 'V_R01-B',
      name: 'Van R01 bad stock',
      routeId: route.id,
    });
    await routes.change(tx, s.operator, route.id, { salespersonId: salesperson.id, vanLocationId: van.id });
    return { van: van.id, bad: bad.id };
  });
  const trip = await world.post((tx) =>
    openTrip(tx, s.operator, { vanLocationId: v.van, warehouseLocationId: s.warehouse, businessDate: '2026-11-24' }),
  );
  await world.post((tx) =>
    loadTrip(tx, s.operator, {
      tripId: trip.id,
      lines: [
        { productId: s.soda, unit: 'case', quantity: 2 },
        { productId: s.crate, unit: 'piece', quantity: 2 },
        { productId: s.bottle, unit: 'piece', quantity: 48 },
      ],
    }),
  );
  await world.post((tx) => departTrip(tx, s.operator, trip.id));
  // 2 cases at 25 500 less 1 000: 51 000 - 1 000 = 50 000 + 18 % (9 000) = 59 000; the van is left empty.
  const invoice = await world.post((tx) =>
    createInvoice(tx, s.operator, {
      customerId: s.customer,
      locationId: v.van,
      issueDate: '2026-11-24',
      currency: 'UGX',
      lines: [{ productId: s.soda, unit: 'case', quantity: 2, unitPrice: '25500', discount: '1000' }],
    }),
  );
  return { ...v, trip: trip.id, invoice };
}

test('a return of part of a van sale puts the goods back on the van and credits the invoice at its prices (type return, returnId, tripId); the empties come back from the customer', async (t) => {
  const s = await shop();
  const sale = await vanSale(s);
  t.deepEqual([await level(s, s.soda, sale.van), await held(s, s.crate), await held(s, s.bottle)], [0, 2, 48]);
  const processed = await world.post((tx) =>
    processReturn(tx, s.operator, {
      invoiceId: sale.invoice.id,
      returnDate: '2026-11-25',
      reason: 'Expired',
      lines: [{ invoiceLineNumber: 1, unit: 'case', quantity: 1, condition: 'good' }],
    }),
  );
  t.is(processed.number, 'RT-000001');
  // One of two cases back on the van, with its crate and 24 bottles, collected from the customer.
  t.deepEqual(
    [await level(s, s.soda, sale.van), await level(s, s.crate, sale.van), await level(s, s.bottle, sale.van)],
    [24, 1, 24],
  );
  t.deepEqual([await held(s, s.crate), await held(s, s.bottle)], [1, 24]);
  // At the invoice's price, with half of the line's 1 000 discount: 25 500 - 500 = 25 000 + 18 % (4 500) = 29 500.
  const found = (await findReturn(world.db, s.organizationId, processed.id))!;
  t.like(found.row, {
    status: 'processed',
    invoice_id: sale.invoice.id,
    location_id: sale.van,
    trip_id: sale.trip,
    subtotal: '25500.0000',
    discount: '500.0000',
    tax: '4500.0000',
    total: '29500.0000',
  });
  t.is(found.parts.creditNoteId, processed.creditNoteId);
  const note = await creditNoteJson(s, processed.creditNoteId!);
  t.like(note, {
    type: 'return',
    returnId: processed.id,
    tripId: sale.trip,
    invoiceId: sale.invoice.id,
    reason: 'Expired',
    issueDate: '2026-11-25',
    subtotal: { amount: '25500' },
    discount: { amount: '500' },
    tax: { amount: '4500' },
    total: { amount: '29500' },
    remainingAmount: { amount: '0' },
    lines: [
      {
        type: 'product',
        quantity: 1,
        unitPrice: { amount: '25500' },
        discount: { amount: '500' },
        taxRate: 18,
        amount: { amount: '25000' },
        tax: { amount: '4500' },
      },
    ],
  });
  t.like(await invoiceRow(s, sale.invoice.id), { status: 'open', balance: '29500.0000' });
  t.is(await openBalance(s), '29500.0000');
  // The goods moved as one stock document of type return, with its stock.movement.created event.
  const document = await world.db
    .selectFrom('stock_documents')
    .select(['id', 'type', 'number', 'note', 'trip_id'])
    .where('organization_id', '=', s.organizationId)
    .where('type', '=', 'return')
    .executeTakeFirstOrThrow();
  t.like(document, {
    number: 'RTN-000001',
    trip_id: sale.trip,
    note: `Return ${processed.id} of invoice ${sale.invoice.number}`,
  });
  const events = await world.db
    .selectFrom('events')
    .select('type')
    .where('organization_id', '=', s.organizationId)
    .where('record_id', 'in', [document.id, processed.creditNoteId!])
    .orderBy('type')
    .execute();
  t.deepEqual(
    events.map((e) => e.type),
    ['credit_note.created', 'stock.movement.created'],
  );
  // The return came back at the cost the sale took it out at (20 000 a case: 833.333333 a bottle).
  const movement = await world.db
    .selectFrom('stock_movements')
    .select(['unit_cost', 'to_location_id', 'quantity'])
    .where('organization_id', '=', s.organizationId)
    .where('document_id', '=', document.id)
    .where('product_id', '=', s.soda)
    .executeTakeFirstOrThrow();
  t.like(movement, { to_location_id: sale.van, quantity: 24, unit_cost: '833.333333' });
});

test("a second return beyond what is left to return is refused naming the line and writes nothing; damaged goods go to the trip's bad-stock location; the last bottles take the rest of the discount", async (t) => {
  const s = await shop();
  const sale = await vanSale(s);
  await world.post((tx) =>
    processReturn(tx, s.operator, {
      invoiceId: sale.invoice.id,
      returnDate: '2026-11-25',
      lines: [{ productId: s.soda, unit: 'case', quantity: 1, condition: 'good' }],
    }),
  );
  const before = await footprint(s);
  // 48 bottles sold, 24 back already: 25 more is one too many.
  const over = await refusal(
    t,
    world.post((tx) =>
      processReturn(tx, s.operator, {
        invoiceId: sale.invoice.id,
        returnDate: '2026-11-25',
        lines: [{ invoiceLineNumber: 1, unit: 'bottle', quantity: 25, condition: 'damaged' }],
      }),
    ),
  );
  t.is(over.code, 'business_rule');
  t.deepEqual(
    over.errors?.map((e) => e.field),
    ['/lines/0/quantity'],
  );
  // Two lines of one invoice line in one return count together: 20 + 5 is 25 as well.
  const split = await refusal(
    t,
    world.post((tx) =>
      processReturn(tx, s.operator, {
        invoiceId: sale.invoice.id,
        returnDate: '2026-11-25',
        lines: [
          { invoiceLineNumber: 1, unit: 'bottle', quantity: 20, condition: 'good' },
          { invoiceLineNumber: 1, unit: 'bottle', quantity: 5, condition: 'damaged' },
        ],
      }),
    ),
  );
  t.deepEqual(
    split.errors?.map((e) => e.field),
    ['/lines/1/quantity'],
  );
  t.deepEqual(await footprint(s), before);

  // One bottle damaged: to the van's bad-stock pair; priced 25 500 / 24 = 1 062.5 -> 1 063, its discount the
  // cumulative share round(1 000 x 25 / 48) = 521 less the 500 taken: 21; 1 042 + 18 % (187.56 -> 188) = 1 230.
  const damaged = await world.post((tx) =>
    processReturn(tx, s.operator, {
      invoiceId: sale.invoice.id,
      returnDate: '2026-11-25',
      lines: [{ invoiceLineNumber: 1, unit: 'bottle', quantity: 1, condition: 'damaged' }],
    }),
  );
  t.deepEqual([await level(s, s.soda, sale.bad), await level(s, s.soda, sale.van)], [1, 24]);
  t.like((await findReturn(world.db, s.organizationId, damaged.id))!.row, {
    bad_stock_location_id: sale.bad,
    subtotal: '1063.0000',
    discount: '21.0000',
    tax: '188.0000',
    total: '1230.0000',
  });
  // A loose bottle carries no crate: the customer's empties are as the first return left them.
  t.deepEqual([await held(s, s.crate), await held(s, s.bottle)], [1, 24]);
  // The last 23 bottles take the rest of the discount (1 000 - 521 = 479), so all shares add up to the line's 1 000.
  const last = await world.post((tx) =>
    processReturn(tx, s.operator, {
      invoiceId: sale.invoice.id,
      returnDate: '2026-11-25',
      lines: [{ invoiceLineNumber: 1, unit: 'bottle', quantity: 23, condition: 'good' }],
    }),
  );
  t.like((await findReturn(world.db, s.organizationId, last.id))!.row, { discount: '479.0000' });
  const nothingLeft = await refusal(
    t,
    world.post((tx) =>
      processReturn(tx, s.operator, {
        invoiceId: sale.invoice.id,
        lines: [{ invoiceLineNumber: 1, unit: 'bottle', quantity: 1, condition: 'good' }],
      }),
    ),
  );
  t.deepEqual(
    nothingLeft.errors?.map((e) => e.field),
    ['/lines/0/quantity'],
  );
  // The empties line of the invoice is not returned by itself; a warehouse sale's damaged goods need a damages location.
  const empties = await refusal(
    t,
    world.post((tx) =>
      processReturn(tx, s.operator, {
        invoiceId: sale.invoice.id,
        lines: [{ invoiceLineNumber: 2, unit: 'piece', quantity: 1, condition: 'good' }],
      }),
    ),
  );
  t.deepEqual(
    empties.errors?.map((e) => e.field),
    ['/lines/0/invoiceLineNumber'],
  );
  const warehouseSale = await sellSoda(s);
  const noDamages = await refusal(
    t,
    world.post((tx) =>
      processReturn(tx, s.operator, {
        invoiceId: warehouseSale.id,
        lines: [{ invoiceLineNumber: 1, unit: 'bottle', quantity: 1, condition: 'damaged' }],
      }),
    ),
  );
  t.deepEqual([noDamages.code, noDamages.errors?.map((e) => e.field)], ['business_rule', ['/badStockLocationId']]);
  const damages = await world.post((tx) => locations.create(tx, s.operator, { code: 'D01', name: 'Damages store' }));
  await world.post((tx) =>
    processReturn(tx, s.operator, {
      invoiceId: warehouseSale.id,
      lines: [{ invoiceLineNumber: 1, unit: 'bottle', quantity: 1, condition: 'damaged' }],
    }),
  );
  t.is(await level(s, s.soda, damages.id), 1);
});

test("cancel removes the applications (the invoice is open again with its balance back), is refused a second time, when fiscalised, for a return's credit note and in a closed period", async (t) => {
  const s = await shop();
  const invoice = await sellSoda(s);
  const posted = await world.post((tx) => issueCreditNote(tx, s.operator, adjustment(s, invoice.id, '40000')));
  t.like(await invoiceRow(s, invoice.id), { status: 'paid', balance: '0.0000' });
  t.is(await openBalance(s), '-9910.0000');

  await world.post((tx) => cancelCreditNote(tx, s.operator, posted.id, 'Wrong invoice'));
  t.like(await invoiceRow(s, invoice.id), { status: 'open', balance: '30090.0000' });
  t.is(await openBalance(s), '30090.0000');
  const cancelled = await creditNoteJson(s, posted.id);
  t.like(cancelled, {
    status: 'cancelled',
    cancelReason: 'Wrong invoice',
    remainingAmount: { amount: '0' },
    applications: [],
  });
  t.deepEqual(
    (await entriesOf(s, posted.id)).map((e) => [e.type, e.amount]),
    [
      ['credit_application', '-30090.0000'],
      ['credit_application_reversal', '30090.0000'],
      ['credit_unapplied', '-9910.0000'],
      ['credit_unapplied_reversal', '9910.0000'],
    ],
  );
  const twice = await refusal(
    t,
    world.post((tx) => cancelCreditNote(tx, s.operator, posted.id, 'Again')),
  );
  t.is(twice.code, 'invalid_state');

  // Submitted to the fiscal system: set by a direct update, as the fiscal posting job leaves it.
  const fiscal = await world.post((tx) => issueCreditNote(tx, s.operator, adjustment(s, invoice.id, '1000')));
  await world.db
    .updateTable('credit_notes')
    .set({ fiscal_status: 'submitted', fiscal_fdn: '3240001234' })
    .where('organization_id', '=', s.organizationId)
    .where('id', '=', fiscal.id)
    .execute();
  const fiscalised = await refusal(
    t,
    world.post((tx) => cancelCreditNote(tx, s.operator, fiscal.id, 'Try')),
  );
  t.is(fiscalised.code, 'invalid_state');
  t.regex(fiscalised.message, /fiscalised .*tax authority holds it/);
  t.like(await invoiceRow(s, invoice.id), { balance: '29090.0000' });

  // A return's credit note: the goods came back, so its credit stays.
  const processed = await world.post((tx) =>
    processReturn(tx, s.operator, {
      invoiceId: invoice.id,
      lines: [{ invoiceLineNumber: 1, unit: 'bottle', quantity: 2, condition: 'good' }],
    }),
  );
  const ofReturn = await refusal(
    t,
    world.post((tx) => cancelCreditNote(tx, s.operator, processed.creditNoteId!, 'Try')),
  );
  t.is(ofReturn.code, 'invalid_state');
  t.regex(ofReturn.message, /return's credit note/);

  // A credit note dated in a closed period stays.
  const old = await world.post((tx) =>
    issueCreditNote(tx, s.operator, adjustment(s, invoice.id, '500', { issueDate: '2026-11-25' })),
  );
  await world.post((tx) => closePeriod(tx, s.organizationId, '2026-11-30'));
  const closed = await refusal(
    t,
    world.post((tx) => cancelCreditNote(tx, s.operator, old.id, 'Late')),
  );
  t.deepEqual([closed.code, closed.errors?.map((e) => e.field)], ['period_closed', ['/issueDate']]);
  await world.post((tx) => reopenPeriod(tx, s.organizationId, null));
  t.deepEqual(await auditCustomerAccount(world.db, s.organizationId), []);
});

test('every refusal of a credit note names its field and writes nothing: customer_not_found, invoice_not_found, product_not_found, period_closed, business_rule', async (t) => {
  const s = await shop();
  const invoice = await sellSoda(s);
  const otherInvoice = await sellSoda(s, 1, s.other);
  const voided = await sellSoda(s);
  await world.post((tx) => voidInvoice(tx, s.operator, voided.id, 'Entered twice'));
  await world.post((tx) => closePeriod(tx, s.organizationId, '2026-10-31'));
  const before = await footprint(s);
  const cases: [string, Partial<IssueCreditNoteCommand>, string, string[]][] = [
    [
      'unknown customer id',
      { customer: { id: 'cus_01JD4R7Q8S6T9V3X5Z7B9D1F3H' } },
      'customer_not_found',
      ['/customer/id'],
    ],
    ['unknown customer code', { customer: { code: 'UG9999999' } }, 'customer_not_found', ['/customer/code']],
    ['unknown invoice', { invoiceId: 'inv_01JD4R7Q8S6T9V3X5Z7B9D1F3V' }, 'invoice_not_found', ['/invoiceId']],
    [
      'unknown product',
      {
        lines: [
          { product: { id: 'prd_01JD4R7Q8S6T9V3X5Z7B9D1F3K' }, quantity: 1, unitPrice: '100' },
          { product: { id: s.soda }, quantity: 1, unitPrice: '100' },
        ],
      },
      'product_not_found',
      ['/lines/0/product/id'],
    ],
    ['closed period', { issueDate: '2026-10-31' }, 'period_closed', ['/issueDate']],
    ["another customer's invoice", { invoiceId: otherInvoice.id }, 'business_rule', ['/invoiceId']],
    ['a void invoice', { invoiceId: voided.id }, 'business_rule', ['/invoiceId']],
    ['a refund above the rest', { cashRefundAmount: '1' }, 'business_rule', ['/cashRefundAmount']],
    [
      'a total of 0',
      { lines: [{ type: 'adjustment', description: 'Nothing', quantity: 1, unitPrice: '0' }] },
      'business_rule',
      ['/lines'],
    ],
    [
      'a discount above the line',
      { lines: [{ product: { id: s.soda }, quantity: 1, unitPrice: '100', discount: '101' }] },
      'business_rule',
      ['/lines/0/discount'],
    ],
    [
      'a tax rate on a product line',
      { lines: [{ product: { id: s.soda }, quantity: 1, unitPrice: '100', taxRate: '0' }] },
      'invalid_field',
      ['/lines/0/taxRate'],
    ],
    ['both id and code', { customer: { id: s.customer, code: 'UG0000001' } }, 'invalid_field', ['/customer/id']],
  ];
  for (const [name, change, code, fields] of cases) {
    const error = await refusal(
      t,
      world.post((tx) =>
        issueCreditNote(
          tx,
          s.operator,
          adjustment(s, invoice.id, '1000', { externalCodes: { dms: 'CN-REFUSED' }, ...change }),
        ),
      ),
    );
    t.deepEqual([error.code, error.errors?.map((e) => e.field)], [code, fields], name);
  }
  t.deepEqual(await footprint(s), before, 'nothing of any refused credit note was written');
  t.like(await invoiceRow(s, invoice.id), { status: 'open', balance: '30090.0000' });
});

test("the checker recomputes a credit note's remaining amount from its account entries and reports a kept amount that differs", async (t) => {
  const s = await shop();
  const invoice = await sellSoda(s);
  const posted = await world.post((tx) => issueCreditNote(tx, s.operator, adjustment(s, invoice.id, '40000')));
  t.deepEqual(await auditCustomerAccount(world.db, s.organizationId), []);
  world.tampered(s.organizationId);
  await world.db
    .updateTable('credit_notes')
    .set({ remaining_amount: '9000' })
    .where('organization_id', '=', s.organizationId)
    .where('id', '=', posted.id)
    .execute();
  t.deepEqual(await auditCustomerAccount(world.db, s.organizationId), [
    {
      kind: 'credit_note_remaining',
      subject: `credit note CN-000001 (${posted.id})`,
      expected: '9910.0000 from the account entries',
      actual: '9000.0000 kept',
    },
  ]);
});

test("credit_note.created and credit_note.cancelled are webhook events carrying the credit note as GET answers it, without the customer's personal fields", async (t) => {
  const { webhookObjects, webhookEventTypes } = await import('../../server/composition/modules.js');
  t.true(webhookEventTypes.includes('credit_note.created') && webhookEventTypes.includes('credit_note.cancelled'));
  const s = await shop();
  const invoice = await sellSoda(s);
  const posted = await world.post((tx) => issueCreditNote(tx, s.operator, adjustment(s, invoice.id, '1000')));
  const object = await webhookObjects['credit_note.created']!.read(
    world.db,
    world.keyActor(s.operator.organization, []),
    posted.id,
  );
  t.like(object, {
    id: posted.id,
    creditNoteNumber: 'CN-000001',
    status: 'applied',
    customer: { id: s.customer, name: 'Mama Shop' },
  });
  t.false('phone' in (object!.customer as object));
  t.is(webhookObjects['credit_note.cancelled']!.fetchPath(posted.id, object!), `/api/v1/credit-notes/${posted.id}`);
});
