// Trip settlements, proved at the service level (posting functions with an operator, no HTTP): the worked sheet of a
// trip loaded, sold from, voided on, returned with a count and settled with expenses, to the shilling; the sheet
// counting the receipts, credit notes and returns that name the trip, each posted by its own module; the refusals (a trip not returned, a second settle, fuel, a
// purchase without its receipt, negative or malformed amounts), each writing nothing; a trip closing only with its
// settlement; two settles racing; settlement.closed as a webhook object, and as the truncated record when too big.
// The harness runs the ledger checkers over every organisation when the file closes.
import test, { type ExecutionContext } from 'ava';
import { jobActor, type OperatorActor } from '../../server/platform/access/actor.js';
import { webhookObjects, webhookEventTypes } from '../../server/composition/modules.js';
import { customers } from '../../server/modules/customers/service.js';
import { createInvoice, voidInvoice } from '../../server/modules/invoices/documents.js';
import { cancelCreditNote, issueCreditNote } from '../../server/modules/credit-notes/documents.js';
import { recordPayment, reversePayment } from '../../server/modules/payments/documents.js';
import { processReturn } from '../../server/modules/returns/documents.js';
import { locations } from '../../server/modules/locations/service.js';
import { products } from '../../server/modules/products/service.js';
import { routes } from '../../server/modules/routes/service.js';
import { salespeople } from '../../server/modules/salespeople/service.js';
import { settlementObject } from '../../server/modules/settlements/manifest.js';
import {
  closeTripWithNothingToSettle,
  settleTrip,
  type SettleTripCommand,
} from '../../server/modules/settlements/documents.js';
import { getTripSettlement } from '../../server/modules/settlements/service.js';
import { postStockAdjustment } from '../../server/modules/stock/documents.js';
import { closeTrip, departTrip, loadTrip, openTrip, returnTrip } from '../../server/modules/trips/documents.js';
import { ApiError } from '../../server/platform/errors/api-error.js';
import { closePeriod, reopenPeriod } from '../../server/domain/periods.js';
import { webhookObject } from '../../server/platform/webhooks/objects.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';
import { pino } from 'pino';
import { setConnection, SIMULATOR_BASE_URL } from '../../server/connectors/connections.js';
import { startSimulatorServer } from '../../server/connectors/simulators/server.js';
import { quickBooksEntity } from '../../server/connectors/simulators/quickbooks/router.js';
import { runPosting } from '../../server/modules/postings/run.js';
import { setAccounts } from '../../server/platform/access/accounts.js';
import type { SendMany } from '../../server/platform/jobs/jobs.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('settlements');
});
test.after.always(async () => {
  await world?.close();
});

interface Fleet {
  organizationId: string;
  operator: OperatorActor;
  soda: string;
  water: string;
  warehouse: string;
  van: string;
  mama: string;
  duka: string;
}

/**
 * An organisation with delivery and field sales: soda (24 a case) and water (12 a case), both taxed 18 %, stocked in
 * M01; route R01 with its salesperson and van; two customers without a credit limit.
 */
