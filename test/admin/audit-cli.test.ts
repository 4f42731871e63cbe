// `admin audit --org ORG_ID`, run as an operator runs it: exit 0 when every balance agrees with its ledger, exit 1
// listing each difference when one does not.
import test from 'ava';
import { postStockAdjustment } from '../../server/modules/stock/documents.js';
import { locations } from '../../server/modules/locations/service.js';
import { products } from '../../server/modules/products/service.js';
import { runCli, runCliJson } from '../support/cli.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('audit_cli');
});
test.after.always(async () => {
  await world?.close();
});

test('audit exits 0 on a ledger that agrees with its balances, and 1 listing a level changed behind its back', async (t) => {
  const { organization, operator } = await world.organization();
  const product = await world.post((tx) =>
    products.create(tx, operator, { productCode: '200001', name: 'Water 500ml', packSize: 12, sellingUnits: ['case'] }),
  );
  const warehouse = await world.post((tx) => locations.create(tx, operator, { code: 'M01', name: 'Main' }));
  await world.post((tx) =>
    postStockAdjustment(tx, operator, {
      reasonCode: 'OPEN',
      lines: [{ productId: product.id, locationId: warehouse.id, unit: 'case', quantity: 2 }],
    }),
  );
  const env = { DATABASE_URL: world.database.url };

  const clean = await runCli(['audit', '--org', organization.id], env);
  t.is(clean.code, 0, clean.stderr);
  t.regex(clean.stdout, /no differences/);

  world.tampered(organization.id); // on purpose: the file's closing check leaves this organisation out
  await world.db
    .updateTable('stock_levels')
    .set({ quantity: 23 })
    .where('organization_id', '=', organization.id)
    .execute();
  const json = await runCli(['audit', '--org', organization.id, '--json'], env);
  t.is(json.code, 1);
  const { differences } = JSON.parse(json.stdout) as {
    differences: { kind: string; expected: string; actual: string }[];
  };
  t.deepEqual(
    differences.map((d) => [d.kind, d.expected, d.actual]),
    [
      ['stock_level', '24 from the movements', '23 kept'],
      ['stock_valuation', '23 on hand over all locations', '24 kept'],
    ],
  );
});

test("empties receive and return post one document each with the supplier's empties movements; a return of more than the warehouse holds exits 1 naming the line and posts nothing", async (t) => {
  const { organization, operator } = await world.organization();
  const crate = await world.post((tx) =>
    products.create(tx, operator, {
      productCode: '200002',
      name: 'Crate 24',
      packSize: 1,
      sellingUnits: ['piece'],
      isEmpty: true,
    }),
  );
  const warehouse = await world.post((tx) => locations.create(tx, operator, { code: 'M01', name: 'Main' }));
  const env = { DATABASE_URL: world.database.url };
  const received = await runCliJson(
    ['empties', 'receive', '--org', organization.id, '--location', warehouse.id, '--line', `${crate.id}:40:4500`],
    env,
  );
  t.regex(received.number, /^ERC-0+1$/);
  t.deepEqual(
    received.movements.map((m: { toLocationId: string; quantity: number }) => [m.toLocationId, m.quantity]),
    [[warehouse.id, 40]],
  );
  const tooMany = await runCli(
    ['empties', 'return', '--org', organization.id, '--location', warehouse.id, '--line', `${crate.id}:41`],
    env,
  );
  t.is(tooMany.code, 1);
  t.regex(tooMany.stderr, /more stock than the location holds.*\/lines\/0\/quantity: the location holds 40/);
  const returned = await runCliJson(
    ['empties', 'return', '--org', organization.id, '--location', warehouse.id, '--line', `${crate.id}:15`],
    env,
  );
  t.regex(returned.number, /^ERT-0+1$/);
  const rows = await world.db
    .selectFrom('empties_movements')
    .select(['type', 'direction', 'quantity', 'customer_id'])
    .where('organization_id', '=', organization.id)
    .orderBy('id')
    .execute();
  t.deepEqual(rows, [
    { type: 'received_from_supplier', direction: 'in', quantity: 40, customer_id: null },
    { type: 'returned_to_supplier', direction: 'out', quantity: 15, customer_id: null },
  ]);
  const level = await world.db
    .selectFrom('stock_levels')
    .select('quantity')
    .where('organization_id', '=', organization.id)
    .executeTakeFirstOrThrow();
  t.is(level.quantity, 25);
});
