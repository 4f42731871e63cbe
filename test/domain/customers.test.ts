// Customer rules, proved at the service level: the customers service with an actor, no HTTP.
import test from 'ava';
import { ApiError } from '../../server/platform/errors/api-error.js';
import { importCustomers } from '../../server/modules/customers/import.js';
import { customers } from '../../server/modules/customers/service.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('domain_customers');
});
test.after.always(async () => {
  await world?.close();
});

const outlet = (code: string) => ({ outletCode: code, name: `Shop ${code}`, channel: 'retail' as const });

test('an operator creates a customer with personal fields; an actor without customers:pii is refused them and writes nothing', async (t) => {
  const { organization, operator } = await world.organization();
  const created = await world.post((tx) =>
    customers.create(tx, operator, { ...outlet('OUT-1'), phone: '+256700000001' }),
  );
  t.is(created.phone, '+256700000001');

  const reader = world.keyActor(organization, ['customers:write']);
  const error = await t.throwsAsync(
    world.post((tx) => customers.create(tx, reader, { ...outlet('OUT-2'), phone: '+256700000002' })),
    { instanceOf: ApiError },
  );
  t.is(error?.code, 'insufficient_scope');
  t.deepEqual(
    error?.errors?.map((e) => e.field),
    ['/phone'],
  );
  const listed = await customers.list(world.db, operator, {}, {});
  t.deepEqual(
    listed.rows.map((c) => c.outletCode),
    ['OUT-1'],
    'the refused customer was not written',
  );
});

test('what an actor reads depends on its scopes: without customers:pii the personal fields are left out', async (t) => {
  const { organization, operator } = await world.organization();
  const created = await world.post((tx) =>
    customers.create(tx, operator, { ...outlet('OUT-9'), phone: '+256700000009' }),
  );
  const plain = await customers.get(world.db, world.keyActor(organization, ['customers:read']), created.id);
  t.false('phone' in plain);
  t.is((await customers.get(world.db, operator, created.id)).phone, '+256700000009');
});

test('a route of another organisation is refused as if it did not exist (422 naming /routeId)', async (t) => {
  const { operator } = await world.organization();
  const error = await t.throwsAsync(
    world.post((tx) => customers.create(tx, operator, { ...outlet('OUT-3'), routeId: 'rte_of_someone_else' })),
    { instanceOf: ApiError },
  );
  t.is(error?.code, 'business_rule');
  t.deepEqual(
    error?.errors?.map((e) => e.field),
    ['/routeId'],
  );
});

test("a customer of one organisation is not found by another organisation's actor", async (t) => {
  const first = await world.organization();
  const second = await world.organization();
  const created = await world.post((tx) => customers.create(tx, first.operator, outlet('OUT-4')));
  const error = await t.throwsAsync(customers.get(world.db, second.operator, created.id), { instanceOf: ApiError });
  t.is(error?.code, 'not_found');
});

test('an import creates many customers with their codes and events in a few statements; one bad item refuses the batch, naming it', async (t) => {
  const { operator } = await world.organization();
  const ids = await world.post((tx) =>
    importCustomers(tx, operator, [
      { fields: outlet('IMP-1'), externalCodes: { dms: 'D-1' } },
      { fields: { ...outlet('IMP-2'), phone: '+256700000002' }, externalCodes: { dms: 'D-2' } },
    ]),
  );
  t.is(ids.length, 2);
  t.deepEqual((await customers.getByCode(world.db, operator, 'dms', 'D-2')).id, ids[1]);
  const events = await world.db
    .selectFrom('events')
    .select('record_id')
    .where('organization_id', '=', operator.organization.id)
    .where('type', '=', 'customer.created')
    .execute();
  t.deepEqual(events.map((e) => e.record_id).sort(), [...ids].sort());

  const error = await t.throwsAsync(
    world.post((tx) =>
      importCustomers(tx, operator, [
        { fields: outlet('IMP-3'), externalCodes: {} },
        { fields: { ...outlet('IMP-4'), routeId: 'rte_missing' }, externalCodes: {} },
      ]),
    ),
    { instanceOf: ApiError },
  );
  t.deepEqual(
    error?.errors?.map((e) => e.field),
    ['/1/routeId'],
  );
  t.deepEqual(
    (await customers.list(world.db, operator, {}, {})).rows.map((c) => c.outletCode).sort(),
    ['IMP-1', 'IMP-2'],
    'nothing of the refused batch was written',
  );
});
