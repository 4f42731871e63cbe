import test from 'ava';
import { createCaller, type TestCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';

const api = useSharedService(test);
const pool = () => api().pool;
let outletNumber = 0;
const upsertRoute = (
  caller: TestCaller,
  code: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
) => api().request('PUT', `/routes/by-code/dms/${code}`, { headers: { ...caller.auth, ...headers }, json: body });
const replaceOutlets = (
  caller: TestCaller,
  routeId: string,
  customerIds: string[],
  headers: Record<string, string> = {},
) =>
  api().request('PUT', `/routes/${routeId}/outlets`, {
    headers: { ...caller.auth, ...headers },
    json: { customerIds },
  });
const newOutlet = async (caller: TestCaller): Promise<string> => {
  const outletCode = `UG${String(5_000_000 + ++outletNumber).padStart(7, '0')}`;
  const res = await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': outletCode },
    json: { outletCode, name: outletCode, channel: 'retail' },
  });
  return res.body.id;
};
const recordEvents = async (recordId: string) =>
  (await pool().query('SELECT type FROM events WHERE record_id = $1 ORDER BY created_at, id', [recordId])).rows.map(
    (r) => r.type,
  );
const routeOfCustomers = async (organizationId: string) =>
  Object.fromEntries(
    (await pool().query('SELECT id, route_id FROM customers WHERE organization_id = $1', [organizationId])).rows.map(
      (r) => [r.id, r.route_id],
    ),
  );

test('PUT by code creates the route (201, route.created) with defaults, then updates it (200, route.updated)', async (t) => {
  const caller = await createCaller(pool());
  const created = await upsertRoute(
    caller,
    'R01',
    { routeCode: 'R01', name: 'Kampala Central 1' },
    { 'Idempotency-Key': 'r-1' },
  );
  t.is(created.status, 201);
  t.regex(created.body.id, /^rte_[0-9A-HJKMNP-TV-Z]{26}$/);
  t.like(created.body, {
    routeCode: 'R01',
    name: 'Kampala Central 1',
    salespersonId: null,
    vanLocationId: null,
    active: true,
    externalCodes: { dms: 'R01' },
  });
  const updated = await upsertRoute(caller, 'R01', { active: false });
  t.is(updated.status, 200);
  t.like(updated.body, { id: created.body.id, name: 'Kampala Central 1', active: false });
  t.deepEqual(await recordEvents(created.body.id), ['route.created', 'route.updated']);
  const { rows } = await pool().query('SELECT route_code, active FROM routes WHERE organization_id = $1', [
    caller.organizationId,
  ]);
  t.deepEqual(rows, [{ route_code: 'R01', active: false }]);
});

test('a retry with a new Idempotency-Key finds the same route; the path code is trimmed', async (t) => {
  const caller = await createCaller(pool());
  const body = { routeCode: 'R02', name: 'Retry' };
  const first = await upsertRoute(caller, 'R02', body, { 'Idempotency-Key': 'a' });
  const retry = await upsertRoute(caller, '%20R02%20', body, { 'Idempotency-Key': 'b' });
  t.deepEqual([first.status, retry.status], [201, 200]);
  t.is(retry.body.id, first.body.id);
  t.is(
    (await pool().query('SELECT count(*)::int AS n FROM routes WHERE organization_id = $1', [caller.organizationId]))
      .rows[0].n,
    1,
  );
});

test('an over-long or lower-case route code is 400 invalid_field; a duplicate route code is 422 business_rule duplicate_code', async (t) => {
  const caller = await createCaller(pool());
  for (const routeCode of ['R1234567890', 'r01']) {
    const res = await upsertRoute(caller, 'X', { routeCode, name: 'x' });
    t.is(res.status, 400, routeCode);
    t.like(res.body, { code: 'invalid_field', errors: [{ field: '/routeCode' }] });
  }
  await upsertRoute(caller, 'X', { routeCode: 'R03', name: 'First' });
  const duplicate = await upsertRoute(caller, 'Y', { routeCode: 'R03', name: 'Second' });
  t.is(duplicate.status, 422);
  t.like(duplicate.body, { code: 'business_rule', errors: [{ field: '/routeCode', code: 'duplicate_code' }] });
});