async function fleet(): Promise<Fleet> {
  const { organization, operator } = await world.organization({ modules: ['delivery', 'field-sales'] });
  return world.post(async (tx) => {
    const soda = await products.create(tx, operator, {
      productCode: '300001',
      name: 'Soda 300ml',
      packSize: 24,
      sellingUnits: ['case', 'bottle'],
      taxRate: 18,
    });
    const water = await products.create(tx, operator, {
      productCode: '300002',
      name: 'Water 500ml',
      packSize: 12,
      sellingUnits: ['case', 'bottle'],
      taxRate: 18,
    });
    const route = await routes.create(tx, operator, { routeCode: 'R01', name: 'Kampala Central' });
    const salesperson = await salespeople.create(tx, operator, {
      salesmanCode: 'SM01',
      name: 'Joseph Okello',
      routeId: route.id,
    });
    const warehouse = await locations.create(tx, operator, { code: 'M01', name: 'Main' });
    const van = await locations.create(tx, operator, { code: 'V_R01-G', name: 'Van R01', routeId: route.id });
    await routes.change(tx, operator, route.id, { salespersonId: salesperson.id, vanLocationId: van.id });
    const mama = await customers.create(tx, operator, {
      outletCode: 'UG0000001',
      name: 'Mama Shop',
      channel: 'retail',
      paymentTermsDays: 14,
    });
    const duka = await customers.create(tx, operator, {
      outletCode: 'UG0000002',
      name: 'Duka Bora',
      channel: 'retail',
      paymentTermsDays: 14,
    });
    await postStockAdjustment(tx, operator, {
      reasonCode: 'OPENING',
      lines: [
        { productId: soda.id, locationId: warehouse.id, unit: 'case', quantity: 20, unitCost: '20000' },
        { productId: water.id, locationId: warehouse.id, unit: 'case', quantity: 10, unitCost: '6000' },
      ],
    });
    return {
      organizationId: organization.id,
      operator,
      soda: soda.id,
      water: water.id,
      warehouse: warehouse.id,
      van: van.id,
      mama: mama.id,
      duka: duka.id,
    };
  });
}

/** A trip loaded with 5 cases of soda and 2 of water, out on the road. */
async function tripOut(f: Fleet): Promise<string> {
  return world.post(async (tx) => {
    const trip = await openTrip(tx, f.operator, {
      vanLocationId: f.van,
      warehouseLocationId: f.warehouse,
      businessDate: '2026-11-23',
    });
    await loadTrip(tx, f.operator, {
      tripId: trip.id,
      lines: [
        { productId: f.soda, unit: 'case', quantity: 5 },
        { productId: f.water, unit: 'case', quantity: 2 },
      ],
    });
    await departTrip(tx, f.operator, trip.id);
    return trip.id;
  });
}

/**
 * Three van sales: Mama 2 cases of soda at 24 000 (48 000 + 18 % = 56 640); Duka 6 bottles of water at 1 000 and 3
 * of soda at 1 100 (6 000 + 1 080 + 3 300 + 594 = 10 974); Mama 1 case of soda (28 320), voided. Returns the ids.
 */
async function sell(f: Fleet): Promise<{ mama: string; duka: string; voided: string }> {
  return world.post(async (tx) => {
    const sale = (
      customerId: string,
      lines: { productId: string; unit: 'case' | 'bottle'; quantity: number; unitPrice: string }[],
    ) =>
      createInvoice(tx, f.operator, { customerId, locationId: f.van, issueDate: '2026-11-23', currency: 'UGX', lines });
    const mama = await sale(f.mama, [{ productId: f.soda, unit: 'case', quantity: 2, unitPrice: '24000' }]);
    const duka = await sale(f.duka, [
      { productId: f.water, unit: 'bottle', quantity: 6, unitPrice: '1000' },
      { productId: f.soda, unit: 'bottle', quantity: 3, unitPrice: '1100' },
    ]);
    const voided = await sale(f.mama, [{ productId: f.soda, unit: 'case', quantity: 1, unitPrice: '24000' }]);
    await voidInvoice(tx, f.operator, voided.id, 'Keyed twice');
    return { mama: mama.id, duka: duka.id, voided: voided.id };
  });
}

/** The count at the return: 67 bottles of soda (69 on the books: 2 missing) and 18 of water (as the books say). */
const countBack = (f: Fleet, tripId: string) =>
  world.post((tx) =>
    returnTrip(tx, f.operator, {
      tripId,
      lines: [
        { productId: f.soda, unit: 'bottle', countedQuantity: 67 },
        { productId: f.water, unit: 'bottle', countedQuantity: 18 },
      ],
    }),
  );

const ugx = (amount: string) => ({ amount, currency: 'UGX' });
const zero = ugx('0');

