// `admin audit --org ORG_ID`, run as an operator runs it: exit 0 when every balance agrees with its ledger, exit 1
// listing each difference when one does not.
import test from 'ava';
import { postStockAdjustment } from '../../server/modules/stock/documents.js';
import { locations } from '../../server/modules/locations/service.js';
import { products } from '../../server/modules/products/service.js';
import { runCli } from '../support/cli.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';

let world: DomainWorld;
test.before(async () => { world = await domainWorld('audit_cli'); });
test.after.always(async () => { await world?.close(); });

test('audit exits 0 on a ledger that agrees with its balances, and 1 listing a level changed behind its back', async (t) => {
  const { organization, operator } = await world.organization();
  const product = await world.post((tx) => products.create(tx, operator, { productCode: '200001', name: 'Water 500ml', packSize: 12, sellingUnits: ['case'] }));
  const warehouse = await world.post((tx) => locations.create(tx, operator, { code: 'M01', name: 'Main' }));
  await world.post((tx) => postStockAdjustment(tx, operator, { reasonCode: 'OPEN', lines: [{ productId: product.id, locationId: warehouse.id, unit: 'case', quantity: 2 }] }));
  const env = { DATABASE_URL: world.database.url };

  const clean = await runCli(['audit', '--org', organization.id], env);
  t.is(clean.code, 0, clean.stderr);
  t.regex(clean.stdout, /no differences/);

  world.tampered(organization.id); // on purpose: the file's closing check leaves this organisation out
  await world.db.updateTable('stock_levels').set({ quantity: 23 }).where('organization_id', '=', organization.id).execute();
  const json = await runCli(['audit', '--org', organization.id, '--json'], env);
  t.is(json.code, 1);
  const { differences } = JSON.parse(json.stdout) as { differences: { kind: string; expected: string; actual: string }[] };
  t.deepEqual(differences.map((d) => [d.kind, d.expected, d.actual]), [
    ['stock_level', '24 from the movements', '23 kept'],
    ['stock_valuation', '23 on hand over all locations', '24 kept'],
  ]);
});
