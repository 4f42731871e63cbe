// The stock ledger's rules, proved at the service level (posting functions with an actor, no HTTP): a removal never
// takes a level below zero, even under 50 concurrent removals; a transfer moves both sides or neither; counts move
// the difference; receipts set the moving average cost and removals carry it; the ledger is append-only; and the
// checker finds nothing after all of it, and finds a balance changed behind the ledger's back.
import test from 'ava';
import { ApiError } from '../../server/platform/errors/api-error.js';
import { inTransaction } from '../../server/platform/database/transaction.js';
import { auditStock } from '../../server/modules/stock/audit.js';
import { postStockAdjustment, postStockTransfer } from '../../server/modules/stock/documents.js';
import { locations } from '../../server/modules/locations/service.js';
import { products } from '../../server/modules/products/service.js';
import type { OperatorActor } from '../../server/platform/access/actor.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('stock_ledger');
});
test.after.always(async () => {
  await world?.close();
});

let productCode = 100_000;
async function setUp(): Promise<{
  operator: OperatorActor;
  productId: string;
  warehouse: string;
  van: string;
  damages: string;
}> {
  const { operator } = await world.organization();
  const product = await world.post((tx) =>
    products.create(tx, operator, {
      productCode: String(++productCode),
      name: 'Soda 300ml',
      packSize: 24,
      sellingUnits: ['case', 'bottle'],
    }),
  );
  const [warehouse, van, damages] = await Promise.all(
    ['M01', 'V_R01-G', 'D01'].map((code) => world.post((tx) => locations.create(tx, operator, { code, name: code }))),
  );
  return { operator, productId: product.id, warehouse: warehouse!.id, van: van!.id, damages: damages!.id };
}

const level = async (locationId: string, productId: string) =>
  (
    await world.db
      .selectFrom('stock_levels')
      .select('quantity')
      .where('location_id', '=', locationId)
      .where('product_id', '=', productId)
      .executeTakeFirst()
  )?.quantity ?? 0;

test('50 concurrent removals from a level that holds 30 (adjustments and transfers, which number apart): exactly 30 succeed, 20 get insufficient_stock, the level is 0 and the ledger adds up', async (t) => {
  const { operator, productId, warehouse, van } = await setUp();
  await world.post((tx) =>
    postStockAdjustment(tx, operator, {
      reasonCode: 'OPEN',
      lines: [{ productId, locationId: warehouse, unit: 'bottle', quantity: 30 }],
    }),
  );
  // Half are adjustments and half transfers: two document types, two number sequences, so nothing but the level's
  // own lock orders them.
  const outcomes = await Promise.allSettled(
    Array.from({ length: 50 }, (_, i) =>
      world.post((tx) =>
        i % 2 === 0
          ? postStockAdjustment(tx, operator, {
              reasonCode: 'DMG',
              lines: [{ productId, locationId: warehouse, unit: 'bottle', quantity: -1 }],
            })
          : postStockTransfer(tx, operator, {
              fromLocationId: warehouse,
              toLocationId: van,
              lines: [{ productId, unit: 'bottle', quantity: 1 }],
            }),
      ),
    ),
  );
  const succeeded = outcomes.map((o, i) => [o.status, i % 2] as const).filter(([status]) => status === 'fulfilled');
  t.is(succeeded.length, 30);
  const refused = outcomes
    .filter((o): o is PromiseRejectedResult => o.status === 'rejected')
    .map((o) => o.reason as ApiError);
  t.is(refused.length, 20);
  t.deepEqual(
    [...new Set(refused.map((e) => `${e instanceof ApiError ? e.code : String(e)} ${e.errors?.[0]?.field}`))],
    ['insufficient_stock /lines/0/quantity'],
  );
  t.is(await level(warehouse, productId), 0);
  t.is(
    await level(van, productId),
    succeeded.filter(([, kind]) => kind === 1).length,
    'the van holds what the successful transfers moved',
  );
  const { count } = await world.db
    .selectFrom('stock_movements')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('organization_id', '=', operator.organization.id)
    .executeTakeFirstOrThrow();
  t.is(Number(count), 31, 'one receipt and 30 removals: a refused document wrote nothing');
  t.deepEqual(await auditStock(world.db, operator.organization.id), []);
});