/** The expenses of the worked sheet: a crew allowance and a receipted purchase. */
const expenses: SettleTripCommand['expenses'] = [
  { kind: 'allowance', amount: '15000', description: 'Crew lunch allowance' },
  { kind: 'purchase', amount: '8000', description: 'Puncture repair', receiptReference: 'RC-2231' },
];

/** The sheet's stock lines (ordered by product id) with soda's first. */
const sodaFirst = <Line extends { productId: string }>(f: Fleet, lines: Line[]) =>
  [...lines].sort((a, b) => Number(a.productId !== f.soda) - Number(b.productId !== f.soda));

async function refusal(t: ExecutionContext, promise: Promise<unknown>): Promise<ApiError> {
  return (await t.throwsAsync(promise, { instanceOf: ApiError })) as ApiError;
}

const rowsOf = async (f: Fleet) => ({
  settlements: (
    await world.db.selectFrom('settlements').select('id').where('organization_id', '=', f.organizationId).execute()
  ).length,
  expenses: (
    await world.db
      .selectFrom('settlement_expenses')
      .select('line_number')
      .where('organization_id', '=', f.organizationId)
      .execute()
  ).length,
  events: (
    await world.db
      .selectFrom('events')
      .select('id')
      .where('organization_id', '=', f.organizationId)
      .where('type', 'in', ['settlement.closed', 'trip.closed'])
      .execute()
  ).length,
  tripStatus: (
    await world.db.selectFrom('trips').select('status').where('organization_id', '=', f.organizationId).execute()
  ).map((row) => row.status),
});

