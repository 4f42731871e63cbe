// Invoices and the customer account, proved at the service level (posting functions with an operator, no HTTP):
// the arithmetic to the shilling (tax rounded per line), stock and empties moved through their ledgers, the credit
// rule on the locked balance, the van sale's rules, a void that moves everything back and is refused when not
// allowed, and the checker that recomputes invoice and customer balances from the account entries. The harness
// runs both ledger checkers over every organisation when the file closes.
import test, { type ExecutionContext } from 'ava';
import { ApiError } from '../../server/platform/errors/api-error.js';
import { customers } from '../../server/modules/customers/service.js';
import { locations } from '../../server/modules/locations/service.js';
import { products } from '../../server/modules/products/service.js';
import { routes } from '../../server/modules/routes/service.js';
import { salespeople } from '../../server/modules/salespeople/service.js';
import { postStockAdjustment } from '../../server/modules/stock/documents.js';
import { auditStock } from '../../server/modules/stock/audit.js';
import { departTrip, loadTrip, openTrip } from '../../server/modules/trips/documents.js';
import { createInvoice, voidInvoice, type CreateInvoiceCommand } from '../../server/modules/invoices/documents.js';
import { lockCustomerBalance, postAccountEntries } from '../../server/modules/customer-account/ledger.js';
import { auditCustomerAccount } from '../../server/modules/customer-account/audit.js';
import { findInvoice } from '../../server/modules/invoices/repository.js';
import type { Module } from '../../server/platform/access/organizations.js';
import type { OperatorActor } from '../../server/platform/access/actor.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('invoices');
});
test.after.always(async () => {
  await world?.close();
});

interface Shop {
  organizationId: string;
  operator: OperatorActor;
  soda: string;
  water: string;
  juice: string;
  crate: string;
  bottle: string;
  warehouse: string;
  customer: string;
}

/**
 * An organisation with a warehouse M01 holding 10 cases of soda (24 a case, carrying 1 crate and 24 bottles per
 * case), 2 cases of water (12), 5 cases of juice (12), 20 crates and 500 bottles; all at 18 % tax but juice at 0 %.
 */
async function shop(options: { creditLimit?: string; modules?: Module[] } = {}): Promise<Shop> {
  const { organization, operator } = await world.organization({ modules: options.modules ?? [] });
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
    const water = await products.create(tx, operator, {
      productCode: '300002',
      name: 'Water 500ml',
      packSize: 12,
      sellingUnits: ['case', 'bottle'],
      taxRate: 18,
    });
    const juice = await products.create(tx, operator, {
      productCode: '300003',
      name: 'Juice 1l',
      packSize: 12,
      sellingUnits: ['case'],
      taxRate: 18,
    });
    const warehouse = await locations.create(tx, operator, { code: 'M01', name: 'Main' });
    const customer = await customers.create(tx, operator, {
      outletCode: 'UG0000001',
      name: 'Mama Shop',
      channel: 'retail',
      paymentTermsDays: 14,
      ...(options.creditLimit === undefined ? {} : { creditLimit: { amount: options.creditLimit, currency: 'UGX' } }),
    });
    await postStockAdjustment(tx, operator, {
      reasonCode: 'OPENING',
      lines: [
        { productId: soda.id, locationId: warehouse.id, unit: 'case', quantity: 10, unitCost: '20000' },
        { productId: water.id, locationId: warehouse.id, unit: 'case', quantity: 2, unitCost: '6000' },
        { productId: juice.id, locationId: warehouse.id, unit: 'case', quantity: 5, unitCost: '8000' },
        { productId: crate.id, locationId: warehouse.id, unit: 'piece', quantity: 20, unitCost: '3000' },
        { productId: bottle.id, locationId: warehouse.id, unit: 'piece', quantity: 500, unitCost: '200' },
      ],
    });
    return {
      organizationId: organization.id,
      operator,
      soda: soda.id,
      water: water.id,
      juice: juice.id,
      crate: crate.id,
      bottle: bottle.id,
      warehouse: warehouse.id,
      customer: customer.id,
    };
  });
}

