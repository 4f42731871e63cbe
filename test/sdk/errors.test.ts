// Errors as the SDK hands them over: a non-2xx answer rejects with ErpApiError carrying the problem document
// (spec: Errors) and the request id of the response, so a caller's success path always has its data.
import test from 'ava';
import { createErpClient, ErpApiError } from '../../client-sdk/src/index.js';
import { createCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';
import { standIn } from './transport.js';

const api = useSharedService(test);
const pool = () => api().pool;
const baseUrl = () => `${api().baseUrl}/api/v1`;

test('a validation error rejects with ErpApiError: status, code, errors[] naming the field, requestId equal to X-Request-Id', async (t) => {
  const caller = await createCaller(pool());
  const erp = createErpClient({ apiKey: caller.secret, baseUrl: baseUrl() });
  const body = { outletCode: 'UG7000001', name: 'Error Shop', channel: 'retail' as const, bogus: true } as never;
  const error = await t.throwsAsync(erp.POST('/customers', { body }), { instanceOf: ErpApiError });
  t.like(error, { status: 400, code: 'unknown_field', title: 'Unknown field', type: '/api/v1/errors/unknown_field' });
  t.deepEqual(
    error!.errors.map((e) => e.field),
    ['/bogus'],
  );
  t.regex(error!.detail, /\S/);
  t.truthy(error!.requestId);
  t.is(error!.requestId, error!.response.headers.get('X-Request-Id') ?? 'no header');
  t.like(error!.body, { requestId: error!.requestId });
  t.regex(error!.message, new RegExp(`^400 unknown_field: .*\\(request ${error!.requestId}\\)$`));
  t.is(error!.retryAfterSeconds, undefined);
});

test("the caller's own X-Request-Id comes back on the error", async (t) => {
  const caller = await createCaller(pool(), { scopes: ['products:read'] });
  const erp = createErpClient({ apiKey: caller.secret, baseUrl: baseUrl() });
  const error = await t.throwsAsync(erp.GET('/customers', { params: { header: { 'X-Request-Id': 'sdk-scope-1' } } }), {
    instanceOf: ErpApiError,
  });
  t.like(error, { status: 403, code: 'insufficient_scope', requestId: 'sdk-scope-1' });
});

test('a bad key rejects with 401 unauthorized; a resolved call always carries data', async (t) => {
  const erp = createErpClient({ apiKey: 'erp_abc_test_notarealkey', baseUrl: baseUrl() });
  const error = await t.throwsAsync(erp.GET('/me'), { instanceOf: ErpApiError });
  t.like(error, { status: 401, code: 'unauthorized' });
  const caller = await createCaller(pool());
  const { data } = await createErpClient({ apiKey: caller.secret, baseUrl: baseUrl() }).GET('/me');
  t.is(data.organization.id, caller.organizationId);
});

test("an answer that is no problem document (a proxy's HTML page) still rejects with ErpApiError: http_<status>, about:blank", async (t) => {
  const proxy = await standIn((_request, response) =>
    response.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>'),
  );
  t.teardown(() => proxy.close());
  const error = await t.throwsAsync(createErpClient({ baseUrl: proxy.baseUrl, maxRetries: 0 }).GET('/health'), {
    instanceOf: ErpApiError,
  });
  t.like(error, {
    status: 502,
    code: 'http_502',
    type: 'about:blank',
    title: 'Bad Gateway',
    detail: '<h1>Bad gateway</h1>',
    requestId: '',
    errors: [],
  });
});

test("a refusal's reason comes with the error: a 409 invalid_state that clears by itself says posting_under_way", async (t) => {
  const problem = {
    type: '/api/v1/errors/invalid_state',
    title: 'Invalid state',
    status: 409,
    code: 'invalid_state',
    reason: 'posting_under_way',
    detail: 'The accounting posting of INV-000001 is under way.',
    requestId: 'r1',
  };
  const server = await standIn((_request, response) =>
    response.writeHead(409, { 'content-type': 'application/problem+json' }).end(JSON.stringify(problem)),
  );
  t.teardown(() => server.close());
  const error = await t.throwsAsync(createErpClient({ baseUrl: server.baseUrl, maxRetries: 0 }).GET('/health'), {
    instanceOf: ErpApiError,
  });
  t.like(error, { status: 409, code: 'invalid_state', reason: 'posting_under_way' });
  const plain = await createCaller(pool());
  const validation = await t.throwsAsync(
    createErpClient({ apiKey: plain.secret, baseUrl: baseUrl() }).GET('/customers', {
      params: { query: { limit: 0 } },
    }),
    { instanceOf: ErpApiError },
  );
  t.is(validation!.reason, undefined, 'a problem without a reason');
});