test('the worked sheet: loaded, sold (a void put back), returned with a count, settled with an allowance and a receipted purchase: every figure, variance exact', async (t) => {
  const f = await fleet();
  const tripId = await tripOut(f);
  await sell(f);

  const out = await getTripSettlement(world.db, f.operator, tripId);
  t.like(out, {
    id: null,
    status: 'open',
    tripStatus: 'in_transit',
    handedIn: null,
    variance: null,
    cashExpenses: zero,
    expenses: [],
  });
  t.deepEqual(
    sodaFirst(f, out.stock).map((line) => [line.loaded, line.sold, line.counted, line.difference]),
    [
      [120, 51, null, null],
      [24, 6, null, null],
    ],
    'no count before the return',
  );

  await countBack(f, tripId);
  const returned = await getTripSettlement(world.db, f.operator, tripId);
  t.like(returned, { status: 'open', tripStatus: 'returned', handedIn: null, variance: null });

  const sheet = await world.post((tx) =>
    settleTrip(tx, f.operator, {
      tripId,
      handedIn: '0',
      expenses,
      notes: 'Crew paid the expenses from their own pocket',
    }),
  );
  t.regex(sheet.id!, /^stl_/);
  t.like(sheet, {
    status: 'closed',
    tripId,
    tripNumber: 'TRP-000001',
    tripStatus: 'closed',
    currency: 'UGX',
    businessDate: '2026-11-23',
    notes: 'Crew paid the expenses from their own pocket',
  });
  // Two invoices count (the voided one does not); nothing was paid on them yet, so all of it is credit.
  t.deepEqual(sheet.sales, {
    invoiceCount: 2,
    total: ugx('67614'),
    cash: zero,
    mobileMoney: zero,
    otherMethods: zero,
    creditNotes: zero,
    credit: ugx('67614'),
  });
  t.deepEqual(sheet.collections, {
    receiptCount: 0,
    total: zero,
    cash: zero,
    mobileMoney: zero,
    cheque: zero,
    bankTransfer: zero,
    card: zero,
    otherCurrencyReceipts: 0,
  });
  t.deepEqual(sheet.creditNotes, { count: 0, total: zero, cashRefunds: zero });
  // No cash was collected; the crew paid 23 000 of expenses, so the expected cash is -23 000 and handing in nothing
  // leaves a variance of +23 000: what the distributor owes the crew.
  t.deepEqual(
    [sheet.cashExpectedFromSales, sheet.cashExpenses, sheet.cashExpected, sheet.handedIn, sheet.variance],
    [zero, ugx('23000'), ugx('-23000'), zero, ugx('23000')],
  );
  t.deepEqual(sheet.expenses, [
    {
      lineNumber: 1,
      kind: 'allowance',
      description: 'Crew lunch allowance',
      amount: ugx('15000'),
      receiptReference: null,
    },
    {
      lineNumber: 2,
      kind: 'purchase',
      description: 'Puncture repair',
      amount: ugx('8000'),
      receiptReference: 'RC-2231',
    },
  ]);
  // Soda: 120 loaded, 48 + 3 sold (the voided case went off and back on), 69 on the books, 67 counted: 2 missing.
  t.deepEqual(sodaFirst(f, sheet.stock), [
    {
      productId: f.soda,
      unit: 'bottle',
      loaded: 120,
      sold: 51,
      returned: 0,
      returnedDamaged: 0,
      counted: 67,
      difference: -2,
    },
    {
      productId: f.water,
      unit: 'bottle',
      loaded: 24,
      sold: 6,
      returned: 0,
      returnedDamaged: 0,
      counted: 18,
      difference: 0,
    },
  ]);

  // The figures are frozen on the row, and the CHECK holds variance = handedIn - cashExpected.
  t.like(await world.db.selectFrom('settlements').selectAll().where('id', '=', sheet.id!).executeTakeFirstOrThrow(), {
    status: 'closed',
    handed_in: '0.0000',
    cash_expenses: '23000.0000',
    cash_expected: '-23000.0000',
    variance: '23000.0000',
  });
  // GET answers the same sheet; the events are settlement.closed (the settlement) and trip.closed (the trip).
  t.deepEqual(await getTripSettlement(world.db, f.operator, tripId), sheet);
  const events = await world.db
    .selectFrom('events')
    .select(['type', 'record_id'])
    .where('organization_id', '=', f.organizationId)
    .where('type', 'in', ['settlement.closed', 'trip.closed'])
    .orderBy('type')
    .execute();
  t.deepEqual(
    events.map((e) => [e.type, e.record_id]),
    [
      ['settlement.closed', sheet.id],
      ['trip.closed', tripId],
    ],
  );
});