/** Soda 3 cases at 25 500 less 1 500; water 5 bottles at 1 234; juice 2 cases at 10 001 less 3. */
const threeLines = (s: Shop, change: Partial<CreateInvoiceCommand> = {}): CreateInvoiceCommand => ({
  customerId: s.customer,
  locationId: s.warehouse,
  issueDate: '2026-11-24',
  currency: 'UGX',
  lines: [
    { productId: s.soda, unit: 'case', quantity: 3, unitPrice: '25500', discount: '1500' },
    { productId: s.water, unit: 'bottle', quantity: 5, unitPrice: '1234' },
    { productId: s.juice, unit: 'case', quantity: 2, unitPrice: '10001', discount: '3' },
  ],
  ...change,
});

const level = async (s: Shop, productId: string, locationId = s.warehouse) =>
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
const openBalance = async (s: Shop) =>
  (
    await world.db
      .selectFrom('customer_balances')
      .select('open_balance')
      .where('organization_id', '=', s.organizationId)
      .where('customer_id', '=', s.customer)
      .executeTakeFirst()
  )?.open_balance ?? null;
const invoiceCount = async (s: Shop) =>
  Number(
    (
      await world.db
        .selectFrom('invoices')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('organization_id', '=', s.organizationId)
        .executeTakeFirstOrThrow()
    ).n,
  );

async function refusal(t: ExecutionContext, promise: Promise<unknown>): Promise<ApiError> {
  return (await t.throwsAsync(promise, { instanceOf: ApiError })) as ApiError;
}

test('a 3-line invoice with a discount and 18 % tax adds up to the shilling (tax rounded per line); goods and the empties they carry leave the warehouse; the account is raised by its total', async (t) => {
  const s = await shop();
  const posted = await world.post((tx) => createInvoice(tx, s.operator, threeLines(s)));
  t.is(posted.number, 'INV-000001');
  const found = (await findInvoice(world.db, s.organizationId, posted.id))!;
  // 76 500 + 6 170 + 20 002; 1 500 + 3; 13 500 + 1 110.6 -> 1 111 + 3 599.82 -> 3 600 (the tax of the sum would be 18 210).
  t.like(found.invoice, {
    status: 'open',
    subtotal: '102672.0000',
    discount: '1503.0000',
    tax: '18211.0000',
    total: '119380.0000',
    balance: '119380.0000',
    currency: 'UGX',
  });
  t.is(found.invoice.due_date, '2026-12-08', "the issue date plus the customer's 14 days of terms");
  t.deepEqual(
    found.lines.map((l) => [l.line_number, l.kind, l.unit, l.quantity, l.amount, l.tax]),
    [
      [1, 'sale', 'case', 3, '75000.0000', '13500.0000'],
      [2, 'sale', 'bottle', 5, '6170.0000', '1111.0000'],
      [3, 'sale', 'case', 2, '19999.0000', '3600.0000'],
      [4, 'empties', 'piece', 3, '0.0000', '0.0000'],
      [5, 'empties', 'piece', 72, '0.0000', '0.0000'],
    ],
  );
  t.deepEqual(
    [
      await level(s, s.soda),
      await level(s, s.water),
      await level(s, s.juice),
      await level(s, s.crate),
      await level(s, s.bottle),
    ],
    [240 - 72, 24 - 5, 60 - 24, 20 - 3, 500 - 72],
  );
  t.deepEqual([await held(s, s.crate), await held(s, s.bottle)], [3, 72]);
  t.is(await openBalance(s), '119380.0000');
  const entries = await world.db
    .selectFrom('customer_account_entries')
    .select(['type', 'amount', 'invoice_id'])
    .where('organization_id', '=', s.organizationId)
    .execute();
  t.deepEqual(entries, [{ type: 'invoice', amount: '119380.0000', invoice_id: posted.id }]);
  const events = await world.db.selectFrom('events').select('type').where('record_id', '=', posted.id).execute();
  t.deepEqual(
    events.map((e) => e.type),
    ['invoice.created'],
  );
  t.deepEqual(await auditCustomerAccount(world.db, s.organizationId), []);
  t.deepEqual(await auditStock(world.db, s.organizationId), []);
});

