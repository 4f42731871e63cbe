import test from 'ava';
import { registerCodeSystem } from '../../server/platform/access/organizations.js';
import { createCaller, type TestCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';
import { kyselyOver } from '../../server/platform/database/database.js';

const api = useSharedService(test);
const pool = () => api().pool;
let sequence = 0;
const outletCode = () => `UG${String(3_000_000 + ++sequence).padStart(7, '0')}`;
const create = (caller: TestCaller, body: Record<string, unknown>, key = `create-${++sequence}`) =>
  api().request('POST', '/customers', { headers: { ...caller.auth, 'Idempotency-Key': key }, json: body });
const events = async (recordId: string) =>
  (await pool().query('SELECT type FROM events WHERE record_id = $1 ORDER BY created_at, id', [recordId])).rows.map(
    (r) => r.type,
  );
const customerCount = async (organizationId: string) =>
  (await pool().query('SELECT count(*)::int AS n FROM customers WHERE organization_id = $1', [organizationId])).rows[0]
    .n as number;

const personal = {
  phone: '+256 772 123456',
  taxId: '1000234567',
  location: { gps: { latitude: 0.315556, longitude: 32.581111 } },
  contact: { name: 'Grace Nakato', phone: '+256 772 123456', email: 'grace@example.com' },
};

test('POST /customers creates the outlet with defaults and writes customer.created in the same transaction', async (t) => {
  const caller = await createCaller(pool());
  const code = outletCode();
  const res = await create(caller, {
    outletCode: code,
    name: 'Mama Grace Shop',
    channel: 'retail',
    creditLimit: { amount: '500000', currency: 'UGX' },
    externalCodes: { dms: code },
  });
  t.is(res.status, 201);
  t.regex(res.body.id, /^cus_[0-9A-HJKMNP-TV-Z]{26}$/);
  t.like(res.body, {
    outletCode: code,
    status: 'active',
    paymentTermsDays: 0,
    priceGroup: null,
    creditLimit: { amount: '500000', currency: 'UGX' },
    externalCodes: { dms: code },
  });
  t.is(res.body.createdAt, res.body.updatedAt);
  t.deepEqual(await events(res.body.id), ['customer.created']);
  const read = await api().request('GET', `/customers/${res.body.id}`, { headers: caller.auth });
  t.deepEqual(read.body, res.body);
});

test('personal fields are returned only with customers:pii and omitted, not nulled, without it', async (t) => {
  const full = await createCaller(pool());
  const created = await create(full, { outletCode: outletCode(), name: 'Pii Shop', channel: 'kiosk', ...personal });
  t.like(created.body, personal);
  const reader = await createCaller(pool(), { organizationId: full.organizationId, scopes: ['customers:read'] });
  for (const path of [`/customers/${created.body.id}`, '/customers?limit=100']) {
    const res = await api().request('GET', path, { headers: reader.auth });
    const record = res.body.data ? res.body.data.find((c: { id: string }) => c.id === created.body.id) : res.body;
    for (const field of ['phone', 'taxId', 'location', 'contact']) t.false(field in record, `${path} omits ${field}`);
  }
});

test('setting a personal field without customers:pii is 403 insufficient_scope and changes nothing, on POST, PATCH and PUT', async (t) => {
  const writer = await createCaller(pool(), { scopes: ['customers:read', 'customers:write'] });
  for (const [field, value] of Object.entries(personal)) {
    const res = await create(writer, { outletCode: outletCode(), name: 'No Pii', channel: 'retail', [field]: value });
    t.is(res.status, 403, field);
    t.is(res.body.code, 'insufficient_scope');
    t.deepEqual(
      res.body.errors.map((e: { field: string }) => e.field),
      [`/${field}`],
    );
  }
  t.is(await customerCount(writer.organizationId), 0);
  const ok = await create(writer, { outletCode: outletCode(), name: 'No Pii', channel: 'retail' });
  const patch = await api().request('PATCH', `/customers/${ok.body.id}`, {
    headers: writer.auth,
    json: { taxId: '1' },
  });
  t.is(patch.status, 403);
  const put = await api().request('PUT', '/customers/by-code/dms/NOPII-1', {
    headers: writer.auth,
    json: { outletCode: outletCode(), name: 'x', channel: 'retail', location: { gps: null } },
  });
  t.is(put.status, 403);
  t.is(await customerCount(writer.organizationId), 1);
});

/** Gives the organisation a price group: a product and one price in that group. */
async function priceGroup(caller: TestCaller, group: string): Promise<void> {
  const product = await api().request('PUT', '/products/by-code/dms/100001', {
    headers: caller.auth,
    json: { productCode: '100001', name: 'Soda 300ml', packSize: 24, sellingUnits: ['case'] },
  });
  t_ok(product.status, product.text);
  const price = await api().request('PUT', '/prices', {
    headers: caller.auth,
    json: {
      items: [
        {
          productCode: '100001',
          priceGroup: group,
          unit: 'case',
          unitPrice: { amount: '24000', currency: 'UGX' },
          validFrom: '2026-01-01',
        },
      ],
    },
  });
  t_ok(price.status, price.text);
}
function t_ok(status: number, text: string): void {
  if (status >= 300) throw new Error(`set-up failed: ${status} ${text}`);
}

test('a price group without prices is 422 business_rule naming /priceGroup and listing the groups that have prices', async (t) => {
  const caller = await createCaller(pool());
  const none = await create(caller, {
    outletCode: outletCode(),
    name: 'Shop',
    channel: 'retail',
    priceGroup: 'RETAIL-A',
  });
  t.is(none.status, 422);
  t.like(none.body, { code: 'business_rule', errors: [{ field: '/priceGroup', code: 'business_rule' }] });
  t.regex(none.body.errors[0].message, /none yet \(PUT \/prices creates them\)/);
  await priceGroup(caller, 'RETAIL-A');
  const typo = await create(caller, {
    outletCode: outletCode(),
    name: 'Shop',
    channel: 'retail',
    priceGroup: 'RETAIL-Z',
  });
  t.is(typo.status, 422);
  t.is(typo.body.errors[0].message, 'must be one of the price groups with prices: RETAIL-A');
  t.is(await customerCount(caller.organizationId), 0);
  t.is(
    (await create(caller, { outletCode: outletCode(), name: 'Shop', channel: 'retail', priceGroup: 'RETAIL-A' }))
      .status,
    201,
  );
});

test('PATCH changes only the fields given, null clears, and customer.updated is written', async (t) => {
  const caller = await createCaller(pool());
  await priceGroup(caller, 'RETAIL-A');
  const created = await create(caller, {
    outletCode: outletCode(),
    name: 'Before',
    channel: 'retail',
    region: 'Central',
    priceGroup: 'RETAIL-A',
  });
  const res = await api().request('PATCH', `/customers/${created.body.id}`, {
    headers: caller.auth,
    json: { name: 'After', priceGroup: null },
  });
  t.is(res.status, 200);
  t.like(res.body, { name: 'After', priceGroup: null, region: 'Central', channel: 'retail' });
  t.true(res.body.updatedAt > created.body.updatedAt);
  t.deepEqual(await events(created.body.id), ['customer.created', 'customer.updated']);
  const empty = await api().request('PATCH', `/customers/${created.body.id}`, { headers: caller.auth, json: {} });
  t.is(empty.status, 400);
});

test("another organisation's customer is 404 not_found by id, by code and on PATCH", async (t) => {
  const owner = await createCaller(pool());
  const other = await createCaller(pool());
  const code = outletCode();
  const created = await create(owner, {
    outletCode: code,
    name: 'Mine',
    channel: 'retail',
    externalCodes: { dms: code },
  });
  for (const [method, path, json] of [
    ['GET', `/customers/${created.body.id}`],
    ['GET', `/customers/by-code/dms/${code}`],
    ['PATCH', `/customers/${created.body.id}`, { name: 'Theirs' }],
  ] as const) {
    const res = await api().request(method, path, { headers: other.auth, json });
    t.is(res.status, 404, `${method} ${path}`);
    t.is(res.body.code, 'not_found');
  }
  t.is((await api().request('GET', `/customers/${created.body.id}`, { headers: owner.auth })).body.name, 'Mine');
});

test('a duplicate outlet code or external code is 422 business_rule naming the field, and nothing is written', async (t) => {
  const caller = await createCaller(pool());
  const code = outletCode();
  await create(caller, { outletCode: code, name: 'First', channel: 'retail', externalCodes: { dms: 'D-1' } });
  const sameOutlet = await create(caller, { outletCode: code, name: 'Second', channel: 'retail' });
  t.is(sameOutlet.status, 422);
  t.like(sameOutlet.body, { code: 'business_rule', errors: [{ field: '/outletCode', code: 'duplicate_code' }] });
  const sameDmsCode = await create(caller, {
    outletCode: outletCode(),
    name: 'Third',
    channel: 'retail',
    externalCodes: { dms: ' D-1 ' },
  });
  t.is(sameDmsCode.status, 422);
  t.like(sameDmsCode.body, {
    code: 'business_rule',
    errors: [{ field: '/externalCodes/dms', code: 'duplicate_code' }],
  });
  t.is(await customerCount(caller.organizationId), 1, 'the failed creates left no customer behind');
  const unregistered = await create(caller, {
    outletCode: outletCode(),
    name: 'Fourth',
    channel: 'retail',
    externalCodes: { sap: 'S-1' },
  });
  t.is(unregistered.status, 422);
  t.like(unregistered.body, { errors: [{ field: '/externalCodes/sap' }] });
});

test('money is a decimal string in the base currency with its minor units', async (t) => {
  const caller = await createCaller(pool());
  const usd = await create(caller, {
    outletCode: outletCode(),
    name: 'x',
    channel: 'retail',
    creditLimit: { amount: '100', currency: 'USD' },
  });
  t.is(usd.status, 422);
  t.like(usd.body, { code: 'currency_not_supported', errors: [{ field: '/creditLimit/currency' }] });
  const fraction = await create(caller, {
    outletCode: outletCode(),
    name: 'x',
    channel: 'retail',
    creditLimit: { amount: '100.5', currency: 'UGX' },
  });
  t.is(fraction.status, 400);
  t.like(fraction.body, { code: 'invalid_field', errors: [{ field: '/creditLimit/amount' }] });
  const negative = await create(caller, {
    outletCode: outletCode(),
    name: 'x',
    channel: 'retail',
    creditLimit: { amount: '-1', currency: 'UGX' },
  });
  t.is(negative.status, 400);
  const dollars = await createCaller(pool(), { baseCurrency: 'USD' });
  const cents = await create(dollars, {
    outletCode: outletCode(),
    name: 'x',
    channel: 'retail',
    creditLimit: { amount: '1250.5', currency: 'USD' },
  });
  t.is(cents.status, 201);
  t.deepEqual(cents.body.creditLimit, { amount: '1250.50', currency: 'USD' });
});

test('PUT by code creates the first time (201) and updates afterwards (200); a retry with a new Idempotency-Key finds the same record', async (t) => {
  const caller = await createCaller(pool());
  const body = { outletCode: outletCode(), name: 'Upserted', channel: 'wholesale' };
  const first = await api().request('PUT', '/customers/by-code/dms/DMS-100', {
    headers: { ...caller.auth, 'Idempotency-Key': 'put-a' },
    json: body,
  });
  t.is(first.status, 201);
  t.deepEqual(first.body.externalCodes, { dms: 'DMS-100' });
  const retry = await api().request('PUT', '/customers/by-code/dms/DMS-100', {
    headers: { ...caller.auth, 'Idempotency-Key': 'put-b' },
    json: body,
  });
  t.is(retry.status, 200);
  t.is(retry.body.id, first.body.id);
  const partial = await api().request('PUT', '/customers/by-code/dms/%20DMS-100%20', {
    headers: caller.auth,
    json: { name: 'Renamed' },
  });
  t.is(partial.status, 200, 'the code is trimmed and finds the same record');
  t.like(partial.body, { id: first.body.id, name: 'Renamed', channel: 'wholesale' });
  t.deepEqual(await events(first.body.id), ['customer.created', 'customer.updated', 'customer.updated']);
  t.is(await customerCount(caller.organizationId), 1);
});

test('PUT by code that would create without outletCode, name or channel is 400 required_field naming them', async (t) => {
  const caller = await createCaller(pool());
  const res = await api().request('PUT', '/customers/by-code/dms/NEW-1', {
    headers: caller.auth,
    json: { name: 'Only a name' },
  });
  t.is(res.status, 400);
  t.is(res.body.code, 'required_field');
  t.deepEqual(res.body.errors.map((e: { field: string }) => e.field).sort(), ['/channel', '/outletCode']);
});

test('concurrent first PUTs of one code make exactly one customer', async (t) => {
  const caller = await createCaller(pool());
  const body = { outletCode: outletCode(), name: 'Race', channel: 'retail' };
  const answers = await Promise.all(
    Array.from({ length: 10 }, () =>
      api().request('PUT', '/customers/by-code/dms/RACE-1', { headers: caller.auth, json: body }),
    ),
  );
  t.deepEqual(answers.map((a) => a.status).sort(), [200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
  t.is(new Set(answers.map((a) => a.body.id)).size, 1);
  t.is(await customerCount(caller.organizationId), 1);
});

test('codes: over 64 characters after trimming is 400 invalid_field; an unregistered system is 404; a registered partner system works', async (t) => {
  const caller = await createCaller(pool());
  const long = await api().request('GET', `/customers/by-code/dms/${'x'.repeat(65)}`, { headers: caller.auth });
  t.is(long.status, 400);
  t.like(long.body, { code: 'invalid_field', errors: [{ field: '/path/code' }] });
  const padded = await api().request('GET', `/customers/by-code/dms/%20%20${'x'.repeat(64)}%20`, {
    headers: caller.auth,
  });
  t.is(padded.status, 404, 'a 64-character code with spaces around is valid, and simply not there');
  const unknownSystem = await api().request('PUT', '/customers/by-code/sap/S-1', {
    headers: caller.auth,
    json: { outletCode: outletCode(), name: 'x', channel: 'retail' },
  });
  t.is(unknownSystem.status, 404);
  await registerCodeSystem(kyselyOver(pool()), caller.organizationId, 'sap');
  const registered = await api().request('PUT', '/customers/by-code/sap/S-1', {
    headers: caller.auth,
    json: { outletCode: outletCode(), name: 'x', channel: 'retail' },
  });
  t.is(registered.status, 201);
  t.deepEqual(registered.body.externalCodes, { sap: 'S-1' });
  const caseSensitive = await api().request('GET', '/customers/by-code/sap/s-1', { headers: caller.auth });
  t.is(caseSensitive.status, 404, 'codes are case-sensitive');
});

test('GET /customers?externalCode finds the customer by its code in any system', async (t) => {
  const caller = await createCaller(pool());
  const code = outletCode();
  const target = await create(caller, {
    outletCode: code,
    name: 'Target',
    channel: 'retail',
    externalCodes: { dms: 'FIND-ME' },
  });
  await create(caller, {
    outletCode: outletCode(),
    name: 'Other',
    channel: 'retail',
    externalCodes: { dms: 'NOT-ME' },
  });
  const res = await api().request('GET', '/customers?externalCode=FIND-ME', { headers: caller.auth });
  t.deepEqual(
    res.body.data.map((c: { id: string }) => c.id),
    [target.body.id],
  );
});

test('a routeId that is not a route of the organisation is 422 business_rule naming /routeId, and nothing is written', async (t) => {
  const caller = await createCaller(pool());
  const res = await create(caller, {
    outletCode: outletCode(),
    name: 'Lost',
    channel: 'retail',
    routeId: 'rte_missing',
  });
  t.is(res.status, 422);
  t.like(res.body, { code: 'business_rule', errors: [{ field: '/routeId' }] });
  t.is(await customerCount(caller.organizationId), 0);
  await pool().query(
    "INSERT INTO routes (organization_id, id, route_code, name, active) VALUES ($1, 'rte_test_1', 'R99', 'Route 99', true)",
    [caller.organizationId],
  );
  const onRoute = await create(caller, {
    outletCode: outletCode(),
    name: 'Found',
    channel: 'retail',
    routeId: 'rte_test_1',
  });
  t.is(onRoute.status, 201);
  t.is(onRoute.body.routeId, 'rte_test_1');
});