test("the sheet counts what names the trip, posted through the payments, credit-notes and returns modules: receipts by method (live ones), what they paid of its invoices, its credit notes (a return's too) and their cash refunds, the returned goods back on the van; cash expected and variance net them", async (t) => {
  const f = await fleet();
  const tripId = await tripOut(f);
  const sold = await sell(f); // Mama 56 640, Duka 10 974 (and a voided one)
  const ugxOf = (amount: string) => ({ amount, currency: 'UGX' });
  await world.post(async (tx) => {
    const collect = (
      customerId: string,
      method: 'cash' | 'mobile_money',
      amount: string,
      invoiceId: string | null,
      reference?: string,
    ) =>
      recordPayment(tx, f.operator, {
        customerId,
        method,
        amount: ugxOf(amount),
        paymentDate: '2026-11-23',
        tripId,
        ...(reference ? { reference } : {}),
        ...(invoiceId ? { allocations: [{ invoiceId, amount: ugxOf(amount) }] } : { unallocated: ugxOf(amount) }),
      });
    await collect(f.mama, 'cash', '50000', sold.mama);
    await collect(f.mama, 'mobile_money', '6640', sold.mama, 'MM-7731'); // Mama's invoice paid in full
    await collect(f.duka, 'cash', '10000', null); // an old debt collected on the trip, left on the account
    const counterfeit = await collect(f.duka, 'cash', '7000', null);
    await reversePayment(tx, f.operator, counterfeit.ids[0]!, 'Counterfeit notes'); // reversed: not counted
    const adjustment = (amount: string, cashRefundAmount?: string) =>
      issueCreditNote(tx, f.operator, {
        customer: { id: f.duka },
        invoiceId: sold.duka,
        reason: 'Price difference',
        issueDate: '2026-11-23',
        ...(cashRefundAmount ? { cashRefundAmount } : {}),
        lines: [{ type: 'adjustment', description: 'Price difference', quantity: 1, unitPrice: amount }],
      });
    await adjustment('5000'); // 5 000 off Duka's 10 974
    await adjustment('8000', '2026'); // 5 974 off the rest of it (paid), 2 026 refunded in cash
    const mistaken = await adjustment('999');
    await cancelCreditNote(tx, f.operator, mistaken.id, 'Issued in error'); // cancelled: not counted
    // Mama hands back one case of soda: onto the van, its credit note (28 320, the trip's) left on her account.
    await processReturn(tx, f.operator, {
      invoiceId: sold.mama,
      returnDate: '2026-11-23',
      reason: 'Overstocked',
      lines: [{ invoiceLineNumber: 1, unit: 'case', quantity: 1, condition: 'good' }],
    });
  });
  // The count: 67 + 24 returned bottles of soda (2 missing), 18 of water.
  await world.post((tx) =>
    returnTrip(tx, f.operator, {
      tripId,
      lines: [
        { productId: f.soda, unit: 'bottle', countedQuantity: 91 },
        { productId: f.water, unit: 'bottle', countedQuantity: 18 },
      ],
    }),
  );

  const open = await getTripSettlement(world.db, f.operator, tripId);
  // Sales 67 614: Mama's 50 000 cash and 6 640 mobile money; Duka's 10 974 taken off by credit notes; nothing owed.
  t.deepEqual(open.sales, {
    invoiceCount: 2,
    total: ugx('67614'),
    cash: ugx('50000'),
    mobileMoney: ugx('6640'),
    otherMethods: zero,
    creditNotes: ugx('10974'),
    credit: zero,
  });
  t.deepEqual(open.collections, {
    receiptCount: 3,
    total: ugx('66640'),
    cash: ugx('60000'),
    mobileMoney: ugx('6640'),
    cheque: zero,
    bankTransfer: zero,
    card: zero,
    otherCurrencyReceipts: 0,
  });
  // 5 000 + 8 000 + the return's 28 320; the cancelled 999 is not counted.
  t.deepEqual(open.creditNotes, { count: 3, total: ugx('41320'), cashRefunds: ugx('2026') });
  // Cash from sales: 60 000 collected less 2 026 refunded; no expenses before the settlement is closed.
  t.deepEqual(
    [open.cashExpectedFromSales, open.cashExpenses, open.cashExpected, open.handedIn, open.variance],
    [ugx('57974'), zero, ugx('57974'), null, null],
  );
  t.deepEqual(
    sodaFirst(f, open.stock).map((line) => [line.loaded, line.sold, line.returned, line.counted, line.difference]),
    [
      [120, 51, 24, 91, -2],
      [24, 6, 0, 18, 0],
    ],
  );

  // Connected to the accounting system now: the settlement's journal entry is queued with it.
  await world.post((tx) =>
    setConnection(
      tx,
      f.organizationId,
      'accounting',
      { baseUrl: SIMULATOR_BASE_URL, account: `realm-${f.organizationId}` },
      null,
    ),
  );
  const sheet = await world.post((tx) => settleTrip(tx, f.operator, { tripId, handedIn: '34500', expenses }));
  // 57 974 - 23 000 of expenses = 34 974 expected; 34 500 handed in: 474 short.
  t.deepEqual(
    [sheet.cashExpectedFromSales, sheet.cashExpenses, sheet.cashExpected, sheet.handedIn, sheet.variance],
    [ugx('57974'), ugx('23000'), ugx('34974'), ugx('34500'), ugx('-474')],
  );
  t.deepEqual(sheet.collections, open.collections);
  t.deepEqual(sheet.posting, { status: 'pending', accountingRef: null, accountingType: null, reason: null });

  // The posting job's attempt, against the QuickBooks simulator: one balanced journal entry on the business date, its
  // cash line on the cash account the organisation mapped (`admin accounts set --cash`), not the fixed `Cash on hand`.
  await setAccounts(world.db, f.organizationId, { cashAccount: 'Cash at Kampala depot' });
  const simulators = await startSimulatorServer(world.db);
  try {
    const row = await world.db
      .selectFrom('external_postings')
      .select(['id'])
      .where('document_id', '=', sheet.id!)
      .executeTakeFirstOrThrow();
    const noRetry: SendMany = async () => {
      throw new Error('no retry expected');
    };
    const outcome = await runPosting(
      {
        db: world.db,
        settings: { secretKey: Buffer.alloc(32), simulatorUrl: simulators.url },
        processId: 'test',
        sendMany: noRetry,
        logger: pino({ level: 'silent' }),
      },
      { organizationId: f.organizationId, postingId: row.id },
    );
    t.is(outcome, 'posted');
    const posted = await getTripSettlement(world.db, f.operator, tripId);
    t.like(posted.posting, { status: 'posted', accountingType: 'JournalEntry' });
    const entry = await quickBooksEntity(world.db, `realm-${f.organizationId}`, 'JournalEntry', 'STL-TRP-000001');
    t.is(entry?.TxnDate, '2026-11-23');
    t.deepEqual(
      (
        entry!.Line as {
          Amount: number;
          JournalEntryLineDetail: { PostingType: string; AccountRef: { value: string } };
        }[]
      ).map((line) => [
        line.JournalEntryLineDetail.AccountRef.value,
        line.JournalEntryLineDetail.PostingType,
        line.Amount,
      ]),
      [
        ['Trip expenses', 'Debit', 23000],
        ['Cash shortages', 'Debit', 474],
        ['Cash at Kampala depot', 'Credit', 23474],
      ],
    );
  } finally {
    await simulators.stop();
  }

  // A trip with money on it is not closed at zero: it is settled with the cash handed in.
  const other = await fleetTripWithSale();
  const refused = await refusal(
    t,
    world.post((tx) => closeTripWithNothingToSettle(tx, other.f.operator, other.tripId)),
  );
  t.is(refused.code, 'invalid_state');
  t.regex(refused.detail, /1 invoice\(s\), 0 receipt\(s\) and 0 credit note\(s\) on it: settle it/);
});

