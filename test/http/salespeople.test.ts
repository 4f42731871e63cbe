import test from 'ava';
import { createCaller, type TestCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';

const api = useSharedService(test);
const pool = () => api().pool;
const put = (caller: TestCaller, code: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  api().request('PUT', `/salespeople/by-code/dms/${code}`, { headers: { ...caller.auth, ...headers }, json: body });
const routeOf = async (caller: TestCaller, routeCode: string): Promise<string> =>
  (
    await api().request('PUT', `/routes/by-code/dms/${routeCode}`, {
      headers: caller.auth,
      json: { routeCode, name: routeCode },
    })
  ).body.id;
const eventsOf = async (recordId: string) =>
  (
    await pool().query('SELECT type, resource FROM events WHERE record_id = $1 ORDER BY created_at, id', [recordId])
  ).rows.map((r) => `${r.resource}:${r.type}`);
const rowsOf = async (organizationId: string) =>
  (
    await pool().query(
      'SELECT salesman_code, name, phone, route_id, active FROM salespeople WHERE organization_id = $1 ORDER BY salesman_code',
      [organizationId],
    )
  ).rows;

test('PUT by code creates the salesperson (201, salesperson.created) with defaults, then updates only the fields given (200)', async (t) => {
  const caller = await createCaller(pool());
  const route = await routeOf(caller, 'R01');
  const created = await put(
    caller,
    'S014',
    { salesmanCode: 'S014', name: 'Joseph Okello', phone: '+256 772 654321', routeId: route },
    { 'Idempotency-Key': 'slp-1' },
  );
  t.is(created.status, 201);
  t.regex(created.body.id, /^slp_[0-9A-HJKMNP-TV-Z]{26}$/);
  t.like(created.body, {
    salesmanCode: 'S014',
    name: 'Joseph Okello',
    phone: '+256 772 654321',
    userId: null,
    routeId: route,
    active: true,
    externalCodes: { dms: 'S014' },
  });
  const updated = await put(caller, 'S014', { userId: 'jokello', active: false });
  t.is(updated.status, 200);
  t.like(updated.body, {
    id: created.body.id,
    name: 'Joseph Okello',
    phone: '+256 772 654321',
    userId: 'jokello',
    routeId: route,
    active: false,
  });
  t.deepEqual(await eventsOf(created.body.id), ['salesperson:salesperson.created', 'salesperson:salesperson.updated']);
  t.deepEqual(await rowsOf(caller.organizationId), [
    { salesman_code: 'S014', name: 'Joseph Okello', phone: '+256 772 654321', route_id: route, active: false },
  ]);
});

test('a retry with a new Idempotency-Key finds the same salesperson; the path code is trimmed and case-sensitive', async (t) => {
  const caller = await createCaller(pool());
  const body = { salesmanCode: 'S_20', name: 'Retry' };
  const first = await put(caller, 'S-20', body, { 'Idempotency-Key': 'one' });
  const retry = await put(caller, 'S-20', body, { 'Idempotency-Key': 'two' });
  t.deepEqual([first.status, retry.status], [201, 200]);
  t.is(retry.body.id, first.body.id);
  t.is(
    (await api().request('GET', '/salespeople/by-code/dms/%20S-20%20', { headers: caller.auth })).body.id,
    first.body.id,
  );
  t.is((await api().request('GET', '/salespeople/by-code/dms/s-20', { headers: caller.auth })).status, 404);
  t.is((await rowsOf(caller.organizationId)).length, 1);
});

test('a salesman code outside ^[A-Z0-9_-]{1,20}$ is 400 invalid_field; a PUT that creates without name is 400 required_field', async (t) => {
  const caller = await createCaller(pool());
  for (const salesmanCode of ['S'.repeat(21), 's14', 'S 14', '']) {
    const res = await put(caller, 'NEW', { salesmanCode, name: 'x' });
    t.is(res.status, 400, salesmanCode);
    t.like(res.body, { code: 'invalid_field', errors: [{ field: '/salesmanCode' }] });
  }
  const missing = await put(caller, 'NEW', { salesmanCode: 'S99' });
  t.is(missing.status, 400);
  t.like(missing.body, { code: 'required_field', errors: [{ field: '/name' }] });
  t.deepEqual(await rowsOf(caller.organizationId), []);
});

test('a duplicate salesman code is 422 business_rule duplicate_code naming /salesmanCode', async (t) => {
  const caller = await createCaller(pool());
  await put(caller, 'A', { salesmanCode: 'S30', name: 'First' });
  const res = await put(caller, 'B', { salesmanCode: 'S30', name: 'Second' });
  t.is(res.status, 422);
  t.like(res.body, { code: 'business_rule', errors: [{ field: '/salesmanCode', code: 'duplicate_code' }] });
  t.is((await rowsOf(caller.organizationId)).length, 1);
});

test('a routeId that is not a route of the organisation is 422 business_rule naming /routeId, and nothing changes', async (t) => {
  const caller = await createCaller(pool());
  const foreign = await routeOf(await createCaller(pool()), 'R02');
  const created = await put(caller, 'S40', { salesmanCode: 'S40', name: 'No route' });
  for (const routeId of [foreign, 'rte_missing']) {
    const refused = await put(caller, 'S40', { routeId, name: 'Changed' });
    t.is(refused.status, 422);
    t.like(refused.body, { code: 'business_rule', errors: [{ field: '/routeId' }] });
  }
  t.deepEqual(await rowsOf(caller.organizationId), [
    { salesman_code: 'S40', name: 'No route', phone: null, route_id: null, active: true },
  ]);
  t.deepEqual(await eventsOf(created.body.id), ['salesperson:salesperson.created']);
});

test('the phone is returned only with customers:pii (omitted, not null, without it) and writing it without the scope is 403', async (t) => {
  const full = await createCaller(pool());
  const created = await put(full, 'S50', { salesmanCode: 'S50', name: 'Pii', phone: '+256 700 000001' });
  const reader = await createCaller(pool(), {
    organizationId: full.organizationId,
    scopes: ['salespeople:read', 'salespeople:write'],
  });
  for (const path of [`/salespeople/${created.body.id}`, '/salespeople/by-code/dms/S50', '/salespeople']) {
    const res = await api().request('GET', path, { headers: reader.auth });
    const record = res.body.data ? res.body.data[0] : res.body;
    t.false('phone' in record, path);
  }
  const write = await put(reader, 'S50', { phone: '+256 700 000002' });
  t.is(write.status, 403);
  t.like(write.body, { code: 'insufficient_scope', errors: [{ field: '/phone' }] });
  const withoutPhone = await put(reader, 'S50', { name: 'Renamed' });
  t.is(withoutPhone.status, 200);
  t.false('phone' in withoutPhone.body);
  t.is((await rowsOf(full.organizationId))[0].phone, '+256 700 000001');
});

test("another organisation's salesperson is 404 not_found by id and by code", async (t) => {
  const owner = await createCaller(pool());
  const other = await createCaller(pool());
  const created = await put(owner, 'S60', { salesmanCode: 'S60', name: 'Mine' });
  for (const path of [`/salespeople/${created.body.id}`, '/salespeople/by-code/dms/S60']) {
    const res = await api().request('GET', path, { headers: other.auth });
    t.is(res.status, 404, path);
    t.is(res.body.code, 'not_found');
  }
});

test('GET /salespeople filters by active, routeId and externalCode; with updatedSince it is a feed, oldest change first', async (t) => {
  const caller = await createCaller(pool());
  const route = await routeOf(caller, 'R70');
  const since = encodeURIComponent(new Date(Date.now() - 1000).toISOString());
  const a = (await put(caller, 'S70', { salesmanCode: 'S70', name: 'A', routeId: route })).body.id;
  const b = (await put(caller, 'S71', { salesmanCode: 'S71', name: 'B', active: false })).body.id;
  const c = (await put(caller, 'S72', { salesmanCode: 'S72', name: 'C' })).body.id;
  await put(caller, 'S70', { name: 'A again' });
  const ids = async (query: string) =>
    (await api().request('GET', `/salespeople?${query}`, { headers: caller.auth })).body.data.map(
      (s: { id: string }) => s.id,
    );
  t.deepEqual(await ids('active=true'), [c, a]);
  t.deepEqual(await ids('active=false'), [b]);
  t.deepEqual(await ids(`routeId=${route}`), [a]);
  t.deepEqual(await ids('externalCode=S71'), [b]);
  t.deepEqual(await ids(`updatedSince=${since}`), [b, c, a]);
});

test('salespeople need salespeople:read to read and salespeople:write to write (403 insufficient_scope)', async (t) => {
  const reader = await createCaller(pool(), { scopes: ['salespeople:read'] });
  const write = await put(reader, 'S80', { salesmanCode: 'S80', name: 'x' });
  t.is(write.status, 403);
  t.is(write.body.code, 'insufficient_scope');
  t.deepEqual(await rowsOf(reader.organizationId), []);
  const other = await createCaller(pool(), { scopes: ['routes:read'] });
  t.is((await api().request('GET', '/salespeople', { headers: other.auth })).status, 403);
});
