// Collections (payments), proved at the service level (posting functions with an operator, no HTTP): one receipt per
// allocation and one for the rest, the balances they move to the shilling, a bounced cheque reversed, a void refused
// while something is allocated, every refusal naming its field and writing nothing, and the invoice's row lock
// holding under concurrency. The harness runs the ledger checkers (receipts' entries included) over every
// organisation when the file closes.
import test, { type ExecutionContext } from 'ava';
import { ApiError } from '../../server/platform/errors/api-error.js';
import { customers } from '../../server/modules/customers/service.js';
import { locations } from '../../server/modules/locations/service.js';
import { products } from '../../server/modules/products/service.js';
import { routes } from '../../server/modules/routes/service.js';
import { salespeople } from '../../server/modules/salespeople/service.js';
import { postStockAdjustment } from '../../server/modules/stock/documents.js';
import { departTrip, loadTrip, openTrip } from '../../server/modules/trips/documents.js';
import { createInvoice, voidInvoice } from '../../server/modules/invoices/documents.js';
import { auditCustomerAccount } from '../../server/modules/customer-account/audit.js';
import { recordPayment, reversePayment, type RecordPaymentCommand } from '../../server/modules/payments/documents.js';
import { findPayment } from '../../server/modules/payments/repository.js';
import { closePeriod, reopenPeriod } from '../../server/domain/periods.js';
import type { OperatorActor } from '../../server/platform/access/actor.js';
import type { Module } from '../../server/platform/access/organizations.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('payments');
});
test.after.always(async () => {
  await world?.close();
});

interface Shop {
  organizationId: string;
  operator: OperatorActor;
  juice: string;
  warehouse: string;
  customer: string;
  other: string;
}

/** An organisation with a warehouse holding 100 cases of juice (no tax, no empties) and two customers without a credit limit. */
async function shop(modules: Module[] = []): Promise<Shop> {
  const { organization, operator } = await world.organization({ modules });
  return world.post(async (tx) => {
    const juice = await products.create(tx, operator, {
      productCode: '300003',
      name: 'Juice 1l',
      packSize: 12,
      sellingUnits: ['case'],
      taxRate: 0,
    });
    const warehouse = await locations.create(tx, operator, { code: 'M01', name: 'Main' });
    const customer = await customers.create(tx, operator, {
      outletCode: 'UG0000001',
      name: 'Mama Shop',
      channel: 'retail',
    });
    const other = await customers.create(tx, operator, {
      outletCode: 'UG0000002',
      name: 'Baba Kiosk',
      channel: 'retail',
    });
    await postStockAdjustment(tx, operator, {
      reasonCode: 'OPENING',
      lines: [{ productId: juice.id, locationId: warehouse.id, unit: 'case', quantity: 100, unitCost: '8000' }],
    });
    return {
      organizationId: organization.id,
      operator,
      juice: juice.id,
      warehouse: warehouse.id,
      customer: customer.id,
      other: other.id,
    };
  });
}

/** An invoice of `cases` cases of juice at 10 000 each (no tax): its total is cases x 10 000. */
const invoice = (s: Shop, cases: number, customerId = s.customer) =>
  world.post((tx) =>
    createInvoice(tx, s.operator, {
      customerId,
      locationId: s.warehouse,
      issueDate: '2026-11-24',
      currency: 'UGX',
      lines: [{ productId: s.juice, unit: 'case', quantity: cases, unitPrice: '10000' }],
    }),
  );
const ugx = (amount: string) => ({ amount, currency: 'UGX' });
const pay = (s: Shop, change: Partial<RecordPaymentCommand>) =>
  world.post((tx) =>
    recordPayment(tx, s.operator, {
      customerId: s.customer,
      method: 'cash',
      amount: ugx('0'),
      paymentDate: '2026-11-25',
      ...change,
    }),
  );

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
const eventsOf = async (s: Shop, recordIds: string[]) =>
  (
    await world.db
      .selectFrom('events')
      .select(['type', 'record_id'])
      .where('organization_id', '=', s.organizationId)
      .where('record_id', 'in', recordIds)
      .execute()
  )
    .map((e) => `${e.type} ${e.record_id}`)
    .sort();