/** Another organisation's trip with one van sale, returned. */
async function fleetTripWithSale(): Promise<{ f: Fleet; tripId: string }> {
  const f = await fleet();
  const tripId = await tripOut(f);
  await world.post((tx) =>
    createInvoice(tx, f.operator, {
      customerId: f.mama,
      locationId: f.van,
      issueDate: '2026-11-23',
      currency: 'UGX',
      lines: [{ productId: f.soda, unit: 'case', quantity: 1, unitPrice: '24000' }],
    }),
  );
  await world.post((tx) =>
    returnTrip(tx, f.operator, {
      tripId,
      lines: [
        { productId: f.soda, unit: 'case', countedQuantity: 4 },
        { productId: f.water, unit: 'case', countedQuantity: 2 },
      ],
    }),
  );
  return { f, tripId };
}

test('refusals write nothing: a trip not returned (409), fuel (by kind or description), a purchase without its receipt, negative, zero or malformed amounts (each naming its field), a second settle (409)', async (t) => {
  const f = await fleet();
  const tripId = await tripOut(f);
  const before = await rowsOf(f);
  const early = await refusal(
    t,
    world.post((tx) => settleTrip(tx, f.operator, { tripId, handedIn: '0', expenses: [] })),
  );
  t.is(early.code, 'invalid_state');
  t.regex(early.detail, /is in_transit; a trip is settled once it has returned/);
  await countBack(f, tripId);

  const cases: [string, SettleTripCommand, string, string][] = [
    [
      'fuel as the kind',
      { tripId, handedIn: '0', expenses: [{ kind: 'fuel', amount: '50000', description: 'Top-up' }] },
      'business_rule',
      '/expenses/0/kind',
    ],
    [
      'fuel in the description',
      {
        tripId,
        handedIn: '0',
        expenses: [
          expenses[0]!,
          { kind: 'purchase', amount: '50000', description: 'Diesel for the van', receiptReference: 'RC-1' },
        ],
      },
      'business_rule',
      '/expenses/1/description',
    ],
    [
      'a purchase without its receipt',
      { tripId, handedIn: '0', expenses: [{ kind: 'purchase', amount: '8000', description: 'Puncture repair' }] },
      'business_rule',
      '/expenses/0/receiptReference',
    ],
    [
      'a negative expense',
      { tripId, handedIn: '0', expenses: [{ kind: 'allowance', amount: '-15000', description: 'Crew lunch' }] },
      'invalid_field',
      '/expenses/0/amount',
    ],
    [
      'a zero expense',
      { tripId, handedIn: '0', expenses: [{ kind: 'allowance', amount: '0', description: 'Crew lunch' }] },
      'invalid_field',
      '/expenses/0/amount',
    ],
    ['a negative amount handed in', { tripId, handedIn: '-1', expenses: [] }, 'invalid_field', '/handedIn'],
    ['shillings have no cents', { tripId, handedIn: '100.50', expenses: [] }, 'invalid_field', '/handedIn'],
    ['not an amount', { tripId, handedIn: '1e5', expenses: [] }, 'invalid_field', '/handedIn'],
    [
      'an unknown kind',
      { tripId, handedIn: '0', expenses: [{ kind: 'tip', amount: '1000', description: 'Tip' }] },
      'invalid_field',
      '/expenses/0/kind',
    ],
    [
      'an empty description',
      { tripId, handedIn: '0', expenses: [{ kind: 'allowance', amount: '1000', description: '  ' }] },
      'invalid_field',
      '/expenses/0/description',
    ],
  ];
  for (const [name, command, code, field] of cases) {
    const error = await refusal(
      t,
      world.post((tx) => settleTrip(tx, f.operator, command)),
    );
    t.deepEqual([error.code, error.errors?.map((e) => e.field)], [code, [field]], name);
  }
  t.deepEqual(
    await rowsOf(f),
    { ...before, tripStatus: ['returned'] },
    'no settlement, expense or event was written; the trip is still returned',
  );

  await world.post((tx) => settleTrip(tx, f.operator, { tripId, handedIn: '0', expenses }));
  const settled = await rowsOf(f);
  t.deepEqual(settled, { settlements: 1, expenses: 2, events: 2, tripStatus: ['closed'] });
  const twice = await refusal(
    t,
    world.post((tx) => settleTrip(tx, f.operator, { tripId, handedIn: '0', expenses: [] })),
  );
  t.is(twice.code, 'invalid_state');
  t.regex(twice.detail, /is settled already/);
  t.deepEqual(await rowsOf(f), settled);
  const missing = await refusal(
    t,
    world.post((tx) =>
      settleTrip(tx, f.operator, { tripId: 'trp_01JD4T1A3C5E7G9J1K3M5P7R9T', handedIn: '0', expenses: [] }),
    ),
  );
  t.is(missing.code, 'not_found');
});

