// External codes on existing records: a partner whose outlets existed before the link maps them with PATCH.
import test from 'ava';
import { createCaller, type TestCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';

const api = useSharedService(test);
const pool = () => api().pool;
let sequence = 0;
const outletCode = () => `UG${String(4_000_000 + ++sequence).padStart(7, '0')}`;
const create = async (caller: TestCaller, extra: Record<string, unknown> = {}) => {
  const res = await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': `c-${++sequence}` },
    json: { outletCode: outletCode(), name: 'Shop', channel: 'retail', ...extra },
  });
  if (res.status !== 201) throw new Error(res.text);
  return res.body;
};
const patch = (caller: TestCaller, id: string, json: unknown, contentType = 'application/json') =>
  api().request('PATCH', `/customers/${id}`, {
    headers: { ...caller.auth, 'Content-Type': contentType },
    body: JSON.stringify(json),
  });
const events = async (id: string) =>
  (await pool().query('SELECT type FROM events WHERE record_id = $1 ORDER BY created_at, id', [id])).rows.map(
    (r) => r.type,
  );

test('PATCH adds a code to an existing record, which GET by code then finds, and writes customer.updated', async (t) => {
  const caller = await createCaller(pool());
  const customer = await create(caller);
  const res = await patch(caller, customer.id, { externalCodes: { dms: 'D-0001' } });
  t.is(res.status, 200, res.text);
  t.deepEqual(res.body.externalCodes, { dms: 'D-0001' });
  t.true(res.body.updatedAt > customer.updatedAt);
  const found = await api().request('GET', '/customers/by-code/dms/D-0001', { headers: caller.auth });
  t.is(found.body.id, customer.id);
  t.deepEqual(await events(customer.id), ['customer.created', 'customer.updated']);
});

test('PATCH changes a code, and null removes it; the other codes are kept', async (t) => {
  const caller = await createCaller(pool());
  await pool().query("INSERT INTO code_systems (organization_id, name) VALUES ($1, 'erp2')", [caller.organizationId]);
  const customer = await create(caller, { externalCodes: { dms: 'D-1', erp2: 'E-1' } });
  const changed = await patch(caller, customer.id, { externalCodes: { dms: 'D-2' } });
  t.deepEqual(changed.body.externalCodes, { dms: 'D-2', erp2: 'E-1' });
  t.is((await api().request('GET', '/customers/by-code/dms/D-1', { headers: caller.auth })).status, 404);
  const removed = await patch(caller, customer.id, { externalCodes: { erp2: null } });
  t.deepEqual(removed.body.externalCodes, { dms: 'D-2' });
  const unchanged = await patch(caller, customer.id, { externalCodes: { erp2: null } });
  t.is(unchanged.status, 200);
  t.deepEqual(await events(customer.id), ['customer.created', 'customer.updated', 'customer.updated']);
});

test('a code another record holds is 422 business_rule duplicate_code naming that record, and nothing changes', async (t) => {
  const caller = await createCaller(pool());
  const holder = await create(caller, { externalCodes: { dms: 'TAKEN' } });
  const other = await create(caller);
  const res = await patch(caller, other.id, { name: 'Renamed', externalCodes: { dms: 'TAKEN' } });
  t.is(res.status, 422);
  t.like(res.body, { code: 'business_rule', errors: [{ field: '/externalCodes/dms', code: 'duplicate_code' }] });
  t.true(res.body.errors[0].message.includes(holder.id), res.body.errors[0].message);
  const after = await api().request('GET', `/customers/${other.id}`, { headers: caller.auth });
  t.like(after.body, { name: 'Shop', externalCodes: {} });
});

test('PATCH accepts application/merge-patch+json with the same rules', async (t) => {
  const caller = await createCaller(pool());
  const customer = await create(caller, { region: 'Central' });
  const res = await patch(caller, customer.id, { name: 'Merged', region: null }, 'application/merge-patch+json');
  t.is(res.status, 200, res.text);
  t.like(res.body, { name: 'Merged', region: null });
  const bad = await patch(caller, customer.id, { nmae: 'x' }, 'application/merge-patch+json');
  t.is(bad.status, 400);
  t.is(bad.body.code, 'unknown_field');
});