test('a free line is priced 0 and still moves stock; a free line with a price, a discount above the line and a foreign currency are refused naming the field', async (t) => {
  const s = await shop();
  const posted = await world.post((tx) =>
    createInvoice(
      tx,
      s.operator,
      threeLines(s, { lines: [{ kind: 'free', productId: s.water, unit: 'bottle', quantity: 2, unitPrice: '0' }] }),
    ),
  );
  const free = (await findInvoice(world.db, s.organizationId, posted.id))!;
  t.like(free.invoice, { total: '0.0000', balance: '0.0000' });
  t.deepEqual(
    free.lines.map((l) => [l.kind, l.unit_price, l.tax_rate, l.amount, l.tax]),
    [['free', '0.0000', '0.00', '0.0000', '0.0000']],
    'no tax rate on a free issue',
  );
  t.is(await level(s, s.water), 22);
  const priced = await refusal(
    t,
    world.post((tx) =>
      createInvoice(
        tx,
        s.operator,
        threeLines(s, { lines: [{ kind: 'free', productId: s.water, unit: 'bottle', quantity: 1, unitPrice: '100' }] }),
      ),
    ),
  );
  t.deepEqual([priced.code, priced.errors?.map((e) => e.field)], ['invalid_field', ['/lines/0/unitPrice']]);
  const discount = await refusal(
    t,
    world.post((tx) =>
      createInvoice(
        tx,
        s.operator,
        threeLines(s, {
          lines: [{ productId: s.water, unit: 'bottle', quantity: 1, unitPrice: '100', discount: '101' }],
        }),
      ),
    ),
  );
  t.deepEqual([discount.code, discount.errors?.map((e) => e.field)], ['invalid_field', ['/lines/0/discount']]);
  const currency = await refusal(
    t,
    world.post((tx) => createInvoice(tx, s.operator, threeLines(s, { currency: 'USD' }))),
  );
  t.deepEqual([currency.code, currency.errors?.map((e) => e.field)], ['currency_not_supported', ['/currency']]);
});

test('a line taking more than the location holds is insufficient_stock naming that line, and nothing of the invoice is written', async (t) => {
  const s = await shop();
  const short = await refusal(
    t,
    world.post((tx) =>
      createInvoice(
        tx,
        s.operator,
        threeLines(s, {
          lines: [
            { productId: s.soda, unit: 'case', quantity: 1, unitPrice: '25500' },
            { productId: s.water, unit: 'bottle', quantity: 25, unitPrice: '1234' },
          ],
        }),
      ),
    ),
  );
  t.deepEqual([short.code, short.errors?.map((e) => e.field)], ['insufficient_stock', ['/lines/1/quantity']]);
  t.deepEqual(
    [
      await level(s, s.soda),
      await level(s, s.water),
      await held(s, s.crate),
      await invoiceCount(s),
      await openBalance(s),
    ],
    [240, 24, 0, 0, null],
  );
  const unknown = await refusal(
    t,
    world.post((tx) => createInvoice(tx, s.operator, threeLines(s, { customerId: 'cus_nope' }))),
  );
  t.deepEqual([unknown.code, unknown.errors?.map((e) => e.field)], ['customer_not_found', ['/customerId']]);
});