test("a trip closes only with its settlement: the trips module's close alone is 409; two settles racing: one closes it, the other is 409", async (t) => {
  const f = await fleet();
  const tripId = await tripOut(f);
  await countBack(f, tripId);
  const alone = await refusal(
    t,
    world.post((tx) => closeTrip(tx, f.operator, tripId)),
  );
  t.is(alone.code, 'invalid_state');
  t.regex(alone.detail, /has no settlement/);
  t.deepEqual((await rowsOf(f)).tripStatus, ['returned']);

  const outcomes = await Promise.allSettled(
    [1, 2].map((n) =>
      world.post((tx) => settleTrip(tx, f.operator, { tripId, handedIn: String(n * 1000), expenses: [] })),
    ),
  );
  t.is(outcomes.filter((o) => o.status === 'fulfilled').length, 1);
  const [lost] = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
  t.is((lost!.reason as ApiError).code, 'invalid_state');
  t.like(await rowsOf(f), { settlements: 1, events: 2, tripStatus: ['closed'] });
});

test('settlement.closed is a webhook event whose object is the sheet as GET /trips/{id}/settlement returns it; a sheet over the limit goes out as the truncated record fetched from that path', async (t) => {
  const f = await fleet();
  const tripId = await tripOut(f);
  await countBack(f, tripId);
  const sheet = await world.post((tx) => settleTrip(tx, f.operator, { tripId, handedIn: '0', expenses }));
  t.true(webhookEventTypes.includes('settlement.closed'));
  const actor = jobActor(f.operator.organization, 'webhooks.deliver');
  t.deepEqual(await webhookObjects['settlement.closed']!.read(world.db, actor, sheet.id!), sheet);

  // The same reader under a limit this sheet passes (a van of a few thousand products would pass 256 KB).
  const now = new Date('2026-11-23T17:00:00.000Z');
  const cut = await webhookObject(settlementObject, world.db, actor, sheet.id!, now, 1024);
  t.like(cut, {
    id: sheet.id,
    truncated: true,
    fetch: `/api/v1/trips/${tripId}/settlement`,
    updatedAt: sheet.updatedAt,
  });
  t.like(cut.summary, { tripId, status: 'closed', variance: ugx('23000') });
  t.deepEqual(
    await webhookObject(settlementObject, world.db, actor, sheet.id!, now),
    sheet,
    'under 256 KB it goes out whole',
  );
});

