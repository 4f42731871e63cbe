// Sales order rules, proved at the service level (posting functions with an operator, no HTTP): the arithmetic of
// the README (Orders) to the shilling (line amount = quantity x unitPrice - discount, tax per line rounded half-up, totals
// summed), prices defaulted from the customer's price group and unit as valid on the order date, the refusals naming
// their fields, the lifecycle (cancel only while open, 409 otherwise) and closed accounting periods.
import test, { type ExecutionContext } from 'ava';
import { jobActor, type OperatorActor } from '../../server/platform/access/actor.js';
import { closePeriod, reopenPeriod } from '../../server/domain/periods.js';
import { webhookEventTypes, webhookObjects } from '../../server/composition/modules.js';
import { customers } from '../../server/modules/customers/service.js';
import {
  cancelOrder,
  createOrder,
  markOrderInvoiced,
  type CreateOrderCommand,
} from '../../server/modules/orders/documents.js';
import { setPrices } from '../../server/modules/prices/service.js';
import { products } from '../../server/modules/products/service.js';
import { ApiError } from '../../server/platform/errors/api-error.js';
import { assignCodes } from '../../server/platform/external-codes/external-codes.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('orders');
});
test.after.always(async () => {
  await world?.close();
});

interface Shop {
  operator: OperatorActor;
  organizationId: string;
  customer: string;
  noGroup: string;
  beer: string;
  soda: string;
  crate: string;
}

const ugx = (amount: string) => ({ amount, currency: 'UGX' });

/** An organisation with three products at 18 % tax, their RETAIL-A prices from 2026-11-01, and two customers. */
async function shop(): Promise<Shop> {
  const { organization, operator } = await world.organization();
  return world.post(async (tx) => {
    const beer = await products.create(tx, operator, {
      productCode: '400001',
      name: 'Lager 500ml',
      packSize: 24,
      sellingUnits: ['case', 'bottle'],
      taxRate: 18,
    });
    const soda = await products.create(tx, operator, {
      productCode: '400002',
      name: 'Soda 300ml',
      packSize: 24,
      sellingUnits: ['case', 'bottle'],
      taxRate: 18,
    });
    const crate = await products.create(tx, operator, {
      productCode: '400003',
      name: 'Water 1l',
      packSize: 12,
      sellingUnits: ['case'],
      taxRate: 18,
    });
    await setPrices(tx, operator, [
      { productCode: '400001', priceGroup: 'RETAIL-A', unit: 'case', unitPrice: ugx('54000'), validFrom: '2026-11-01' },
      {
        productCode: '400001',
        priceGroup: 'RETAIL-A',
        unit: 'bottle',
        unitPrice: ugx('2333'),
        validFrom: '2026-11-01',
      },
      { productCode: '400002', priceGroup: 'RETAIL-A', unit: 'case', unitPrice: ugx('21500'), validFrom: '2026-11-20' },
    ]);
    const customer = await customers.create(tx, operator, {
      outletCode: 'UG0000001',
      name: 'Shop One',
      channel: 'retail',
      priceGroup: 'RETAIL-A',
    });
    await assignCodes(tx, organization.id, 'customer', customer.id, { dms: 'DMS-SHOP-1' });
    await assignCodes(tx, organization.id, 'product', beer.id, { dms: 'DMS-LAGER' });
    const noGroup = await customers.create(tx, operator, {
      outletCode: 'UG0000002',
      name: 'Shop Two',
      channel: 'retail',
    });
    return {
      operator,
      organizationId: organization.id,
      customer: customer.id,
      noGroup: noGroup.id,
      beer: beer.id,
      soda: soda.id,
      crate: crate.id,
    };
  });
}

const take = (s: Shop, command: Partial<CreateOrderCommand> & Pick<CreateOrderCommand, 'lines'>) =>
  world.post((tx) => createOrder(tx, s.operator, { customerId: s.customer, orderDate: '2026-11-24', ...command }));

async function refusal(t: ExecutionContext, promise: Promise<unknown>): Promise<ApiError> {
  return (await t.throwsAsync(promise, { instanceOf: ApiError })) as ApiError;
}