test('a transfer is one document: both sides move, in base units (a case is its pack size); when one line is short nothing moves', async (t) => {
  const { operator, productId, warehouse, van } = await setUp();
  await world.post((tx) =>
    postStockAdjustment(tx, operator, {
      reasonCode: 'OPEN',
      lines: [{ productId, locationId: warehouse, unit: 'case', quantity: 10 }],
    }),
  );
  const transfer = await world.post((tx) =>
    postStockTransfer(tx, operator, {
      fromLocationId: warehouse,
      toLocationId: van,
      lines: [
        { productId, unit: 'case', quantity: 4 },
        { productId, unit: 'bottle', quantity: 6 },
      ],
    }),
  );
  t.regex(transfer.number, /^TRF-\d{6}$/);
  t.deepEqual(
    transfer.movements.map((m) => [m.line, m.quantity, m.fromLocationId, m.toLocationId]),
    [
      [1, 96, warehouse, van],
      [2, 6, warehouse, van],
    ],
  );
  t.deepEqual([await level(warehouse, productId), await level(van, productId)], [240 - 102, 102]);

  const error = await t.throwsAsync(
    world.post((tx) =>
      postStockTransfer(tx, operator, {
        fromLocationId: warehouse,
        toLocationId: van,
        lines: [
          { productId, unit: 'bottle', quantity: 1 },
          { productId, unit: 'case', quantity: 10 },
        ],
      }),
    ),
    { instanceOf: ApiError },
  );
  t.is(error?.code, 'insufficient_stock');
  t.deepEqual(
    error?.errors?.map((e) => e.field),
    ['/lines/1/quantity'],
    'the short line is named, the first line was fine',
  );
  t.deepEqual([await level(warehouse, productId), await level(van, productId)], [138, 102], 'neither side moved');
  t.deepEqual(await auditStock(world.db, operator.organization.id), []);
});

test('a count moves the difference from the books (found less: an issue; found what the books say: nothing); the numbers are gap-free per type', async (t) => {
  const { operator, productId, warehouse } = await setUp();
  const opening = await world.post((tx) =>
    postStockAdjustment(tx, operator, {
      reasonCode: 'OPEN',
      lines: [{ productId, locationId: warehouse, unit: 'bottle', quantity: 50 }],
    }),
  );
  const count = await world.post((tx) =>
    postStockAdjustment(tx, operator, {
      reasonCode: 'COUNT',
      lines: [{ productId, locationId: warehouse, unit: 'case', countedQuantity: 1 }],
    }),
  );
  t.deepEqual(
    count.movements.map((m) => [m.fromLocationId, m.toLocationId, m.quantity]),
    [[warehouse, null, 26]],
  );
  t.is(await level(warehouse, productId), 24);
  const same = await world.post((tx) =>
    postStockAdjustment(tx, operator, {
      reasonCode: 'COUNT',
      lines: [{ productId, locationId: warehouse, unit: 'bottle', countedQuantity: 24 }],
    }),
  );
  t.deepEqual(same.movements, []);
  t.deepEqual([opening.number, count.number, same.number], ['ADJ-000001', 'ADJ-000002', 'ADJ-000003']);
});

test('receipts set the moving average cost, removals carry it, transfers leave it', async (t) => {
  const { operator, productId, warehouse, van } = await setUp();
  await world.post((tx) =>
    postStockAdjustment(tx, operator, {
      reasonCode: 'RECEIPT',
      lines: [{ productId, locationId: warehouse, unit: 'case', quantity: 1, unitCost: '24000' }],
    }),
  );
  await world.post((tx) =>
    postStockAdjustment(tx, operator, {
      reasonCode: 'RECEIPT',
      lines: [{ productId, locationId: warehouse, unit: 'bottle', quantity: 24, unitCost: '1500' }],
    }),
  );
  // (24 x 1000 + 24 x 1500) / 48 = 1250
  const transfer = await world.post((tx) =>
    postStockTransfer(tx, operator, {
      fromLocationId: warehouse,
      toLocationId: van,
      lines: [{ productId, unit: 'bottle', quantity: 10 }],
    }),
  );
  t.is(transfer.movements[0]!.unitCost, '1250.000000');
  const issue = await world.post((tx) =>
    postStockAdjustment(tx, operator, {
      reasonCode: 'DMG',
      lines: [{ productId, locationId: van, unit: 'bottle', quantity: -3 }],
    }),
  );
  t.is(issue.movements[0]!.unitCost, '1250.000000');
  const valuation = await world.db
    .selectFrom('stock_valuations')
    .select(['quantity', 'average_cost'])
    .where('product_id', '=', productId)
    .executeTakeFirstOrThrow();
  t.deepEqual(
    { quantity: valuation.quantity, averageCost: valuation.average_cost },
    { quantity: 45, averageCost: '1250.000000' },
  );
  t.deepEqual(await auditStock(world.db, operator.organization.id), []);
});