test('salespersonId must be a salesperson and vanLocationId a van of the organisation: 422 business_rule naming the field', async (t) => {
  const caller = await createCaller(pool());
  const other = await createCaller(pool());
  const put = (path: string, json: unknown) => api().request('PUT', path, { headers: caller.auth, json });
  const salesperson = (await put('/salespeople/by-code/dms/S1', { salesmanCode: 'S1', name: 'Sam' })).body.id;
  const van = (await put('/locations/by-code/dms/V_R04-G', { code: 'V_R04-G', name: 'Van' })).body.id;
  const warehouse = (await put('/locations/by-code/dms/M01', { code: 'M01', name: 'Main' })).body.id;
  const foreignVan = (
    await api().request('PUT', '/locations/by-code/dms/V_R04-G', {
      headers: other.auth,
      json: { code: 'V_R04-G', name: 'Van' },
    })
  ).body.id;
  const refusals: [Record<string, unknown>, string][] = [
    [{ salespersonId: 'slp_missing' }, '/salespersonId'],
    [{ vanLocationId: 'loc_missing' }, '/vanLocationId'],
    [{ vanLocationId: foreignVan }, '/vanLocationId'],
    [{ vanLocationId: warehouse }, '/vanLocationId'],
  ];
  for (const [fields, field] of refusals) {
    const res = await upsertRoute(caller, 'R04', { routeCode: 'R04', name: 'Route', ...fields });
    t.is(res.status, 422, JSON.stringify(fields));
    t.like(res.body, { code: 'business_rule', errors: [{ field }] });
  }
  t.is(
    (await pool().query('SELECT count(*)::int AS n FROM routes WHERE organization_id = $1', [caller.organizationId]))
      .rows[0].n,
    0,
  );
  const ok = await upsertRoute(caller, 'R04', {
    routeCode: 'R04',
    name: 'Route',
    salespersonId: salesperson,
    vanLocationId: van,
  });
  t.is(ok.status, 201);
  t.like(ok.body, { salespersonId: salesperson, vanLocationId: van });
  const cleared = await upsertRoute(caller, 'R04', { salespersonId: null, vanLocationId: null });
  t.like(cleared.body, { salespersonId: null, vanLocationId: null });
});

test("another organisation's route is 404 not_found by id, by code and on PUT outlets", async (t) => {
  const owner = await createCaller(pool());
  const other = await createCaller(pool());
  const route = (await upsertRoute(owner, 'R05', { routeCode: 'R05', name: 'Mine' })).body.id;
  for (const path of [`/routes/${route}`, '/routes/by-code/dms/R05']) {
    const res = await api().request('GET', path, { headers: other.auth });
    t.is(res.status, 404, path);
    t.is(res.body.code, 'not_found');
  }
  const outlets = await replaceOutlets(other, route, []);
  t.is(outlets.status, 404);
  t.deepEqual(await recordEvents(route), ['route.created']);
});

test('GET /routes filters by active, salespersonId and externalCode; with updatedSince it is a feed, oldest change first', async (t) => {
  const caller = await createCaller(pool());
  const salesperson = (
    await api().request('PUT', '/salespeople/by-code/dms/S6', {
      headers: caller.auth,
      json: { salesmanCode: 'S6', name: 'Six' },
    })
  ).body.id;
  const since = encodeURIComponent(new Date(Date.now() - 1000).toISOString());
  const a = (await upsertRoute(caller, 'R06', { routeCode: 'R06', name: 'A', salespersonId: salesperson })).body.id;
  const b = (await upsertRoute(caller, 'R07', { routeCode: 'R07', name: 'B', active: false })).body.id;
  await upsertRoute(caller, 'R06', { name: 'A again' });
  const ids = async (query: string) =>
    (await api().request('GET', `/routes?${query}`, { headers: caller.auth })).body.data.map(
      (r: { id: string }) => r.id,
    );
  t.deepEqual(await ids('active=true'), [a]);
  t.deepEqual(await ids('active=false'), [b]);
  t.deepEqual(await ids(`salespersonId=${salesperson}`), [a]);
  t.deepEqual(await ids('externalCode=R07'), [b]);
  t.deepEqual(await ids(''), [b, a]);
  t.deepEqual(await ids(`updatedSince=${since}`), [b, a]);
});

