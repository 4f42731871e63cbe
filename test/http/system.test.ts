import test from 'ava';
import { apiDocument, apiDocumentText } from '../../server/platform/spec.js';
import {
  ERROR_CATALOGUE,
  FIELD_REASON_CATALOGUE,
  REFUSAL_REASON_CATALOGUE,
} from '../../server/platform/errors/catalogue.js';
import { useSharedService } from '../support/service.js';

const api = useSharedService(test);

test('GET /health answers without a key with status, the spec version, the environment and a millisecond UTC time', async (t) => {
  const before = Date.now();
  const res = await api().request('GET', '/health');
  const after = Date.now();
  t.is(res.status, 200);
  t.deepEqual(Object.keys(res.body).sort(), ['environment', 'status', 'time', 'version', 'workers']);
  t.is(res.body.status, 'ok');
  t.is(res.body.version, apiDocument.info.version);
  t.is(res.body.environment, 'sandbox');
  t.regex(res.body.time, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  // The service's clock read while the request was in flight (a bound that holds however slow the machine is).
  t.true(
    Date.parse(res.body.time) >= before - 1 && Date.parse(res.body.time) <= after + 1,
    `${res.body.time} within the request`,
  );
  // The test service is role all: it is its own worker, and its heartbeat is under a second old.
  t.is(res.body.workers.alive, 1);
  t.true(Date.now() - Date.parse(res.body.workers.lastHeartbeatAt) < 5_000);
});

test("GET /health reports the configured environment, and GET /me there calls a production key `live` (the key's kind, not the deployment)", async (t) => {
  const { startTestService } = await import('../support/service.js');
  const { createCaller } = await import('../support/callers.js');
  const production = await startTestService('system_production', {
    env: {
      ENVIRONMENT: 'production',
      CURSOR_SECRET: 'a-production-cursor-secret',
      WEBHOOK_SECRET_KEY: 'a'.repeat(64),
      PUBLIC_BASE_URL: 'https://erp.example.com',
    },
  });
  try {
    const res = await production.request('GET', '/health');
    t.is(res.body.environment, 'production');
    const live = await createCaller(production.service.database.pool, { environment: 'production', scopes: [] });
    const me = await production.request('GET', '/me', { headers: live.auth });
    t.is(me.status, 200);
    t.is(me.body.environment, 'live');
  } finally {
    await production.stop();
  }
});

test('without response validation (production), the operations with nothing to validate skip the validator and still refuse what they always refused', async (t) => {
  const { startTestService } = await import('../support/service.js');
  const { createCaller } = await import('../support/callers.js');
  const production = await startTestService('system_unvalidated', { env: { VALIDATE_RESPONSES: 'false' } });
  try {
    const caller = await createCaller(production.service.database.pool, { scopes: ['customers:read'] });
    const health = await production.request('GET', '/health', { headers: { 'X-Request-Id': 'not a usable id!' } });
    t.is(health.status, 200);
    t.is(health.body.status, 'ok');
    t.regex(
      health.headers.get('x-request-id') ?? '',
      /^[0-9A-Z]{26}$/,
      'an unusable caller id is replaced, not refused',
    );
    t.truthy(health.headers.get('ratelimit-remaining'), 'still counted against the address budget');
    t.is((await production.request('GET', '/me', { headers: caller.auth })).status, 200);
    t.is((await production.request('GET', '/errors')).status, 200);
    // A query string goes through the validator: none of these operations takes one.
    for (const [path, headers] of [
      ['/health?verbose=1', {}],
      ['/me?verbose=1', caller.auth],
      ['/errors?status=400', {}],
    ] as const) {
      const res = await production.request('GET', path, { headers });
      t.is(res.status, 400, path);
      t.is(res.body.code, 'unknown_field', path);
      t.deepEqual(
        res.body.errors.map((e: { field: string }) => e.field),
        [`/query/${path.split('?')[1]!.split('=')[0]}`],
        path,
      );
    }
    // A key is still required by /me.
    t.is((await production.request('GET', '/me')).status, 401);
    // A HEAD is not a declared method: it skips nothing, and reaches no handler without the key its GET needs.
    for (const path of ['/me', '/health', '/errors', '/customers']) {
      const head = await fetch(`${production.baseUrl}/api/v1${path}`, { method: 'HEAD' });
      t.true([401, 404].includes(head.status), `HEAD ${path} without a key: ${head.status}`);
      const keyed = await fetch(`${production.baseUrl}/api/v1${path}`, { method: 'HEAD', headers: caller.auth });
      t.true(keyed.status < 500, `HEAD ${path} with a key: ${keyed.status}`);
    }
    t.is(
      (await fetch(`${production.baseUrl}/api/v1/me`, { method: 'HEAD' })).status,
      401,
      'HEAD /me needs the key GET /me needs',
    );
    // An operation with parameters is validated as ever.
    const bad = await production.request('GET', '/customers?limit=0', { headers: caller.auth });
    t.is(bad.status, 400);
    t.is(bad.body.errors[0].field, '/query/limit');
  } finally {
    await production.stop();
  }
});

test('GET /openapi.json returns the bundled OpenAPI 3.1 document without a key', async (t) => {
  const res = await api().request('GET', '/openapi.json');
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^application\/json/);
  t.is(res.text, apiDocumentText);
  t.is(res.body.openapi, '3.1.0');
  t.is(res.body.info.version, apiDocument.info.version);
  t.true(res.body.servers.every((server: { url: string }) => server.url.endsWith('/api/v1')));
});