test('the credit rule: an invoice that would take the open balance past the credit limit is refused (422 credit_limit_exceeded) and writes nothing; up to the limit passes', async (t) => {
  const s = await shop({ creditLimit: '130000' });
  const first = await world.post((tx) => createInvoice(tx, s.operator, threeLines(s))); // 119 380
  const over = await refusal(
    t,
    world.post((tx) =>
      createInvoice(
        tx,
        s.operator,
        threeLines(s, { lines: [{ productId: s.water, unit: 'bottle', quantity: 10, unitPrice: '1000' }] }),
      ),
    ),
  ); // 11 800
  t.deepEqual([over.code, over.errors?.map((e) => e.field)], ['credit_limit_exceeded', ['/customerId']]);
  t.deepEqual([await level(s, s.water), await invoiceCount(s), await openBalance(s)], [19, 1, '119380.0000']);
  // 10 620 takes it to exactly 130 000: not past the limit.
  await world.post((tx) =>
    createInvoice(
      tx,
      s.operator,
      threeLines(s, { lines: [{ productId: s.water, unit: 'bottle', quantity: 9, unitPrice: '1000' }] }),
    ),
  );
  t.is(await openBalance(s), '130000.0000');
  // Voiding gives the room back.
  await world.post((tx) => voidInvoice(tx, s.operator, first.id, 'entered twice'));
  await world.post((tx) =>
    createInvoice(
      tx,
      s.operator,
      threeLines(s, { lines: [{ productId: s.water, unit: 'bottle', quantity: 10, unitPrice: '1000' }] }),
    ),
  );
  t.is(await openBalance(s), '22420.0000');
});

async function van(s: Shop) {
  return world.post(async (tx) => {
    const route = await routes.create(tx, s.operator, { routeCode: 'R01', name: 'Kampala Central' });
    const salesperson = await salespeople.create(tx, s.operator, {
      salesmanCode: 'SM01',
      name: 'Joseph Okello',
      routeId: route.id,
    });
    const vanLocation = await locations.create(tx, s.operator, { code: 'V_R01-G', name: 'Van R01', routeId: route.id });
    await routes.change(tx, s.operator, route.id, { salespersonId: salesperson.id, vanLocationId: vanLocation.id });
    return { van: vanLocation.id, salesperson: salesperson.id };
  });
}

test("a van sale needs the field sales modules (field_sales_disabled) and the salesperson's in-transit trip with that van (no_open_trip); it carries the trip and moves stock off the van", async (t) => {
  const off = await shop({ modules: ['delivery'] });
  const offVan = await van(off);
  const disabled = await refusal(
    t,
    world.post((tx) =>
      createInvoice(
        tx,
        off.operator,
        threeLines(off, {
          locationId: offVan.van,
          lines: [{ productId: off.water, unit: 'bottle', quantity: 1, unitPrice: '1000' }],
        }),
      ),
    ),
  );
  t.deepEqual([disabled.code, disabled.errors?.map((e) => e.field)], ['field_sales_disabled', ['/locationId']]);

  const s = await shop({ modules: ['delivery', 'field-sales'] });
  const v = await van(s);
  const sale = threeLines(s, {
    locationId: v.van,
    lines: [{ productId: s.soda, unit: 'case', quantity: 1, unitPrice: '25500' }],
  });
  const noTrip = await refusal(
    t,
    world.post((tx) => createInvoice(tx, s.operator, sale)),
  );
  t.deepEqual([noTrip.code, noTrip.errors?.map((e) => e.field)], ['no_open_trip', ['/locationId']]);
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
  const loading = await refusal(
    t,
    world.post((tx) => createInvoice(tx, s.operator, sale)),
  );
  t.is(loading.code, 'no_open_trip', 'a trip still loading is not out');
  await world.post((tx) => departTrip(tx, s.operator, trip.id));
  const posted = await world.post((tx) => createInvoice(tx, s.operator, sale));
  t.like((await findInvoice(world.db, s.organizationId, posted.id))!.invoice, {
    trip_id: trip.id,
    salesperson_id: v.salesperson,
    location_id: v.van,
    total: '30090.0000',
  });
  t.deepEqual(
    [
      await level(s, s.soda, v.van),
      await level(s, s.crate, v.van),
      await level(s, s.bottle, v.van),
      await held(s, s.crate),
    ],
    [24, 1, 24, 1],
  );
  const trips = await world.db
    .selectFrom('empties_movements')
    .select(['trip_id', 'type', 'direction'])
    .where('organization_id', '=', s.organizationId)
    .where('document_id', '=', posted.id)
    .execute();
  t.deepEqual(
    trips.map((m) => [m.trip_id, m.type, m.direction]),
    [
      [trip.id, 'issued_with_sale', 'out'],
      [trip.id, 'issued_with_sale', 'out'],
    ],
  );
});

