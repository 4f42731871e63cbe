import test from 'ava';
import { createCaller, type TestCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';

const api = useSharedService(test);
const pool = () => api().pool;
const putLocation = (
  caller: TestCaller,
  code: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
) => api().request('PUT', `/locations/by-code/dms/${code}`, { headers: { ...caller.auth, ...headers }, json: body });
const putRoute = async (caller: TestCaller, routeCode: string) =>
  (
    await api().request('PUT', `/routes/by-code/dms/${routeCode}`, {
      headers: caller.auth,
      json: { routeCode, name: `Route ${routeCode}` },
    })
  ).body.id as string;
const eventTypes = async (recordId: string) =>
  (await pool().query('SELECT type FROM events WHERE record_id = $1 ORDER BY created_at, id', [recordId])).rows.map(
    (r) => r.type,
  );
const locationRows = async (organizationId: string) =>
  (
    await pool().query(
      'SELECT code, kind, stock_condition, route_id FROM locations WHERE organization_id = $1 ORDER BY code',
      [organizationId],
    )
  ).rows;

test('PUT by code creates the location (201, location.created) with kind and stock condition from its code, then updates it (200)', async (t) => {
  const caller = await createCaller(pool());
  const created = await putLocation(
    caller,
    'M01',
    { code: 'M01', name: 'Main warehouse' },
    { 'Idempotency-Key': 'loc-a' },
  );
  t.is(created.status, 201);
  t.regex(created.body.id, /^loc_[0-9A-HJKMNP-TV-Z]{26}$/);
  t.like(created.body, {
    code: 'M01',
    kind: 'main',
    stockCondition: null,
    name: 'Main warehouse',
    active: true,
    routeId: null,
    externalCodes: { dms: 'M01' },
  });
  const updated = await putLocation(caller, 'M01', { name: 'Main warehouse, Kampala', active: false });
  t.is(updated.status, 200);
  t.like(updated.body, {
    id: created.body.id,
    code: 'M01',
    kind: 'main',
    name: 'Main warehouse, Kampala',
    active: false,
  });
  t.deepEqual(await eventTypes(created.body.id), ['location.created', 'location.updated']);
  const { rows } = await pool().query(
    'SELECT name, active, kind FROM locations WHERE organization_id = $1 AND id = $2',
    [caller.organizationId, created.body.id],
  );
  t.deepEqual(rows, [{ name: 'Main warehouse, Kampala', active: false, kind: 'main' }]);
  t.deepEqual(
    (await api().request('GET', `/locations/${created.body.id}`, { headers: caller.auth })).body,
    updated.body,
  );
});

test('a retry with a new Idempotency-Key finds the same location, and the code in the path is trimmed', async (t) => {
  const caller = await createCaller(pool());
  const body = { code: 'D01', name: 'Damages store' };
  const first = await putLocation(caller, 'D01', body, { 'Idempotency-Key': 'first' });
  const retry = await putLocation(caller, 'D01', body, { 'Idempotency-Key': 'second' });
  t.is(first.status, 201);
  t.is(retry.status, 200);
  t.is(retry.body.id, first.body.id);
  const padded = await api().request('GET', '/locations/by-code/dms/%20D01%20', { headers: caller.auth });
  t.is(padded.status, 200);
  t.is(padded.body.id, first.body.id);
  t.is((await locationRows(caller.organizationId)).length, 1);
});

test('kind and stockCondition follow the code (M, D, V_-G, V_-B) and cannot be written', async (t) => {
  const caller = await createCaller(pool());
  const expected = {
    M9: ['main', null],
    DX2: ['damages', null],
    'V_R01-G': ['van', 'good'],
    'V_R01-B': ['van', 'bad'],
  } as const;
  for (const [code, [kind, stockCondition]] of Object.entries(expected)) {
    const res = await putLocation(caller, code, { code, name: code });
    t.like(res.body, { kind, stockCondition }, code);
  }
  const moved = await putLocation(caller, 'M9', { code: 'D9' });
  t.like(moved.body, { code: 'D9', kind: 'damages' }, 'a new code re-derives the kind');
  const refused = await putLocation(caller, 'M9', { kind: 'van', stockCondition: 'good' });
  t.is(refused.status, 400);
  t.is(refused.body.code, 'unknown_field');
  t.deepEqual(refused.body.errors.map((e: { field: string }) => e.field).sort(), ['/kind', '/stockCondition']);
});

test('a malformed or over-long location code is 400 invalid_field, in the body and in the path', async (t) => {
  const caller = await createCaller(pool());
  for (const code of ['M1234567890', 'X01', 'V_R01', 'V_ABCDEFGHIJK-G', 'm01']) {
    const res = await putLocation(caller, 'NEW-1', { code, name: 'x' });
    t.is(res.status, 400, code);
    t.like(res.body, { code: 'invalid_field', errors: [{ field: '/code' }] }, code);
  }
  const longPath = await putLocation(caller, 'x'.repeat(65), { code: 'M02', name: 'x' });
  t.is(longPath.status, 400);
  t.like(longPath.body, { code: 'invalid_field', errors: [{ field: '/path/code' }] });
  t.deepEqual(await locationRows(caller.organizationId), []);
});

test('a duplicate location code is 422 business_rule duplicate_code naming /code, and nothing is written', async (t) => {
  const caller = await createCaller(pool());
  await putLocation(caller, 'MAIN', { code: 'M03', name: 'First' });
  const res = await putLocation(caller, 'MAIN-2', { code: 'M03', name: 'Second' });
  t.is(res.status, 422);
  t.like(res.body, { code: 'business_rule', errors: [{ field: '/code', code: 'duplicate_code' }] });
  t.is((await locationRows(caller.organizationId)).length, 1);
  t.is(
    (
      await pool().query(
        "SELECT count(*)::int AS n FROM external_codes WHERE organization_id = $1 AND code = 'MAIN-2'",
        [caller.organizationId],
      )
    ).rows[0].n,
    0,
  );
});

test('routeId must be a route of the organisation and only vans may have one: 422 business_rule naming the field, nothing changes', async (t) => {
  const caller = await createCaller(pool());
  const other = await createCaller(pool());
  const foreignRoute = await putRoute(other, 'R77');
  const route = await putRoute(caller, 'R77');
  for (const routeId of ['rte_01JD4R7Q8S6T9V3X5Z7B9D1F3H', foreignRoute]) {
    const res = await putLocation(caller, 'V_R77-G', { code: 'V_R77-G', name: 'Van', routeId });
    t.is(res.status, 422);
    t.like(res.body, { code: 'business_rule', errors: [{ field: '/routeId' }] });
  }
  const warehouse = await putLocation(caller, 'M04', { code: 'M04', name: 'Warehouse', routeId: route });
  t.is(warehouse.status, 422);
  t.like(warehouse.body, { code: 'business_rule', errors: [{ field: '/routeId' }] });
  t.deepEqual(await locationRows(caller.organizationId), []);

  const van = await putLocation(caller, 'V_R77-G', { code: 'V_R77-G', name: 'Van', routeId: route });
  t.is(van.status, 201);
  t.is(van.body.routeId, route);
  const toWarehouse = await putLocation(caller, 'V_R77-G', { code: 'M05' });
  t.is(toWarehouse.status, 422, 'a van with a route cannot become a warehouse while it keeps the route');
  t.like(toWarehouse.body, { code: 'business_rule', errors: [{ field: '/code' }] });
  const cleared = await putLocation(caller, 'V_R77-G', { code: 'M05', routeId: null });
  t.is(cleared.status, 200);
  t.like(cleared.body, { code: 'M05', kind: 'main', routeId: null });
  t.deepEqual(await eventTypes(van.body.id), ['location.created', 'location.updated']);
});

test("another organisation's location is 404 not_found by id and by code", async (t) => {
  const owner = await createCaller(pool());
  const other = await createCaller(pool());
  const created = await putLocation(owner, 'M06', { code: 'M06', name: 'Mine' });
  for (const path of [`/locations/${created.body.id}`, '/locations/by-code/dms/M06']) {
    const res = await api().request('GET', path, { headers: other.auth });
    t.is(res.status, 404, path);
    t.is(res.body.code, 'not_found');
  }
  const put = await putLocation(other, 'M06', { name: 'Theirs' });
  t.is(put.status, 400, 'for the other organisation the code is new, so the PUT would create and needs code');
  t.is((await api().request('GET', `/locations/${created.body.id}`, { headers: owner.auth })).body.name, 'Mine');
});

test('GET /locations filters by kind, active, routeId and externalCode', async (t) => {
  const caller = await createCaller(pool());
  const route = await putRoute(caller, 'R10');
  const main = (await putLocation(caller, 'M10', { code: 'M10', name: 'Main' })).body.id;
  const damages = (await putLocation(caller, 'D10', { code: 'D10', name: 'Damages', active: false })).body.id;
  const good = (await putLocation(caller, 'VAN-G', { code: 'V_R10-G', name: 'Van good', routeId: route })).body.id;
  const bad = (await putLocation(caller, 'VAN-B', { code: 'V_R10-B', name: 'Van bad' })).body.id;
  const ids = async (query: string) =>
    (await api().request('GET', `/locations?${query}`, { headers: caller.auth })).body.data.map(
      (l: { id: string }) => l.id,
    );
  t.deepEqual(await ids('kind=van'), [bad, good]);
  t.deepEqual(await ids('active=false'), [damages]);
  t.deepEqual(await ids('active=true'), [bad, good, main]);
  t.deepEqual(await ids(`routeId=${route}`), [good]);
  t.deepEqual(await ids('externalCode=VAN-B'), [bad]);
  t.deepEqual(await ids('kind=main&active=true'), [main]);
  const bad400 = await api().request('GET', '/locations?kind=shop', { headers: caller.auth });
  t.is(bad400.status, 400);
});

test('with updatedSince the list is a change feed, oldest change first, paged by cursor', async (t) => {
  const caller = await createCaller(pool());
  const since = encodeURIComponent(new Date(Date.now() - 1000).toISOString());
  const a = (await putLocation(caller, 'M20', { code: 'M20', name: 'A' })).body.id;
  const b = (await putLocation(caller, 'M21', { code: 'M21', name: 'B' })).body.id;
  await putLocation(caller, 'M20', { name: 'A changed' });
  const first = await api().request('GET', `/locations?updatedSince=${since}&limit=1`, { headers: caller.auth });
  t.deepEqual(
    first.body.data.map((l: { id: string }) => l.id),
    [b],
  );
  t.true(first.body.hasMore);
  const second = await api().request(
    'GET',
    `/locations?updatedSince=${since}&limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`,
    { headers: caller.auth },
  );
  t.deepEqual(
    second.body.data.map((l: { id: string; name: string }) => [l.id, l.name]),
    [[a, 'A changed']],
  );
  t.false(second.body.hasMore);
});

test('reading needs locations:read and writing locations:write (403 insufficient_scope), and a refused write changes nothing', async (t) => {
  const reader = await createCaller(pool(), { scopes: ['locations:read'] });
  const write = await putLocation(reader, 'M30', { code: 'M30', name: 'x' });
  t.is(write.status, 403);
  t.is(write.body.code, 'insufficient_scope');
  t.deepEqual(await locationRows(reader.organizationId), []);
  const writer = await createCaller(pool(), { scopes: ['locations:write'] });
  t.is((await api().request('GET', '/locations', { headers: writer.auth })).status, 403);
  t.is((await putLocation(writer, 'M30', { code: 'M30', name: 'x' })).status, 201);
});