/** Rows of everything a collection writes, for "nothing was written". */
const footprint = async (s: Shop) => {
  const count = async (table: 'payments' | 'customer_account_entries' | 'events' | 'document_sequences') =>
    Number(
      (
        await world.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .where('organization_id', '=', s.organizationId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const balances = await world.db
    .selectFrom('invoices')
    .select(['id', 'balance', 'status', 'updated_at'])
    .where('organization_id', '=', s.organizationId)
    .orderBy('id')
    .execute();
  return {
    payments: await count('payments'),
    entries: await count('customer_account_entries'),
    events: await count('events'),
    sequences: await count('document_sequences'),
    balances,
    open: await openBalance(s),
  };
};

async function refusal(t: ExecutionContext, promise: Promise<unknown>): Promise<ApiError> {
  return (await t.throwsAsync(promise, { instanceOf: ApiError })) as ApiError;
}

test('a collection split over two invoices with a rest unallocated: 3 receipts in one group, one invoice paid, one open with its balance, the rest a credit on the account', async (t) => {
  const s = await shop();
  const first = await invoice(s, 10); // 100 000
  const second = await invoice(s, 8); // 80 000
  t.is(await openBalance(s), '180000.0000');
  const recorded = await pay(s, {
    method: 'mobile_money',
    reference: 'MP-0001',
    amount: ugx('200000'),
    allocations: [
      { invoiceId: first.id, amount: ugx('100000') },
      { invoiceId: second.id, amount: ugx('50000') },
    ],
    unallocated: ugx('50000'),
  });
  t.is(recorded.ids.length, 3);
  const [forFirst, forSecond, forRest] = recorded.ids as [string, string, string];
  const receipts = await Promise.all(
    recorded.ids.map(async (id) => (await findPayment(world.db, s.organizationId, id))!),
  );
  t.deepEqual(
    receipts.map((r) => [
      r.number,
      r.invoice_id,
      r.amount,
      r.status,
      r.receipt_group_id,
      r.method,
      r.reference,
      r.payment_date,
    ]),
    [
      [
        'RCT-000001',
        first.id,
        '100000.0000',
        'posted',
        recorded.receiptGroupId,
        'mobile_money',
        'MP-0001',
        '2026-11-25',
      ],
      [
        'RCT-000002',
        second.id,
        '50000.0000',
        'posted',
        recorded.receiptGroupId,
        'mobile_money',
        'MP-0001',
        '2026-11-25',
      ],
      ['RCT-000003', null, '50000.0000', 'posted', recorded.receiptGroupId, 'mobile_money', 'MP-0001', '2026-11-25'],
    ],
  );
  t.deepEqual(await invoiceRow(s, first.id), { status: 'paid', balance: '0.0000' });
  t.deepEqual(await invoiceRow(s, second.id), { status: 'open', balance: '30000.0000' });
  // 180 000 owed - 150 000 allocated - 50 000 on the account: the customer is 20 000 in credit.
  t.is(await openBalance(s), '-20000.0000');
  const entries = await world.db
    .selectFrom('customer_account_entries')
    .select(['type', 'amount', 'invoice_id', 'document_id'])
    .where('organization_id', '=', s.organizationId)
    .where('document_type', '=', 'payment')
    .execute();
  // Ids made within one millisecond are not ordered among themselves: compare as sets.
  const byDocument = (a: { document_id: string }, b: { document_id: string }) =>
    a.document_id.localeCompare(b.document_id);
  t.deepEqual(
    entries.sort(byDocument),
    [
      { type: 'payment_allocation', amount: '-100000.0000', invoice_id: first.id, document_id: forFirst },
      { type: 'payment_allocation', amount: '-50000.0000', invoice_id: second.id, document_id: forSecond },
      { type: 'payment_unallocated', amount: '-50000.0000', invoice_id: null, document_id: forRest },
    ].sort(byDocument),
  );
  t.deepEqual(
    await eventsOf(s, [...recorded.ids, first.id, second.id]),
    [
      `invoice.created ${first.id}`,
      `invoice.created ${second.id}`,
      `invoice.updated ${first.id}`,
      `invoice.updated ${second.id}`,
      ...recorded.ids.map((id) => `payment.created ${id}`),
    ].sort(),
  );
  t.deepEqual(await auditCustomerAccount(world.db, s.organizationId), []);
});

test('a bounced cheque: reversing its receipt (with a reason) reopens the paid invoice with its balance, owes the amount again and sends payment.reversed and invoice.updated; only that receipt of its group is reversed', async (t) => {
  const s = await shop();
  const sold = await invoice(s, 5); // 50 000
  const cheque = await pay(s, {
    method: 'cheque',
    reference: '004512',
    amount: ugx('60000'),
    allocations: [{ invoiceId: sold.id, amount: ugx('50000') }],
    unallocated: ugx('10000'),
  });
  t.deepEqual(await invoiceRow(s, sold.id), { status: 'paid', balance: '0.0000' });
  t.is(await openBalance(s), '-10000.0000');
  const [allocated, rest] = cheque.ids as [string, string];

  await world.post((tx) => reversePayment(tx, s.operator, allocated, 'Cheque 004512 returned unpaid'));
  const reversed = (await findPayment(world.db, s.organizationId, allocated))!;
  t.like(reversed, { status: 'reversed', reversal_reason: 'Cheque 004512 returned unpaid' });
  t.truthy(reversed.reversed_at);
  t.deepEqual(await invoiceRow(s, sold.id), { status: 'open', balance: '50000.0000' });
  t.is((await findPayment(world.db, s.organizationId, rest))!.status, 'posted', 'the rest of the group stays posted');
  t.is(await openBalance(s), '40000.0000');
  // The invoice's events: created, updated when paid, updated when reopened; the receipt's: created, reversed.
  t.deepEqual(
    await eventsOf(s, [allocated, sold.id]),
    [
      `invoice.created ${sold.id}`,
      `invoice.updated ${sold.id}`,
      `invoice.updated ${sold.id}`,
      `payment.created ${allocated}`,
      `payment.reversed ${allocated}`,
    ].sort(),
  );

  // The rest reversed too: the credit leaves the account, the customer owes the whole invoice.
  await world.post((tx) => reversePayment(tx, s.operator, rest, 'Cheque 004512 returned unpaid'));
  t.is(await openBalance(s), '50000.0000');
  const entries = await world.db
    .selectFrom('customer_account_entries')
    .select(['type', 'amount'])
    .where('organization_id', '=', s.organizationId)
    .where('document_type', '=', 'payment')
    .execute();
  t.deepEqual(
    entries.map((e) => `${e.type} ${e.amount}`).sort(),
    [
      'payment_allocation -50000.0000',
      'payment_unallocated -10000.0000',
      'payment_allocation_reversal 50000.0000',
      'payment_unallocated_reversal 10000.0000',
    ].sort(),
    'the entries as posted stay; each reversal is a new entry',
  );

  const again = await refusal(
    t,
    world.post((tx) => reversePayment(tx, s.operator, allocated, 'twice')),
  );
  t.is(again.code, 'invalid_state');
  t.regex(again.detail, /is reversed/);
  const blank = await refusal(
    t,
    world.post((tx) => reversePayment(tx, s.operator, rest, ' ')),
  );
  t.deepEqual([blank.code, blank.errors?.map((e) => e.field)], ['invalid_field', ['/reason']]);
  const missing = await refusal(
    t,
    world.post((tx) => reversePayment(tx, s.operator, 'pmt_nope', 'x')),
  );
  t.is(missing.code, 'not_found');
  t.deepEqual(await auditCustomerAccount(world.db, s.organizationId), []);
});

test('a void is refused (409 invalid_state) while a payment is allocated to the invoice, and allowed once that payment is reversed', async (t) => {
  const s = await shop();
  const sold = await invoice(s, 3); // 30 000
  const part = await pay(s, { amount: ugx('10000'), allocations: [{ invoiceId: sold.id, amount: ugx('10000') }] });
  const refused = await refusal(
    t,
    world.post((tx) => voidInvoice(tx, s.operator, sold.id, 'wrong customer')),
  );
  t.is(refused.code, 'invalid_state');
  t.regex(refused.detail, /10000 UGX allocated or credited/);
  t.deepEqual(await invoiceRow(s, sold.id), { status: 'open', balance: '20000.0000' });
  await world.post((tx) => reversePayment(tx, s.operator, part.ids[0]!, 'entered against the wrong invoice'));
  await world.post((tx) => voidInvoice(tx, s.operator, sold.id, 'wrong customer'));
  t.deepEqual(await invoiceRow(s, sold.id), { status: 'void', balance: '0.0000' });
  t.is(await openBalance(s), '0.0000');
  // A void invoice takes no payment: nothing is left to pay.
  const after = await refusal(
    t,
    pay(s, { amount: ugx('1000'), allocations: [{ invoiceId: sold.id, amount: ugx('1000') }] }),
  );
  t.deepEqual([after.code, after.errors?.map((e) => e.field)], ['over_allocation', ['/allocations/0/amount']]);
});

test('every refusal names its field and writes nothing: the sum, over-allocation, currencies, unknown and foreign invoices and customer, a duplicate invoice, the trip, the reference, a closed period', async (t) => {
  const s = await shop();
  const stranger = await shop();
  const sold = await invoice(s, 2); // 20 000
  const theirs = await invoice(s, 1, s.other); // 10 000, another customer's
  const foreign = await invoice(stranger, 1); // another organisation's
  const paid = await invoice(s, 1);
  await pay(s, { amount: ugx('10000'), allocations: [{ invoiceId: paid.id, amount: ugx('10000') }] });
  const before = await footprint(s);
  const one = (amount: string, invoiceId = sold.id) => ({ invoiceId, amount: ugx(amount) });
  const cases: [string, Partial<RecordPaymentCommand>, string, string[]][] = [
    [
      'allocations short of the amount',
      { amount: ugx('15000'), allocations: [one('10000')] },
      'unallocated_amount',
      ['/unallocated'],
    ],
    [
      'allocations and rest above the amount',
      { amount: ugx('15000'), allocations: [one('10000')], unallocated: ugx('6000') },
      'unallocated_amount',
      ['/unallocated'],
    ],
    [
      'more than the balance',
      { amount: ugx('20001'), allocations: [one('20001')] },
      'over_allocation',
      ['/allocations/0/amount'],
    ],
    [
      'a paid invoice',
      { amount: ugx('1'), allocations: [one('1', paid.id)] },
      'over_allocation',
      ['/allocations/0/amount'],
    ],
    [
      'an allocation in another currency',
      { amount: ugx('100'), allocations: [{ invoiceId: sold.id, amount: { amount: '100', currency: 'USD' } }] },
      'currency_mismatch',
      ['/allocations/0/amount/currency'],
    ],
    [
      'a rest in another currency',
      { amount: ugx('100'), unallocated: { amount: '100', currency: 'KES' } },
      'currency_mismatch',
      ['/unallocated/currency'],
    ],
    [
      'a currency not enabled',
      { amount: { amount: '100', currency: 'USD' }, unallocated: { amount: '100', currency: 'USD' } },
      'currency_not_supported',
      ['/amount/currency'],
    ],
    [
      'an unknown invoice',
      { amount: ugx('100'), allocations: [one('100', 'inv_nope')] },
      'invoice_not_found',
      ['/allocations/0/invoiceId'],
    ],
    [
      "another customer's invoice",
      { amount: ugx('200'), allocations: [one('100'), one('100', theirs.id)] },
      'invoice_not_found',
      ['/allocations/1/invoiceId'],
    ],
    [
      "another organisation's invoice",
      { amount: ugx('100'), allocations: [one('100', foreign.id)] },
      'invoice_not_found',
      ['/allocations/0/invoiceId'],
    ],
    [
      'the same invoice twice',
      { amount: ugx('200'), allocations: [one('100'), one('100')] },
      'business_rule',
      ['/allocations/1/invoiceId'],
    ],
    [
      'an unknown customer',
      { customerId: 'cus_nope', amount: ugx('100'), unallocated: ugx('100') },
      'customer_not_found',
      ['/customerId'],
    ],
    [
      'an unknown trip',
      { tripId: 'trp_nope', amount: ugx('100'), unallocated: ugx('100') },
      'no_open_trip',
      ['/tripId'],
    ],
    [
      'a cheque without its number',
      { method: 'cheque', amount: ugx('100'), unallocated: ugx('100') },
      'required_field',
      ['/reference'],
    ],
    ['an amount of 0', { amount: ugx('0') }, 'invalid_field', ['/amount/amount']],
    [
      'an allocation of 0',
      { amount: ugx('100'), allocations: [one('0')], unallocated: ugx('100') },
      'invalid_field',
      ['/allocations/0/amount/amount'],
    ],
    [
      'shillings have no cents',
      { amount: ugx('100.5'), unallocated: ugx('100.5') },
      'invalid_field',
      ['/amount/amount'],
    ],
  ];
  for (const [what, change, code, fields] of cases) {
    const error = await refusal(t, pay(s, change));
    t.deepEqual([error.code, error.errors?.map((e) => e.field)], [code, fields], what);
  }
  // An invoice in another currency than the payment's: only the base currency is enabled today, so such an invoice
  // can come only from a later multi-currency change; its currency is set by hand to stand for one.
  await world.db
    .updateTable('invoices')
    .set({ currency: 'USD' })
    .where('organization_id', '=', s.organizationId)
    .where('id', '=', theirs.id)
    .execute();
  const mismatch = await refusal(
    t,
    pay(s, { customerId: s.other, amount: ugx('100'), allocations: [one('100', theirs.id)] }),
  );
  t.deepEqual(
    [mismatch.code, mismatch.errors?.map((e) => e.field)],
    ['currency_mismatch', ['/allocations/0/invoiceId']],
  );
  await world.db
    .updateTable('invoices')
    .set({ currency: 'UGX' })
    .where('organization_id', '=', s.organizationId)
    .where('id', '=', theirs.id)
    .execute();

  await world.post((tx) => closePeriod(tx, s.organizationId, '2026-11-25'));
  const closed = await refusal(t, pay(s, { amount: ugx('100'), allocations: [one('100')] }));
  t.deepEqual([closed.code, closed.errors?.map((e) => e.field)], ['period_closed', ['/paymentDate']]);
  const paidReceipt = (
    await world.db
      .selectFrom('payments')
      .select('id')
      .where('organization_id', '=', s.organizationId)
      .executeTakeFirstOrThrow()
  ).id;
  const closedReverse = await refusal(
    t,
    world.post((tx) => reversePayment(tx, s.operator, paidReceipt, 'bounced')),
  );
  t.deepEqual([closedReverse.code, closedReverse.errors?.map((e) => e.field)], ['period_closed', ['/paymentDate']]);
  await world.post((tx) => reopenPeriod(tx, s.organizationId, null));

  t.deepEqual(await footprint(s), before, 'nothing of any refused collection was written');
  t.truthy(
    await pay(s, { amount: ugx('100'), allocations: [one('100')] }),
    'the books reopened, the same collection goes through',
  );
});

test('a collection on a trip must name an in-transit trip of the organisation; it carries the trip and its salesperson', async (t) => {
  const s = await shop(['delivery', 'field-sales']);
  const trip = await world.post(async (tx) => {
    const route = await routes.create(tx, s.operator, { routeCode: 'R01', name: 'Kampala Central' });
    const salesperson = await salespeople.create(tx, s.operator, {
      salesmanCode: 'SM01',
      name: 'Joseph Okello',
      routeId: route.id,
    });
    const van = await locations.create(tx, s.operator, { code: 'V_R01-G', name: 'Van R01', routeId: route.id });
    await routes.change(tx, s.operator, route.id, { salespersonId: salesperson.id, vanLocationId: van.id });
    const opened = await openTrip(tx, s.operator, {
      vanLocationId: van.id,
      warehouseLocationId: s.warehouse,
      businessDate: '2026-11-25',
    });
    await loadTrip(tx, s.operator, { tripId: opened.id, lines: [{ productId: s.juice, unit: 'case', quantity: 1 }] });
    return { id: opened.id, salesperson: salesperson.id, van: van.id };
  });
  const collection = { tripId: trip.id, amount: ugx('5000'), unallocated: ugx('5000') };
  const loading = await refusal(t, pay(s, collection));
  t.deepEqual([loading.code, loading.errors?.map((e) => e.field)], ['no_open_trip', ['/tripId']]);
  t.regex(loading.detail, /is loading/);
  await world.post((tx) => departTrip(tx, s.operator, trip.id));
  const recorded = await pay(s, collection);
  t.like(await findPayment(world.db, s.organizationId, recorded.ids[0]!), {
    trip_id: trip.id,
    salesperson_id: trip.salesperson,
    invoice_id: null,
    amount: '5000.0000',
  });

  // A van cash sale: the invoice's payment block records its receipt on the van sale's trip, in the invoice's transaction.
  const sale = await world.post((tx) =>
    createInvoice(tx, s.operator, {
      customerId: s.customer,
      locationId: trip.van,
      issueDate: '2026-11-25',
      currency: 'UGX',
      lines: [{ productId: s.juice, unit: 'case', quantity: 1, unitPrice: '12000' }],
      payment: { method: 'cash' },
    }),
  );
  t.deepEqual(await invoiceRow(s, sale.id), { status: 'paid', balance: '0.0000' });
  const receipt = await world.db
    .selectFrom('payments')
    .select(['trip_id', 'salesperson_id', 'amount', 'method', 'payment_date'])
    .where('organization_id', '=', s.organizationId)
    .where('invoice_id', '=', sale.id)
    .execute();
  t.like(receipt, [{ trip_id: trip.id, salesperson_id: trip.salesperson, amount: '12000.0000', method: 'cash' }]);
});

test('an invoice with a payment block is paid in full at once: created paid with its receipt for the total, and the credit rule does not apply; a cheque sale needs its number', async (t) => {
  const s = await shop();
  const limited = await world.post((tx) =>
    customers.create(tx, s.operator, {
      outletCode: 'UG0000003',
      name: 'Small Kiosk',
      channel: 'retail',
      creditLimit: { amount: '10000', currency: 'UGX' },
    }),
  );
  const twoCases = (payment?: { method: 'cash' | 'cheque'; reference?: string }) =>
    world.post((tx) =>
      createInvoice(tx, s.operator, {
        customerId: limited.id,
        locationId: s.warehouse,
        issueDate: '2026-11-24',
        currency: 'UGX',
        lines: [{ productId: s.juice, unit: 'case', quantity: 2, unitPrice: '10000' }],
        ...(payment ? { payment } : {}),
      }),
    );
  const onCredit = await refusal(t, twoCases());
  t.is(onCredit.code, 'credit_limit_exceeded', '20 000 on credit passes the limit of 10 000');
  const before = await footprint(s);
  const noNumber = await refusal(t, twoCases({ method: 'cheque' }));
  t.deepEqual([noNumber.code, noNumber.errors?.map((e) => e.field)], ['required_field', ['/payment/reference']]);
  t.deepEqual(await footprint(s), before, 'nothing of the refused sale was written');

  const cash = await twoCases({ method: 'cash' });
  t.deepEqual(await invoiceRow(s, cash.id), { status: 'paid', balance: '0.0000' });
  const receipts = await world.db
    .selectFrom('payments')
    .select(['id', 'number', 'amount', 'status', 'payment_date', 'customer_id'])
    .select((eb) => eb.fn<string>('to_char', [eb.ref('payment_date'), eb.val('YYYY-MM-DD')]).as('day'))
    .where('organization_id', '=', s.organizationId)
    .where('invoice_id', '=', cash.id)
    .execute();
  t.like(receipts, [
    { number: 'RCT-000001', amount: '20000.0000', status: 'posted', customer_id: limited.id, day: '2026-11-24' },
  ]);
  t.is(await openBalance(s, limited.id), '0.0000', 'raised by the total and lowered by the receipt');
  t.deepEqual(
    await eventsOf(s, [cash.id, receipts[0]!.id]),
    [`invoice.created ${cash.id}`, `invoice.updated ${cash.id}`, `payment.created ${receipts[0]!.id}`].sort(),
  );
  // A sale paid at once is still voided only after its receipt is reversed.
  const refused = await refusal(
    t,
    world.post((tx) => voidInvoice(tx, s.operator, cash.id, 'entered twice')),
  );
  t.is(refused.code, 'invalid_state');
});

test('20 collections racing for one invoice never pay it beyond its total: exactly those that fit are recorded, the rest are over_allocation, and the checker agrees', async (t) => {
  const s = await shop();
  const sold = await invoice(s, 10); // 100 000
  // 20 x 7 000 = 140 000 for a balance of 100 000: 14 fit (98 000), 6 do not.
  const outcomes = await Promise.allSettled(
    Array.from({ length: 20 }, () =>
      pay(s, { amount: ugx('7000'), allocations: [{ invoiceId: sold.id, amount: ugx('7000') }] }),
    ),
  );
  const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
  t.true(
    refused.every((o) => o.reason instanceof ApiError && o.reason.code === 'over_allocation'),
    refused.map((o) => String(o.reason)).join('; '),
  );
  t.is(outcomes.length - refused.length, 14);
  t.is(refused.length, 6);
  const accepted = await world.db
    .selectFrom('payments')
    .select((eb) => eb.fn.sum<string>('amount').as('sum'))
    .where('organization_id', '=', s.organizationId)
    .where('invoice_id', '=', sold.id)
    .executeTakeFirstOrThrow();
  t.is(accepted.sum, '98000.0000');
  t.deepEqual(await invoiceRow(s, sold.id), { status: 'open', balance: '2000.0000' });
  t.deepEqual(await auditCustomerAccount(world.db, s.organizationId), []);
});

test('a void racing a payment on one invoice: exactly one wins, the other is a clean 409 or 422 (no server error, no deadlock), five times over', async (t) => {
  const s = await shop();
  for (let round = 0; round < 5; round += 1) {
    const sold = await invoice(s, 2); // 20 000
    const [voided, paid] = await Promise.allSettled([
      world.post((tx) => voidInvoice(tx, s.operator, sold.id, 'entered twice')),
      pay(s, { amount: ugx('5000'), allocations: [{ invoiceId: sold.id, amount: ugx('5000') }] }),
    ]);
    const won = [voided, paid].filter((o) => o.status === 'fulfilled').length;
    t.is(won, 1, `round ${round}`);
    const lost = [voided, paid].find((o): o is PromiseRejectedResult => o.status === 'rejected')!;
    t.true(
      lost.reason instanceof ApiError && [409, 422].includes((lost.reason as ApiError).status),
      `round ${round}: ${String(lost.reason)}`,
    );
    t.deepEqual(
      await invoiceRow(s, sold.id),
      voided.status === 'fulfilled' ? { status: 'void', balance: '0.0000' } : { status: 'open', balance: '15000.0000' },
    );
  }
  t.deepEqual(await auditCustomerAccount(world.db, s.organizationId), []);
});

test('the checker finds a receipt whose entries do not match its amount', async (t) => {
  const s = await shop();
  const recorded = await pay(s, { amount: ugx('3000'), unallocated: ugx('3000') });
  world.tampered(s.organizationId);
  // Behind the ledger's back: the receipt's amount changed (payments is a document, not an append-only ledger).
  await world.db
    .updateTable('payments')
    .set({ amount: '3500' })
    .where('organization_id', '=', s.organizationId)
    .where('id', '=', recorded.ids[0]!)
    .execute();
  const differences = await auditCustomerAccount(world.db, s.organizationId);
  t.deepEqual(
    differences.map((d) => [d.kind, d.expected, d.actual]),
    [['payment_entries', '-3500.0000 for its status', '-3000.0000 in the account entries']],
  );
});
