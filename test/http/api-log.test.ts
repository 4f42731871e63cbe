import test from 'ava';
import { LOG_BODY_LIMIT_BYTES } from '../../server/platform/http/api-log.js';
import { personalFieldsOf } from '../../server/platform/personal-fields.js';
import { apiDocument } from '../../server/platform/spec.js';
import { createCaller } from '../support/callers.js';
import { startTestService, useTestService } from '../support/service.js';

const api = useTestService(test, 'api_log');
const pool = () => api().service.database.pool;

async function logOf(organizationId: string) {
  await api().service.apiLog.flush();
  const { rows } = await pool().query('SELECT * FROM api_log WHERE organization_id = $1 ORDER BY time, id', [
    organizationId,
  ]);
  return rows;
}

test('every call with a key is logged with time, key prefix, method, path, status, duration, request id and Idempotency-Key', async (t) => {
  const caller = await createCaller(pool());
  await api().request('GET', '/customers?status=active', { headers: { ...caller.auth, 'X-Request-Id': 'log-read-1' } });
  await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': 'log-key-1', 'X-Request-Id': 'log-write-1' },
    json: { outletCode: 'UG0100001', name: 'Logged', channel: 'retail' },
  });
  await api().request('GET', '/customers/cus_missing', { headers: { ...caller.auth, 'X-Request-Id': 'log-404' } });
  const rows = await logOf(caller.organizationId);
  t.deepEqual(
    rows.map((r) => [r.method, r.path, r.status, r.request_id, r.idempotency_key]),
    [
      ['GET', '/api/v1/customers?status=active', 200, 'log-read-1', null],
      ['POST', '/api/v1/customers', 201, 'log-write-1', 'log-key-1'],
      ['GET', '/api/v1/customers/cus_missing', 404, 'log-404', null],
    ],
  );
  for (const row of rows) {
    t.is(row.key_prefix, caller.prefix);
    t.true(row.duration_ms > 0);
    t.true(row.time instanceof Date);
  }
});

test('the log never holds the key or the Authorization header', async (t) => {
  const caller = await createCaller(pool());
  await api().request('GET', '/me', { headers: caller.auth });
  await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': 'no-secret' },
    json: { outletCode: 'UG0100002', name: 'x', channel: 'retail' },
  });
  const text = JSON.stringify(await logOf(caller.organizationId));
  t.false(text.includes(caller.secret));
  t.false(text.toLowerCase().includes('bearer'));
});

test('sandbox keys keep request and response bodies with personal fields removed', async (t) => {
  const caller = await createCaller(pool());
  const body = {
    outletCode: 'UG0100003',
    name: 'Private Shop',
    channel: 'retail',
    phone: '+256 700 111222',
    taxId: '1009998887',
    location: { gps: { latitude: 0.3, longitude: 32.581234 } },
    contact: { name: 'Secret Person', phone: '+256 700 333444', email: 'secret@example.com' },
  };
  const created = await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': 'pii-log' },
    json: body,
  });
  t.is(created.status, 201);
  t.is(created.body.taxId, '1009998887', 'the caller does see its personal fields');
  const [row] = await logOf(caller.organizationId);
  for (const text of [row.request_body, row.response_body]) {
    t.truthy(text);
    for (const secret of ['+256 700 111222', '1009998887', '32.581234', 'Secret Person', 'secret@example.com'])
      t.false(text.includes(secret), secret);
  }
  t.like(JSON.parse(row.request_body), { outletCode: 'UG0100003', name: 'Private Shop' });
  t.like(JSON.parse(row.response_body), { id: created.body.id, name: 'Private Shop' });
});

test('logged bodies are cut to 16 KB', async (t) => {
  const caller = await createCaller(pool());
  await Promise.all(
    Array.from({ length: 100 }, (_, i) =>
      pool().query(
        "INSERT INTO customers (organization_id, id, outlet_code, name, status, channel) VALUES ($1, $2, $3, $4, 'active', 'retail')",
        [
          caller.organizationId,
          `cus_${String(i).padStart(26, '0')}`,
          `UG${String(200_000 + i).padStart(7, '0')}`,
          'N'.repeat(150),
        ],
      ),
    ),
  );
  const page = await api().request('GET', '/customers?limit=100', { headers: caller.auth });
  t.true(Buffer.byteLength(page.text) > LOG_BODY_LIMIT_BYTES);
  const [row] = await logOf(caller.organizationId);
  t.is(Buffer.byteLength(row.response_body), LOG_BODY_LIMIT_BYTES);
  t.true(
    JSON.stringify(personalFieldsOf(apiDocument).schema('CustomerPage').apply(JSON.parse(page.text))).startsWith(
      row.response_body,
    ),
    'the first 16 KB of the redacted body',
  );
});

test('production keys never have bodies kept, and a graceful stop writes every buffered entry', async (t) => {
  const production = await startTestService('api_log_production', {
    env: {
      ENVIRONMENT: 'production',
      CURSOR_SECRET: 'production-cursor-secret',
      WEBHOOK_SECRET_KEY: 'a'.repeat(64),
      PUBLIC_BASE_URL: 'https://erp.example.com',
    },
  });
  const caller = await createCaller(production.service.database.pool, { environment: 'production' });
  for (let i = 0; i < 20; i += 1) {
    await production.request('POST', '/customers', {
      headers: { ...caller.auth, 'Idempotency-Key': `prod-${i}` },
      json: { outletCode: `UG${String(300_000 + i).padStart(7, '0')}`, name: 'Live', channel: 'retail' },
    });
  }
  const databaseUrl = production.database.url;
  await production.service.stop(); // no explicit flush: the stop must write the buffer
  const pg = await import('pg');
  const client = new pg.default.Client({ connectionString: databaseUrl });
  await client.connect();
  const { rows } = await client.query(
    'SELECT request_body, response_body, status FROM api_log WHERE organization_id = $1',
    [caller.organizationId],
  );
  await client.end();
  await production.database.drop();
  t.is(rows.length, 20, 'no entry lost');
  t.true(rows.every((r) => r.status === 201 && r.request_body === null && r.response_body === null));
});