test('voiding posts a reversing account entry and puts goods and empties back, editing nothing posted; a second void is 409 invalid_state', async (t) => {
  const s = await shop();
  const posted = await world.post((tx) => createInvoice(tx, s.operator, threeLines(s)));
  const voided = await world.post((tx) => voidInvoice(tx, s.operator, posted.id, 'wrong customer'));
  t.is(voided.number, 'INV-000001');
  const found = (await findInvoice(world.db, s.organizationId, posted.id))!;
  t.like(found.invoice, { status: 'void', void_reason: 'wrong customer', total: '119380.0000', balance: '0.0000' });
  t.truthy(found.invoice.voided_at);
  t.deepEqual(
    [
      await level(s, s.soda),
      await level(s, s.water),
      await level(s, s.juice),
      await level(s, s.crate),
      await level(s, s.bottle),
    ],
    [240, 24, 60, 20, 500],
  );
  t.deepEqual([await held(s, s.crate), await held(s, s.bottle), await openBalance(s)], [0, 0, '0.0000']);
  const entries = await world.db
    .selectFrom('customer_account_entries')
    .select(['type', 'amount'])
    .where('organization_id', '=', s.organizationId)
    .orderBy('type')
    .execute();
  t.deepEqual(entries, [
    { type: 'invoice', amount: '119380.0000' },
    { type: 'invoice_void', amount: '-119380.0000' },
  ]);
  const moves = await world.db
    .selectFrom('stock_movements')
    .select(['document_type'])
    .where('organization_id', '=', s.organizationId)
    .where('document_id', '=', posted.id)
    .execute();
  t.deepEqual(moves.map((m) => m.document_type).sort(), [
    ...Array(5).fill('invoice'),
    ...Array(5).fill('invoice_void'),
  ]);
  const again = await refusal(
    t,
    world.post((tx) => voidInvoice(tx, s.operator, posted.id, 'again')),
  );
  t.is(again.code, 'invalid_state');
  const events = await world.db
    .selectFrom('events')
    .select('type')
    .where('record_id', '=', posted.id)
    .orderBy('id')
    .execute();
  t.deepEqual(
    events.map((e) => e.type),
    ['invoice.created', 'invoice.voided'],
  );
  const missing = await refusal(
    t,
    world.post((tx) => voidInvoice(tx, s.operator, 'inv_nope', 'x')),
  );
  t.is(missing.code, 'not_found');
  t.deepEqual(await auditCustomerAccount(world.db, s.organizationId), []);
});

test('a void is refused (409 invalid_state) once anything is allocated or credited to the invoice, and nothing moves', async (t) => {
  const s = await shop();
  const posted = await world.post((tx) => createInvoice(tx, s.operator, threeLines(s)));
  // What a payment will post: an allocation entry lowering the invoice's and the customer's balance.
  await world.post(async (tx) => {
    await lockCustomerBalance(tx, s.organizationId, s.customer, 'UGX');
    await postAccountEntries(tx, s.organizationId, [
      {
        customerId: s.customer,
        type: 'payment_allocation',
        documentType: 'payment',
        documentId: 'pay_test',
        lineNumber: 1,
        invoiceId: posted.id,
        amount: '-10000',
        currency: 'UGX',
      },
    ]);
  });
  const refused = await refusal(
    t,
    world.post((tx) => voidInvoice(tx, s.operator, posted.id, 'too late')),
  );
  t.is(refused.code, 'invalid_state');
  t.regex(refused.message, /10000 UGX allocated or credited/);
  t.deepEqual([await level(s, s.soda), await openBalance(s)], [168, '109380.0000']);
  t.like((await findInvoice(world.db, s.organizationId, posted.id))!.invoice, {
    status: 'open',
    balance: '109380.0000',
  });
  t.deepEqual(await auditCustomerAccount(world.db, s.organizationId), []);
});