test('bad lines are refused by the field that names them and write nothing: a product or location of another organisation, zero, fractional, both quantity and count', async (t) => {
  const { operator, productId, warehouse } = await setUp();
  const other = await setUp();
  const cases: [string, Parameters<typeof postStockAdjustment>[2], string, string][] = [
    [
      "another organisation's product",
      { reasonCode: 'X', lines: [{ productId: other.productId, locationId: warehouse, unit: 'bottle', quantity: 1 }] },
      'product_not_found',
      '/lines/0/productId',
    ],
    [
      "another organisation's location",
      { reasonCode: 'X', lines: [{ productId, locationId: other.warehouse, unit: 'bottle', quantity: 1 }] },
      'business_rule',
      '/lines/0/locationId',
    ],
    [
      'zero',
      { reasonCode: 'X', lines: [{ productId, locationId: warehouse, unit: 'bottle', quantity: 0 }] },
      'invalid_field',
      '/lines/0/quantity',
    ],
    [
      'fractional',
      { reasonCode: 'X', lines: [{ productId, locationId: warehouse, unit: 'case', quantity: 1.5 }] },
      'invalid_field',
      '/lines/0/quantity',
    ],
    [
      'both',
      {
        reasonCode: 'X',
        lines: [{ productId, locationId: warehouse, unit: 'bottle', quantity: 1, countedQuantity: 1 }],
      },
      'invalid_field',
      '/lines/0/quantity',
    ],
  ];
  for (const [name, command, code, field] of cases) {
    const error = await t.throwsAsync(
      world.post((tx) => postStockAdjustment(tx, operator, command)),
      { instanceOf: ApiError },
      name,
    );
    t.is(error?.code as string | undefined, code, name);
    t.deepEqual(
      error?.errors?.map((e) => e.field),
      [field],
      name,
    );
  }
  const { count } = await world.db
    .selectFrom('stock_documents')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('organization_id', '=', operator.organization.id)
    .executeTakeFirstOrThrow();
  t.is(Number(count), 0, 'no document was written');
});

test('the ledger is append-only, and the checker finds a level changed behind its back', async (t) => {
  const { operator, productId, warehouse } = await setUp();
  await world.post((tx) =>
    postStockAdjustment(tx, operator, {
      reasonCode: 'OPEN',
      lines: [{ productId, locationId: warehouse, unit: 'bottle', quantity: 5 }],
    }),
  );
  const refused = await t.throwsAsync(
    world.db
      .updateTable('stock_movements')
      .set({ quantity: 6 })
      .where('organization_id', '=', operator.organization.id)
      .execute(),
  );
  t.is((refused as { code?: string }).code, '23001');
  world.tampered(operator.organization.id); // on purpose: the file's closing check leaves this organisation out
  await inTransaction(world.db, (tx) =>
    tx
      .updateTable('stock_levels')
      .set({ quantity: 7 })
      .where('location_id', '=', warehouse)
      .where('product_id', '=', productId)
      .execute(),
  );
  const differences = await auditStock(world.db, operator.organization.id);
  t.deepEqual(
    differences.map((d) => [d.kind, d.expected, d.actual]),
    [
      ['stock_level', '5 from the movements', '7 kept'],
      ['stock_valuation', '7 on hand over all locations', '5 kept'],
    ],
  );
});