test('with the delivery module off, settling and reading a settlement are 403 module_disabled', async (t) => {
  const f = await fleet();
  const tripId = await tripOut(f);
  await countBack(f, tripId);
  const off = { ...f.operator, organization: { ...f.operator.organization, deliveryModuleEnabled: false } };
  for (const attempt of [
    () => world.post((tx) => settleTrip(tx, off, { tripId, handedIn: '0', expenses: [] })),
    () => world.post((tx) => closeTripWithNothingToSettle(tx, off, tripId)),
    () => getTripSettlement(world.db, off, tripId),
  ]) {
    t.is((await refusal(t, attempt())).code, 'module_disabled');
  }
  t.deepEqual((await rowsOf(f)).tripStatus, ['returned']);
});

test('a trip whose business date is in a closed period is not settled (422 period_closed naming /tripId, nothing written); reopened, it is', async (t) => {
  const f = await fleet();
  const tripId = await tripOut(f);
  await sell(f);
  await countBack(f, tripId);
  await world.post((tx) => closePeriod(tx, f.organizationId, '2026-11-23'));
  const before = await rowsOf(f);
  const refused = await refusal(
    t,
    world.post((tx) => settleTrip(tx, f.operator, { tripId, handedIn: '0', expenses: [] })),
  );
  t.is(refused.code, 'period_closed');
  t.deepEqual(
    refused.errors?.map((e) => e.field),
    ['/tripId'],
  );
  t.deepEqual(await rowsOf(f), before);
  await world.post((tx) => reopenPeriod(tx, f.organizationId, null));
  const sheet = await world.post((tx) => settleTrip(tx, f.operator, { tripId, handedIn: '0', expenses: [] }));
  t.is(sheet.status, 'closed');
});