test('the checker recomputes invoice and customer balances from the account entries: a balance changed behind the ledger is a difference; the entries refuse any edit', async (t) => {
  const s = await shop();
  const posted = await world.post((tx) => createInvoice(tx, s.operator, threeLines(s)));
  world.tampered(s.organizationId);
  await world.db
    .updateTable('invoices')
    .set({ balance: '1' })
    .where('organization_id', '=', s.organizationId)
    .where('id', '=', posted.id)
    .execute();
  await world.db
    .updateTable('customer_balances')
    .set({ open_balance: '5' })
    .where('organization_id', '=', s.organizationId)
    .execute();
  const differences = await auditCustomerAccount(world.db, s.organizationId);
  t.deepEqual(
    differences.map((d) => [d.kind, d.expected, d.actual]),
    [
      ['invoice_balance', '119380.0000 from the account entries', '1.0000 kept'],
      ['customer_balance', '119380.0000 from the account entries', '5.0000 kept'],
    ],
  );
  await t.throwsAsync(
    world.db
      .updateTable('customer_account_entries')
      .set({ amount: '1' })
      .where('organization_id', '=', s.organizationId)
      .execute(),
    { message: /append-only/ },
  );
  await t.throwsAsync(
    world.db.deleteFrom('customer_account_entries').where('organization_id', '=', s.organizationId).execute(),
    { message: /append-only/ },
  );
});

test('closed books: an invoice dated in a closed period is 422 period_closed naming /issueDate, and so is the void of one; reopened, the void goes through', async (t) => {
  const s = await shop();
  const { closePeriod, reopenPeriod } = await import('../../server/domain/periods.js');
  const early = await world.post((tx) => createInvoice(tx, s.operator, threeLines(s, { issueDate: '2026-10-31' })));
  await world.post((tx) => closePeriod(tx, s.organizationId, '2026-10-31'));
  const dated = await refusal(
    t,
    world.post((tx) => createInvoice(tx, s.operator, threeLines(s, { issueDate: '2026-10-31' }))),
  );
  t.is(dated.code, 'period_closed');
  t.deepEqual(
    dated.errors?.map((e) => e.field),
    ['/issueDate'],
  );
  const voided = await refusal(
    t,
    world.post((tx) => voidInvoice(tx, s.operator, early.id, 'entered twice')),
  );
  t.is(voided.code, 'period_closed');
  t.is(await invoiceCount(s), 1, 'the refused invoice wrote nothing');
  t.truthy(
    await world.post((tx) => createInvoice(tx, s.operator, threeLines(s, { issueDate: '2026-11-01' }))),
    'the day after the closed period is open',
  );
  await world.post((tx) => reopenPeriod(tx, s.organizationId, null));
  await world.post((tx) => voidInvoice(tx, s.operator, early.id, 'entered twice'));
  t.is((await findInvoice(world.db, s.organizationId, early.id))!.invoice.status, 'void');
});