const orderCount = async (organizationId: string) =>
  Number(
    (
      await world.db
        .selectFrom('sales_orders')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('organization_id', '=', organizationId)
        .executeTakeFirstOrThrow()
    ).n,
  );

test('a 3-line order with a discount at 18 % tax adds up to the shilling: per-line tax rounded half-up, totals summed', async (t) => {
  const s = await shop();
  const order = await take(s, {
    lines: [
      // 7 x 2333 = 16331; - 1000 = 15331; 18 % = 2759.58 -> 2760
      { productId: s.beer, unit: 'bottle', quantity: 7, discount: ugx('1000') },
      // 3 x 54000 = 162000; 18 % = 29160
      { productId: s.beer, unit: 'case', quantity: 3 },
      // 5 x 9999 = 49995 (a given price); 18 % = 8999.1 -> 8999
      { productId: s.crate, unit: 'case', quantity: 5, unitPrice: ugx('9999') },
    ],
  });
  t.like(order, {
    number: 'ORD-000001',
    status: 'open',
    customerId: s.customer,
    orderDate: '2026-11-24',
    currency: 'UGX',
    cancelReason: null,
    cancelledAt: null,
  });
  t.deepEqual(
    order.lines.map((line) => [
      line.lineNumber,
      line.unitPrice.amount,
      line.discount.amount,
      line.taxRate,
      line.amount.amount,
      line.tax.amount,
    ]),
    [
      [1, '2333', '1000', '18.00', '15331', '2760'],
      [2, '54000', '0', '18.00', '162000', '29160'],
      [3, '9999', '0', '18.00', '49995', '8999'],
    ],
  );
  // subtotal 16331 + 162000 + 49995 = 228326; discount 1000; tax 2760 + 29160 + 8999 = 40919; total 268245.
  t.deepEqual(
    [order.subtotal, order.discount, order.tax, order.total],
    [ugx('228326'), ugx('1000'), ugx('40919'), ugx('268245')],
  );

  // Tax is rounded per line, never on the subtotal: 3 lines of 1 bottle with 2 off are 2331 each, 18 % = 419.58 -> 420,
  // so 1260 in all, whereas 18 % of the 6993 they add up to would be 1258.74 -> 1259.
  const perLine = await take(s, {
    lines: [1, 2, 3].map(() => ({ productId: s.beer, unit: 'bottle' as const, quantity: 1, discount: ugx('2') })),
  });
  t.deepEqual(
    [perLine.subtotal, perLine.discount, perLine.tax, perLine.total],
    [ugx('6999'), ugx('6'), ugx('1260'), ugx('8253')],
  );
  t.is(perLine.number, 'ORD-000002');

  const events = await world.db.selectFrom('events').select('type').where('record_id', '=', order.id).execute();
  t.deepEqual(
    events.map((e) => e.type),
    ['order.created'],
  );
  t.true(webhookEventTypes.includes('order.created') && webhookEventTypes.includes('order.status_changed'));
  t.deepEqual(
    await webhookObjects['order.created']!.read(
      world.db,
      jobActor(s.operator.organization, 'webhooks.deliver'),
      order.id,
    ),
    order,
  );
});

test("prices default from the customer's price group and unit as valid on the order date; customer and product by DMS code", async (t) => {
  const s = await shop();
  const order = await take(s, {
    customerId: undefined,
    customer: { system: 'dms', code: 'DMS-SHOP-1' },
    orderDate: '2026-11-20',
    lines: [
      { product: { system: 'dms', code: 'DMS-LAGER' }, unit: 'case', quantity: 1 },
      { productId: s.soda, unit: 'case', quantity: 2 },
    ],
  });
  t.is(order.customerId, s.customer);
  t.deepEqual(
    order.lines.map((line) => [line.productId, line.unitPrice.amount]),
    [
      [s.beer, '54000'],
      [s.soda, '21500'],
    ],
  );

  // The soda's price is valid from 2026-11-20: on the 19th there is none, and the line is refused naming its unitPrice.
  const early = await refusal(
    t,
    take(s, {
      orderDate: '2026-11-19',
      lines: [
        { productId: s.beer, unit: 'case', quantity: 1 },
        { productId: s.soda, unit: 'case', quantity: 1 },
      ],
    }),
  );
  t.is(early.code, 'business_rule');
  t.deepEqual(
    early.errors?.map((e) => e.field),
    ['/lines/1/unitPrice'],
  );
  // No price for the bottle of soda at all; a customer without a price group needs a price on every line.
  t.deepEqual(
    (await refusal(t, take(s, { lines: [{ productId: s.soda, unit: 'bottle', quantity: 1 }] }))).errors?.map(
      (e) => e.field,
    ),
    ['/lines/0/unitPrice'],
  );
  const noGroup = await refusal(
    t,
    take(s, { customerId: s.noGroup, lines: [{ productId: s.beer, unit: 'case', quantity: 1 }] }),
  );
  t.is(noGroup.code, 'business_rule');
  t.regex(noGroup.errors![0]!.message, /no price group/);
  const priced = await take(s, {
    customerId: s.noGroup,
    lines: [{ productId: s.beer, unit: 'case', quantity: 1, unitPrice: ugx('50000') }],
  });
  t.is(priced.total.amount, '59000');
});

