// The empties ledger: what a customer holds is the sum of its empties movements and never goes below zero; the
// supplier's receipts and returns move the warehouse's stock too, and only empties; the checker finds a holding
// changed behind the ledger's back; a stock document too large for a webhook keeps the movements that fit.
import test from 'ava';
import {
  adjustCustomerEmpties,
  receiveEmptiesFromSupplier,
  returnEmptiesToSupplier,
} from '../../server/modules/stock/empties.js';
import { auditStock } from '../../server/modules/stock/audit.js';
import { fitMovements } from '../../server/modules/stock/manifest.js';
import { customers } from '../../server/modules/customers/service.js';
import { locations } from '../../server/modules/locations/service.js';
import { products } from '../../server/modules/products/service.js';
import { ApiError } from '../../server/platform/errors/api-error.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('empties');
});
test.after.always(async () => {
  await world?.close();
});

async function setup() {
  const { organization, operator } = await world.organization();
  const crate = await world.post((tx) =>
    products.create(tx, operator, {
      productCode: '300001',
      name: 'Crate 24',
      packSize: 1,
      sellingUnits: ['piece'],
      isEmpty: true,
    }),
  );
  const soda = await world.post((tx) =>
    products.create(tx, operator, { productCode: '300002', name: 'Soda', packSize: 24, sellingUnits: ['case'] }),
  );
  const warehouse = await world.post((tx) => locations.create(tx, operator, { code: 'M01', name: 'Main' }));
  const shop = await world.post((tx) =>
    customers.create(tx, operator, { outletCode: 'UG0000001', name: 'Shop', channel: 'retail' }),
  );
  return { organization, operator, crate: crate.id, soda: soda.id, warehouse: warehouse.id, shop: shop.id };
}

const held = async (organizationId: string, customerId: string) =>
  (
    await world.db
      .selectFrom('customer_empties')
      .select('quantity')
      .where('organization_id', '=', organizationId)
      .where('customer_id', '=', customerId)
      .executeTakeFirst()
  )?.quantity;

test("a customer's holding follows its movements and never goes below zero: taking back more is refused whole", async (t) => {
  const s = await setup();
  await world.post((tx) =>
    adjustCustomerEmpties(tx, s.operator, {
      customerId: s.shop,
      reasonCode: 'OPENING',
      lines: [{ productId: s.crate, quantity: 10 }],
    }),
  );
  await world.post((tx) =>
    adjustCustomerEmpties(tx, s.operator, {
      customerId: s.shop,
      reasonCode: 'COUNT',
      lines: [{ productId: s.crate, quantity: -4 }],
    }),
  );
  t.is(await held(s.organization.id, s.shop), 6);
  const error = await t.throwsAsync(
    world.post((tx) =>
      adjustCustomerEmpties(tx, s.operator, {
        customerId: s.shop,
        reasonCode: 'COUNT',
        lines: [
          { productId: s.crate, quantity: -2 },
          { productId: s.crate, quantity: -5 },
        ],
      }),
    ),
  );
  t.true(error instanceof ApiError);
  t.is((error as ApiError).code, 'business_rule');
  t.deepEqual(
    (error as ApiError).errors?.map((e) => e.field),
    ['/lines/1/quantity'],
  );
  t.is(await held(s.organization.id, s.shop), 6, 'nothing of the refused document was written');
  const documents = await world.db
    .selectFrom('stock_documents')
    .select('number')
    .where('organization_id', '=', s.organization.id)
    .orderBy('number')
    .execute();
  t.deepEqual(
    documents.map((d) => d.number),
    ['ADJ-000001', 'ADJ-000002'],
  );
});

test('only empties come from or go back to the supplier, and a return takes no more than the warehouse holds', async (t) => {
  const s = await setup();
  const notEmpty = await t.throwsAsync(
    world.post((tx) =>
      receiveEmptiesFromSupplier(tx, s.operator, {
        locationId: s.warehouse,
        lines: [{ productId: s.soda, quantity: 5 }],
      }),
    ),
  );
  t.is((notEmpty as ApiError).code, 'business_rule');
  t.deepEqual(
    (notEmpty as ApiError).errors?.map((e) => e.field),
    ['/lines/0/productId'],
  );
  await world.post((tx) =>
    receiveEmptiesFromSupplier(tx, s.operator, {
      locationId: s.warehouse,
      lines: [{ productId: s.crate, quantity: 5, unitCost: '4000' }],
    }),
  );
  const short = await t.throwsAsync(
    world.post((tx) =>
      returnEmptiesToSupplier(tx, s.operator, {
        locationId: s.warehouse,
        lines: [{ productId: s.crate, quantity: 6 }],
      }),
    ),
  );
  t.is((short as ApiError).code, 'insufficient_stock');
  const costOnReturn = await t.throwsAsync(
    world.post((tx) =>
      returnEmptiesToSupplier(tx, s.operator, {
        locationId: s.warehouse,
        lines: [{ productId: s.crate, quantity: 1, unitCost: '1' }],
      }),
    ),
  );
  t.deepEqual(
    (costOnReturn as ApiError).errors?.map((e) => e.field),
    ['/lines/0/unitCost'],
  );
  const returned = await world.post((tx) =>
    returnEmptiesToSupplier(tx, s.operator, { locationId: s.warehouse, lines: [{ productId: s.crate, quantity: 5 }] }),
  );
  t.like(returned.movements[0], {
    fromLocationId: s.warehouse,
    toLocationId: null,
    quantity: 5,
    unitCost: '4000.000000',
  });
  t.deepEqual(await auditStock(world.db, s.organization.id), []);
});

test("the checker recomputes customers' holdings: a holding changed behind the ledger is a difference", async (t) => {
  const s = await setup();
  await world.post((tx) =>
    adjustCustomerEmpties(tx, s.operator, {
      customerId: s.shop,
      reasonCode: 'OPENING',
      lines: [{ productId: s.crate, quantity: 3 }],
    }),
  );
  t.deepEqual(await auditStock(world.db, s.organization.id), []);
  world.tampered(s.organization.id);
  await world.db
    .updateTable('customer_empties')
    .set({ quantity: 9 })
    .where('organization_id', '=', s.organization.id)
    .execute();
  const differences = await auditStock(world.db, s.organization.id);
  t.deepEqual(
    differences.map((d) => [d.kind, d.expected, d.actual]),
    [['customer_empties', '3 from the empties movements', '9 kept']],
  );
});

test('a stock document over the webhook limit keeps the movements that fit and says movementsTruncated; one under it is whole', (t) => {
  const movements = Array.from({ length: 50 }, (_, i) => ({
    id: `smv_${String(i).padStart(26, '0')}`,
    lineNumber: i + 1,
    quantity: 1,
  }));
  const document = { id: 'sdc_x', number: 'TRF-000001', movements };
  const whole = JSON.stringify(document).length;
  t.deepEqual(fitMovements(document, whole), document, 'exactly at the limit: untouched');
  const cut = fitMovements(document, Math.floor(whole / 2));
  t.true(cut.movementsTruncated as boolean);
  const kept = (cut.movements as unknown[]).length;
  t.true(kept > 0 && kept < 50);
  t.true(JSON.stringify(cut).length <= Math.floor(whole / 2), 'the cut object is within the limit');
  t.deepEqual(cut.movements, movements.slice(0, kept), 'the first movements, in order');
  const oneMore = { ...cut, movements: movements.slice(0, kept + 1) };
  t.true(JSON.stringify(oneMore).length > Math.floor(whole / 2), 'as many as fit: one more would not');
});