test('an invoice of an order moves it open -> invoiced with order.status_changed; the order is invoiced once, and only for its own customer', async (t) => {
  const s = await shop();
  const { createOrder } = await import('../../server/modules/orders/documents.js');
  const order = await world.post((tx) =>
    createOrder(tx, s.operator, {
      customerId: s.customer,
      orderDate: '2026-11-24',
      lines: [{ productId: s.soda, unit: 'case', quantity: 1, unitPrice: { amount: '25500', currency: 'UGX' } }],
    }),
  );
  const invoiced = await world.post((tx) => createInvoice(tx, s.operator, threeLines(s, { orderId: order.id })));
  const found = (await findInvoice(world.db, s.organizationId, invoiced.id))!;
  t.is(found.invoice.order_id, order.id);
  const row = await world.db
    .selectFrom('sales_orders')
    .select('status')
    .where('organization_id', '=', s.organizationId)
    .where('id', '=', order.id)
    .executeTakeFirstOrThrow();
  t.is(row.status, 'invoiced');
  const events = await world.db
    .selectFrom('events')
    .select('type')
    .where('organization_id', '=', s.organizationId)
    .where('record_id', '=', order.id)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  t.deepEqual(
    events.map((e) => e.type),
    ['order.created', 'order.status_changed'],
  );
  const again = await refusal(
    t,
    world.post((tx) => createInvoice(tx, s.operator, threeLines(s, { orderId: order.id }))),
  );
  t.is(again.code, 'business_rule');
  t.deepEqual(
    again.errors?.map((e) => e.field),
    ['/orderId'],
  );
  const other = await world.post((tx) =>
    customers.create(tx, s.operator, { outletCode: 'UG0000002', name: 'Other Shop', channel: 'retail' }),
  );
  const theirs = await world.post((tx) =>
    createOrder(tx, s.operator, {
      customerId: other.id,
      orderDate: '2026-11-24',
      lines: [{ productId: s.soda, unit: 'case', quantity: 1, unitPrice: { amount: '25500', currency: 'UGX' } }],
    }),
  );
  const wrongCustomer = await refusal(
    t,
    world.post((tx) => createInvoice(tx, s.operator, threeLines(s, { orderId: theirs.id }))),
  );
  t.deepEqual(
    wrongCustomer.errors?.map((e) => e.field),
    ['/orderId'],
  );
  t.is(await invoiceCount(s), 1, 'the refused invoices wrote nothing');
});

test('the credit rule holds under concurrency: 10 invoices racing against one credit limit, exactly as many as fit are posted', async (t) => {
  const s = await shop({ creditLimit: '500000' });
  // Ten products, each in stock: the invoices share no stock row, so only the customer's balance row orders them.
  const products10 = await world.post(async (tx) => {
    const made = [];
    for (let i = 0; i < 10; i += 1)
      made.push(
        (
          await products.create(tx, s.operator, {
            productCode: String(400001 + i),
            name: `Drink ${i}`,
            packSize: 12,
            sellingUnits: ['bottle'],
            taxRate: 18,
          })
        ).id,
      );
    await postStockAdjustment(tx, s.operator, {
      reasonCode: 'OPENING',
      lines: made.map((productId) => ({
        productId,
        locationId: s.warehouse,
        unit: 'bottle' as const,
        quantity: 5,
        unitCost: '50000',
      })),
    });
    return made;
  });
  // One bottle at 100 000 + 18 % = 118 000 each: 4 fit under 500 000 (472 000), a 5th would not.
  const one = (productId: string) =>
    world.post((tx) =>
      createInvoice(tx, s.operator, {
        customerId: s.customer,
        locationId: s.warehouse,
        issueDate: '2026-11-24',
        currency: 'UGX',
        lines: [{ productId, unit: 'bottle', quantity: 1, unitPrice: '100000' }],
      }),
    );
  const outcomes = await Promise.allSettled(products10.map(one));
  const posted = outcomes.filter((o) => o.status === 'fulfilled').length;
  const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
  t.is(posted, 4);
  t.is(refused.length, 6);
  t.true(
    refused.every((o) => o.reason instanceof ApiError && o.reason.code === 'credit_limit_exceeded'),
    refused.map((o) => String(o.reason)).join('; '),
  );
  t.is(String(await openBalance(s)), '472000.0000');
  t.is(await invoiceCount(s), 4);
});
