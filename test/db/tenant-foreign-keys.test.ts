// Every reference between an organisation's records is a composite foreign key (organization_id, x_id) ->
// (organization_id, id): the database itself refuses a dangling or cross-tenant reference, whatever the code does.
import test from 'ava';
import { sql } from 'kysely';
import { domainWorld, type DomainWorld } from '../support/domain.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('tenant_fks');
});
test.after.always(async () => {
  await world?.close();
});

const FOREIGN_KEY_VIOLATION = '23503';

async function route(organizationId: string, id: string): Promise<void> {
  await world.db
    .insertInto('routes')
    .values({ organization_id: organizationId, id, route_code: id, name: id, active: true })
    .execute();
}

test('a customer cannot name a route of another organisation, nor a route that does not exist', async (t) => {
  const { organization: mine } = await world.organization();
  const { organization: theirs } = await world.organization();
  await route(theirs.id, 'rte_theirs');
  const customer = (id: string, routeId: string) =>
    world.db
      .insertInto('customers')
      .values({
        organization_id: mine.id,
        id,
        outlet_code: id,
        name: id,
        status: 'active',
        channel: 'retail',
        route_id: routeId,
      })
      .execute();
  for (const [id, routeId] of [
    ['cus_cross', 'rte_theirs'],
    ['cus_dangling', 'rte_nowhere'],
  ] as const) {
    const error = await t.throwsAsync(customer(id, routeId));
    t.is((error as { code?: string }).code, FOREIGN_KEY_VIOLATION, `${id} is refused by the database`);
  }
  await route(mine.id, 'rte_mine');
  await t.notThrowsAsync(customer('cus_ok', 'rte_mine'));
});

test('a price cannot name a product of another organisation', async (t) => {
  const { organization: mine } = await world.organization();
  const { organization: theirs } = await world.organization();
  await world.db
    .insertInto('products')
    .values({
      organization_id: theirs.id,
      id: 'prd_theirs',
      product_code: 'P1',
      name: 'Soda',
      status: 'active',
      pack_size: 24,
      selling_units: ['case'],
      tracks_stock: true,
      tax_rate: '18',
      is_empty: false,
    })
    .execute();
  const error = await t.throwsAsync(
    world.db
      .insertInto('prices')
      .values({
        organization_id: mine.id,
        id: 'prc_x',
        product_id: 'prd_theirs',
        price_group: 'RETAIL',
        unit: 'case',
        amount: '1000',
        currency: 'UGX',
        valid_from: '2026-01-01',
      })
      .execute(),
  );
  t.is((error as { code?: string }).code, FOREIGN_KEY_VIOLATION);
});

test('every foreign key between organisation tables leads with organization_id', async (t) => {
  const { rows } = await sql<{ table: string; name: string; columns: string[] }>`
    SELECT c.conrelid::regclass::text AS table, c.conname AS name,
           array(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i) AS columns
      FROM pg_constraint c WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace`.execute(world.db);
  t.true(rows.length >= 20, `found ${rows.length} foreign keys`);
  for (const key of rows)
    t.is(key.columns[0], 'organization_id', `${key.table}.${key.name} leads with organization_id`);
});