test('refusals name their fields and write nothing: customer, product, unit, discount, currency, both or neither of id and code', async (t) => {
  const s = await shop();
  const cases: [string, Promise<unknown>, ApiError['code'], string[]][] = [
    [
      'unknown customer id',
      take(s, { customerId: 'cus_nobody', lines: [{ productId: s.beer, unit: 'case', quantity: 1 }] }),
      'customer_not_found',
      ['/customerId'],
    ],
    [
      'unknown customer code',
      take(s, {
        customerId: undefined,
        customer: { system: 'dms', code: 'NOPE' },
        lines: [{ productId: s.beer, unit: 'case', quantity: 1 }],
      }),
      'customer_not_found',
      ['/customer/code'],
    ],
    [
      'unknown products',
      take(s, {
        lines: [
          { productId: s.beer, unit: 'case', quantity: 1 },
          { productId: 'prd_nothing', unit: 'case', quantity: 1 },
          { product: { system: 'dms', code: 'NOPE' }, unit: 'case', quantity: 1 },
        ],
      }),
      'product_not_found',
      ['/lines/1/productId', '/lines/2/product/code'],
    ],
    [
      'a unit the product does not sell',
      take(s, { lines: [{ productId: s.crate, unit: 'bottle', quantity: 1, unitPrice: ugx('1000') }] }),
      'business_rule',
      ['/lines/0/unit'],
    ],
    [
      'a discount above the line',
      take(s, { lines: [{ productId: s.beer, unit: 'case', quantity: 1, discount: ugx('54001') }] }),
      'business_rule',
      ['/lines/0/discount'],
    ],
    [
      'another currency',
      take(s, { currency: 'USD', lines: [{ productId: s.beer, unit: 'case', quantity: 1 }] }),
      'currency_not_supported',
      ['/currency'],
    ],
    [
      'a price in another currency',
      take(s, {
        lines: [{ productId: s.beer, unit: 'case', quantity: 1, unitPrice: { amount: '10', currency: 'USD' } }],
      }),
      'currency_not_supported',
      ['/lines/0/unitPrice/currency'],
    ],
    [
      'neither customerId nor customer',
      take(s, { customerId: undefined, lines: [{ productId: s.beer, unit: 'case', quantity: 1 }] }),
      'required_field',
      ['/customerId'],
    ],
    [
      'both productId and product',
      take(s, {
        lines: [{ productId: s.beer, product: { system: 'dms', code: 'DMS-LAGER' }, unit: 'case', quantity: 1 }],
      }),
      'invalid_field',
      ['/lines/0/productId'],
    ],
    [
      'an unknown location',
      take(s, { locationId: 'loc_nowhere', lines: [{ productId: s.beer, unit: 'case', quantity: 1 }] }),
      'business_rule',
      ['/locationId'],
    ],
  ];
  for (const [name, attempt, code, fields] of cases) {
    const error = await refusal(t, attempt);
    t.is(error.code, code, name);
    t.deepEqual(
      error.errors?.map((e) => e.field),
      fields,
      name,
    );
  }
  t.is(await orderCount(s.organizationId), 0);
  t.is(
    (await take(s, { lines: [{ productId: s.beer, unit: 'case', quantity: 1 }] })).number,
    'ORD-000001',
    'refused orders took no number',
  );
});

