// Inputs that passed the spec's checks but used to reach PostgreSQL and fail there as a 500 (found in review).
import test from 'ava';
import { createCaller } from '../support/callers.js';
import { useTestService } from '../support/service.js';

const api = useTestService(test, 'hostile_input');
const pool = () => api().service.database.pool;

test('paths are case-sensitive: /CUSTOMERS is 404 not_found, never a handler without authentication', async (t) => {
  const caller = await createCaller(pool());
  for (const path of ['/CUSTOMERS', '/Me', '/customers/BY-CODE/dms/x']) {
    for (const headers of [{}, caller.auth]) {
      const res = await api().request('GET', path, { headers });
      t.is(res.status, 404, path);
      t.is(res.body.code, 'not_found', path);
    }
  }
});

test('a U+0000 character in a body, query or path value is 400 invalid_field naming it', async (t) => {
  const caller = await createCaller(pool());
  const body = await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': 'nul-1' },
    json: { outletCode: 'UG9000021', name: 'A\u0000B', channel: 'retail' },
  });
  t.like(body.body, { status: 400, code: 'invalid_field', errors: [{ field: '/name' }] });
  const query = await api().request('GET', '/customers?region=a%00b', { headers: caller.auth });
  t.like(query.body, { status: 400, code: 'invalid_field', errors: [{ field: '/query/region' }] });
  const path = await api().request('GET', '/customers/by-code/dms/a%00b', { headers: caller.auth });
  t.like(path.body, { status: 400, code: 'invalid_field', errors: [{ field: '/path/code' }] });
  t.is(
    (await pool().query('SELECT count(*)::int AS n FROM customers WHERE organization_id = $1', [caller.organizationId]))
      .rows[0].n,
    0,
  );
});

test('an amount beyond what is stored (14 digits before the point) is 400 invalid_field, never an overflow', async (t) => {
  const caller = await createCaller(pool());
  const tooLarge = await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': 'big-1' },
    json: {
      outletCode: 'UG9000022',
      name: 'Big',
      channel: 'retail',
      creditLimit: { amount: '999999999999999999', currency: 'UGX' },
    },
  });
  t.like(tooLarge.body, { status: 400, code: 'invalid_field', errors: [{ field: '/creditLimit/amount' }] });
  const justBelow = await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': 'big-2' },
    json: {
      outletCode: 'UG9000023',
      name: 'Big',
      channel: 'retail',
      creditLimit: { amount: '99999999999999', currency: 'UGX' },
    },
  });
  t.is(justBelow.status, 201);
  t.is(justBelow.body.creditLimit.amount, '99999999999999');
});

test('a date-time PostgreSQL cannot hold is 400 invalid_field; an offset is read as the instant it names', async (t) => {
  const caller = await createCaller(pool());
  const yearZero = await api().request('GET', '/customers?updatedSince=0000-01-01T00:00:00Z', { headers: caller.auth });
  t.like(yearZero.body, { status: 400, code: 'invalid_field', errors: [{ field: '/query/updatedSince' }] });
  const farOffset = await api().request(
    'GET',
    `/customers?updatedSince=${encodeURIComponent('2024-01-01T00:00:00+20:00')}`,
    { headers: caller.auth },
  );
  t.is(farOffset.status, 200);
  const prices = await api().request('PUT', '/prices', {
    headers: caller.auth,
    json: {
      items: [
        {
          productCode: '100001',
          priceGroup: 'A',
          unit: 'case',
          unitPrice: { amount: '1000', currency: 'UGX' },
          validFrom: '0000-01-01',
        },
      ],
    },
  });
  t.is(prices.status, 400);
  t.true(prices.body.errors.some((e: { field: string }) => e.field === '/items/0/validFrom'));
});

test('an array where an object belongs lists each problem once', async (t) => {
  const caller = await createCaller(pool());
  const res = await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': 'array-1' },
    json: [],
  });
  t.is(res.status, 400);
  const keys = res.body.errors.map(
    (e: { field: string; code: string; message: string }) => `${e.field}|${e.code}|${e.message}`,
  );
  t.is(new Set(keys).size, keys.length);
});

test('anything shaped like an API key in a sandbox body is redacted before the API log stores it', async (t) => {
  const caller = await createCaller(pool());
  await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': 'leak-1' },
    json: { outletCode: 'UG9000024', name: `Shop ${caller.secret}`, channel: 'retail' },
  });
  await api().service.apiLog.flush();
  const { rows } = await pool().query('SELECT request_body, response_body FROM api_log WHERE organization_id = $1', [
    caller.organizationId,
  ]);
  t.is(rows.length, 1);
  t.false(JSON.stringify(rows).includes(caller.secret));
  t.true(rows[0].request_body.includes('[redacted]'));
});

test('concurrent upserts that reference each other (route and salesperson) never end in a 500', async (t) => {
  const caller = await createCaller(pool());
  const put = (path: string, json: unknown) => api().request('PUT', path, { headers: caller.auth, json });
  const route = await put('/routes/by-code/dms/R01', { routeCode: 'R01', name: 'Route 1' });
  const person = await put('/salespeople/by-code/dms/SM01', { salesmanCode: 'SM01', name: 'Sam' });
  const statuses: number[] = [];
  for (let round = 0; round < 12; round += 1) {
    const answers = await Promise.all([
      put('/routes/by-code/dms/R01', { salespersonId: person.body.id }),
      put('/salespeople/by-code/dms/SM01', { routeId: route.body.id }),
    ]);
    statuses.push(...answers.map((a) => a.status));
  }
  t.deepEqual([...new Set(statuses)], [200]);
});