test('GET /errors lists every code of the catalogue, problem codes and field reasons, ordered by status then code', async (t) => {
  const res = await api().request('GET', '/errors');
  t.is(res.status, 200);
  const codes = res.body.data.map((entry: { code: string }) => entry.code);
  t.deepEqual(
    [...codes].sort(),
    [
      ...Object.keys(ERROR_CATALOGUE),
      ...Object.keys(REFUSAL_REASON_CATALOGUE),
      ...Object.keys(FIELD_REASON_CATALOGUE),
    ].sort(),
  );
  const order = res.body.data.map((e: { status: number; code: string }) => `${e.status}:${e.code}`);
  t.deepEqual(order, [...order].sort());
});

test("a problem document's type resolves to the description of its code", async (t) => {
  const problem = await api().request('GET', '/no-such-thing');
  t.is(problem.body.type, '/api/v1/errors/not_found');
  const described = await fetch(api().baseUrl + problem.body.type);
  t.is(described.status, 200);
  t.like(await described.json(), { code: 'not_found', status: 404, title: 'Not found' });
});

test('GET /errors/{code} is 404 not_found for a code that does not exist', async (t) => {
  const res = await api().request('GET', '/errors/no_such_code');
  t.is(res.status, 404);
  t.is(res.body.code, 'not_found');
});

test('GET /me without a key is 401 unauthorized as a problem document', async (t) => {
  const res = await api().request('GET', '/me');
  t.is(res.status, 401);
  t.regex(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
  t.like(res.body, { status: 401, code: 'unauthorized', type: '/api/v1/errors/unauthorized' });
  t.is(res.body.requestId, res.headers.get('x-request-id'));
});

test("every response carries X-Request-Id, echoing the caller's own when it is 1 to 64 letters, digits, _ or -", async (t) => {
  const own = 'sync-2026_11_22-' + 'a'.repeat(48);
  t.is(own.length, 64);
  const echoed = await api().request('GET', '/health', { headers: { 'X-Request-Id': own } });
  t.is(echoed.headers.get('x-request-id'), own);

  for (const bad of ['a'.repeat(65), 'has space', 'semi;colon', 'ünïcode']) {
    const res = await api().request('GET', '/health', {
      headers: { 'X-Request-Id': encodeURI(bad) === bad ? bad : encodeURIComponent(bad) },
    });
    const id = res.headers.get('x-request-id') ?? '';
    t.not(id, bad);
    t.regex(id, /^[0-9A-HJKMNP-TV-Z]{26}$/, 'replaced by a new ULID');
  }
  const errorResponse = await api().request('GET', '/nowhere', { headers: { 'X-Request-Id': 'trace-404' } });
  t.is(errorResponse.headers.get('x-request-id'), 'trace-404');
  t.is(errorResponse.body.requestId, 'trace-404');
});

test('an unknown path inside or outside /api/v1 is 404 not_found as a problem document, never an HTML page', async (t) => {
  for (const path of [
    '/api/v1/customers-typo',
    '/favicon.ico',
    '/api/v2/health',
    '/index.html',
  ] /* GET / answers its links (root-links.test.ts) */) {
    const res = await fetch(api().baseUrl + path);
    t.is(res.status, 404, path);
    t.regex(res.headers.get('content-type') ?? '', /^application\/problem\+json/, path);
    t.like(await res.json(), { code: 'not_found', status: 404 });
    t.truthy(res.headers.get('x-request-id'));
  }
});

test('a method the path does not have is 404 not_found naming the method and path', async (t) => {
  const res = await fetch(api().baseUrl + '/api/v1/health', { method: 'DELETE' });
  t.is(res.status, 404);
  const body = (await res.json()) as { code: string; detail: string };
  t.is(body.code, 'not_found');
  t.regex(body.detail, /DELETE \/api\/v1\/health/);
});

test('an undeclared query parameter is 400 unknown_field naming /query/<name>', async (t) => {
  const res = await api().request('GET', '/health?verbose=1');
  t.is(res.status, 400);
  t.is(res.body.code, 'unknown_field');
  t.deepEqual(
    res.body.errors.map((e: { field: string }) => e.field),
    ['/query/verbose'],
  );
});

test('an invalid path parameter is 400 invalid_field naming /path/<name>', async (t) => {
  const res = await api().request('GET', '/errors/NOT-A-CODE');
  t.is(res.status, 400);
  t.is(res.body.code, 'invalid_field');
  t.deepEqual(
    res.body.errors.map((e: { field: string }) => e.field),
    ['/path/code'],
  );
});