test('cancel only while open: open -> cancelled with its reason and order.status_changed; cancel again or an invoiced order is 409 invalid_state', async (t) => {
  const s = await shop();
  const order = await take(s, { lines: [{ productId: s.beer, unit: 'case', quantity: 1 }] });
  const cancelled = await world.post((tx) =>
    cancelOrder(tx, s.operator, { orderId: order.id, reason: '  Outlet closed  ' }),
  );
  t.like(cancelled, { status: 'cancelled', cancelReason: 'Outlet closed' });
  t.truthy(cancelled.cancelledAt);
  t.true(cancelled.updatedAt > order.updatedAt);

  const again = await refusal(
    t,
    world.post((tx) => cancelOrder(tx, s.operator, { orderId: order.id, reason: 'again' })),
  );
  t.is(again.code, 'invalid_state');
  t.regex(again.detail, /is cancelled; cancel is allowed only from open/);

  const invoiced = await take(s, { lines: [{ productId: s.beer, unit: 'case', quantity: 1 }] });
  t.is((await world.post((tx) => markOrderInvoiced(tx, s.operator, invoiced.id))).status, 'invoiced');
  const late = await refusal(
    t,
    world.post((tx) => cancelOrder(tx, s.operator, { orderId: invoiced.id, reason: 'too late' })),
  );
  t.is(late.code, 'invalid_state');
  t.regex(late.detail, /is invoiced/);
  t.is(
    (
      await refusal(
        t,
        world.post((tx) => cancelOrder(tx, s.operator, { orderId: 'ord_nothing', reason: 'x' })),
      )
    ).code,
    'not_found',
  );

  const events = await world.db
    .selectFrom('events')
    .select(['record_id', 'type'])
    .where('record_id', 'in', [order.id, invoiced.id])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  t.deepEqual(
    events.map((e) => `${e.record_id === order.id ? 'a' : 'b'}:${e.type}`),
    ['a:order.created', 'a:order.status_changed', 'b:order.created', 'b:order.status_changed'],
  );
  t.is(
    (
      await world.db
        .selectFrom('sales_orders')
        .select('cancel_reason')
        .where('id', '=', invoiced.id)
        .executeTakeFirstOrThrow()
    ).cancel_reason,
    null,
  );
});

test('closed periods: an order dated on or before the closing date, or a cancel of one, is 422 period_closed naming /orderDate; reopen lets both through', async (t) => {
  const s = await shop();
  const before = await take(s, { orderDate: '2026-11-20', lines: [{ productId: s.beer, unit: 'case', quantity: 1 }] });
  await world.post((tx) => closePeriod(tx, s.organizationId, '2026-11-20'));

  const dated = await refusal(
    t,
    take(s, { orderDate: '2026-11-20', lines: [{ productId: s.beer, unit: 'case', quantity: 1 }] }),
  );
  t.is(dated.code, 'period_closed');
  t.deepEqual(
    dated.errors?.map((e) => e.field),
    ['/orderDate'],
  );
  t.is(
    (await take(s, { orderDate: '2026-11-21', lines: [{ productId: s.beer, unit: 'case', quantity: 1 }] })).status,
    'open',
    'the day after is open',
  );

  const cancel = await refusal(
    t,
    world.post((tx) => cancelOrder(tx, s.operator, { orderId: before.id, reason: 'closed books' })),
  );
  t.is(cancel.code, 'period_closed');
  t.deepEqual(
    cancel.errors?.map((e) => e.field),
    ['/orderDate'],
  );

  await world.post((tx) => reopenPeriod(tx, s.organizationId, '2026-11-19'));
  t.is(
    (await world.post((tx) => cancelOrder(tx, s.operator, { orderId: before.id, reason: 'reopened' }))).status,
    'cancelled',
  );
  await world.post((tx) => reopenPeriod(tx, s.organizationId, null));
  t.is(
    (await take(s, { orderDate: '2026-11-01', lines: [{ productId: s.beer, unit: 'case', quantity: 1 }] })).status,
    'open',
  );
});