test('PUT /routes/{id}/outlets replaces the outlets: listed customers join (also from another route), unlisted ones leave, with events', async (t) => {
  const caller = await createCaller(pool());
  const route = (await upsertRoute(caller, 'R08', { routeCode: 'R08', name: 'Eight' })).body.id;
  const otherRoute = (await upsertRoute(caller, 'R09', { routeCode: 'R09', name: 'Nine' })).body.id;
  const [stays, leaves, joins, fromOther, untouched] = [
    await newOutlet(caller),
    await newOutlet(caller),
    await newOutlet(caller),
    await newOutlet(caller),
    await newOutlet(caller),
  ];
  t.is((await replaceOutlets(caller, route, [stays, leaves])).status, 200);
  t.is((await replaceOutlets(caller, otherRoute, [fromOther])).status, 200);
  const before = (await pool().query('SELECT id, updated_at FROM customers WHERE id = $1', [stays])).rows[0].updated_at;

  const res = await replaceOutlets(caller, route, [joins, stays, fromOther]);
  t.is(res.status, 200);
  t.deepEqual(res.body.customerIds, [joins, stays, fromOther].sort());
  t.is(res.body.routeId, route);
  t.deepEqual(await routeOfCustomers(caller.organizationId), {
    [stays]: route,
    [leaves]: null,
    [joins]: route,
    [fromOther]: route,
    [untouched]: null,
  });
  t.deepEqual(
    await recordEvents(stays),
    ['customer.created', 'customer.updated'],
    'a customer already on the route gets no new event',
  );
  t.deepEqual(await recordEvents(leaves), ['customer.created', 'customer.updated', 'customer.updated']);
  t.deepEqual(await recordEvents(joins), ['customer.created', 'customer.updated']);
  t.deepEqual(await recordEvents(fromOther), ['customer.created', 'customer.updated', 'customer.updated']);
  t.deepEqual(await recordEvents(untouched), ['customer.created']);
  t.deepEqual(await recordEvents(route), ['route.created', 'route.updated', 'route.updated']);
  t.is(
    (await pool().query('SELECT updated_at FROM customers WHERE id = $1', [stays])).rows[0].updated_at.getTime(),
    before.getTime(),
  );
  const read = await api().request('GET', `/routes/${route}`, { headers: caller.auth });
  t.is(read.body.updatedAt, res.body.updatedAt);
  const customer = await api().request('GET', `/customers/${leaves}`, { headers: caller.auth });
  t.is(customer.body.routeId, null);

  const emptied = await replaceOutlets(caller, route, []);
  t.deepEqual(emptied.body.customerIds, []);
  t.deepEqual(
    Object.values(await routeOfCustomers(caller.organizationId)).filter((r) => r === route),
    [],
  );
});

test('an outlet list with ids that are not customers of the organisation is 422 customer_not_found naming each, and nothing changes', async (t) => {
  const caller = await createCaller(pool());
  const other = await createCaller(pool());
  const route = (await upsertRoute(caller, 'R10', { routeCode: 'R10', name: 'Ten' })).body.id;
  const mine = await newOutlet(caller);
  const onRoute = await newOutlet(caller);
  await replaceOutlets(caller, route, [onRoute]);
  const theirs = await newOutlet(other);
  const res = await replaceOutlets(caller, route, [mine, 'cus_missing', theirs]);
  t.is(res.status, 422);
  t.is(res.body.code, 'customer_not_found');
  t.deepEqual(
    res.body.errors.map((e: { field: string; code: string }) => [e.field, e.code]),
    [
      ['/customerIds/1', 'customer_not_found'],
      ['/customerIds/2', 'customer_not_found'],
    ],
  );
  t.deepEqual(await routeOfCustomers(caller.organizationId), { [mine]: null, [onRoute]: route });
  t.deepEqual(await recordEvents(route), ['route.created', 'route.updated']);
  t.deepEqual(await recordEvents(mine), ['customer.created']);
});

test('PUT outlets validates its body (duplicates, missing list) and replays an Idempotency-Key; an unknown route is 404', async (t) => {
  const caller = await createCaller(pool());
  const route = (await upsertRoute(caller, 'R11', { routeCode: 'R11', name: 'Eleven' })).body.id;
  const outlet = await newOutlet(caller);
  t.is((await replaceOutlets(caller, route, [outlet, outlet])).status, 400);
  const missing = await api().request('PUT', `/routes/${route}/outlets`, { headers: caller.auth, json: {} });
  t.like(missing.body, { code: 'required_field', errors: [{ field: '/customerIds' }] });
  const first = await replaceOutlets(caller, route, [outlet], { 'Idempotency-Key': 'outlets-1' });
  const replay = await replaceOutlets(caller, route, [outlet], { 'Idempotency-Key': 'outlets-1' });
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  t.is(replay.text, first.text);
  t.deepEqual(await recordEvents(route), ['route.created', 'route.updated']);
  const unknown = await replaceOutlets(caller, 'rte_01JD4R7Q8S6T9V3X5Z7B9D1F3H', []);
  t.is(unknown.status, 404);
});

test('routes need routes:read to read and routes:write to write and to replace outlets (403 insufficient_scope)', async (t) => {
  const reader = await createCaller(pool(), { scopes: ['routes:read'] });
  const refused = await upsertRoute(reader, 'R12', { routeCode: 'R12', name: 'x' });
  t.is(refused.status, 403);
  t.is(refused.body.code, 'insufficient_scope');
  const admin = await createCaller(pool(), { organizationId: reader.organizationId });
  const route = (await upsertRoute(admin, 'R12', { routeCode: 'R12', name: 'x' })).body.id;
  t.is((await replaceOutlets(reader, route, [])).status, 403);
  t.deepEqual(await recordEvents(route), ['route.created']);
  const writer = await createCaller(pool(), { scopes: ['routes:write'], organizationId: reader.organizationId });
  t.is((await api().request('GET', `/routes/${route}`, { headers: writer.auth })).status, 403);
});
