// The SDK's retry rules (spec: Idempotency-Key header, last paragraph): retry with the same key after transport
// failures, on 409 idempotency_in_progress, on 429 and on 5xx, honouring Retry-After; never other 4xx; bounded by
// maxRetries and maxRetryTimeMs. Against the real service wherever the rule is about the API; a bare HTTP server
// stands in for a failing deployment (503s, hangs).
import test from 'ava';
import { gzipSync } from 'node:zlib';
import { createErpClient, ErpApiError, ErpConnectionError } from '../../client-sdk/src/index.js';
import { freePort } from '../../scripts/lib/free-port.js';
import { createCaller, type TestCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';
import { countingFetch, lossyProxy, problem, settledWithin, stallBody, standIn, type StandIn } from './transport.js';

const api = useSharedService(test);
const pool = () => api().pool;
const baseUrl = () => `${api().baseUrl}/api/v1`;
const standIns: StandIn[] = [];
test.after.always(async () => {
  await Promise.all(standIns.map((s) => s.close()));
});
const failingDeployment = async (answer: Parameters<typeof standIn>[0]) => {
  const started = await standIn(answer);
  standIns.push(started);
  return started;
};

let sequence = 0;
const customer = () => ({
  outletCode: `UG${String(6_000_000 + ++sequence).padStart(7, '0')}`,
  name: 'Retry Shop',
  channel: 'retail' as const,
});
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function customersOf(caller: TestCaller): Promise<string[]> {
  const res = await api().request('GET', '/customers?limit=100', { headers: caller.auth });
  return res.body.data.map((c: { id: string }) => c.id);
}

test('a create whose answer is lost is retried with the same Idempotency-Key and the organisation ends with exactly one record', async (t) => {
  const caller = await createCaller(pool());
  const proxy = await lossyProxy(api().baseUrl);
  t.teardown(() => proxy.close());
  const { fetch, attempts } = countingFetch();
  const erp = createErpClient({ apiKey: caller.secret, baseUrl: `${proxy.url}/api/v1`, fetch });

  const { data, response } = await erp.POST('/customers', { body: customer() });

  t.is(proxy.connections(), 2, 'the first connection lost its answer; the retry went through');
  t.is(attempts.length, 2);
  t.is(attempts[0]!.outcome, 'TypeError', 'the first attempt failed in transport (fetch failed)');
  t.regex(attempts[0]!.idempotencyKey ?? '', UUID, 'the SDK made a key for the create');
  t.is(attempts[1]!.idempotencyKey, attempts[0]!.idempotencyKey, 'the retry carries the same key');
  t.is(attempts[1]!.body, attempts[0]!.body, 'the body is sent whole again');
  t.is(response.headers.get('Idempotent-Replayed'), 'true', 'the service answered the retry with the first result');
  t.deepEqual(await customersOf(caller), [data.id]);
});

test('a create with its own Idempotency-Key sends that key, and calling again with it replays the first result', async (t) => {
  const caller = await createCaller(pool());
  const { fetch, attempts } = countingFetch();
  const erp = createErpClient({ apiKey: caller.secret, baseUrl: baseUrl(), fetch });
  const body = customer();
  const first = await erp.POST('/customers', { body, headers: { 'Idempotency-Key': 'mine-1' } });
  const again = await erp.POST('/customers', { body, headers: { 'Idempotency-Key': 'mine-1' } });
  t.deepEqual(
    attempts.map((a) => a.idempotencyKey),
    ['mine-1', 'mine-1'],
  );
  t.is(again.data.id, first.data.id);
  t.is(again.response.headers.get('Idempotent-Replayed'), 'true');

  // Each call without a key gets its own, on PATCH too; reads carry none.
  await erp.PATCH('/customers/{id}', { params: { path: { id: first.data.id } }, body: { name: 'Renamed Shop' } });
  await erp.GET('/customers/{id}', { params: { path: { id: first.data.id } } });
  await erp.POST('/customers', { body: customer() });
  const [, , patch, read, create] = attempts;
  t.regex(patch!.idempotencyKey ?? '', UUID);
  t.is(read!.idempotencyKey, null);
  t.regex(create!.idempotencyKey ?? '', UUID);
  t.not(create!.idempotencyKey, patch!.idempotencyKey);
  t.is((await customersOf(caller)).length, 2);
});

test('409 idempotency_in_progress is retried after Retry-After with the same key, and the create then runs once', async (t) => {
  const caller = await createCaller(pool());
  // Holding the service's own advisory lock for this key makes the create look "still running" to the service.
  const key = 'in-progress-1';
  const lockName = `${caller.organizationId}:${caller.keyId}:${key}`;
  const lock = await pool().connect();
  t.teardown(() => lock.release());
  await lock.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [lockName]);
  const { fetch, attempts } = countingFetch(async (response) => {
    if (response.status === 409) await lock.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [lockName]);
  });
  const erp = createErpClient({ apiKey: caller.secret, baseUrl: baseUrl(), fetch });

  const { data } = await erp.POST('/customers', { body: customer(), headers: { 'Idempotency-Key': key } });

  t.deepEqual(
    attempts.map((a) => a.outcome),
    [409, 201],
  );
  t.deepEqual(
    attempts.map((a) => a.idempotencyKey),
    [key, key],
  );
  t.true(attempts[1]!.at - attempts[0]!.at >= 1000, 'the retry waited for Retry-After: 1');
  t.deepEqual(await customersOf(caller), [data.id]);
});

test('429 rate_limited is retried after Retry-After and the call then succeeds', async (t) => {
  // One read every 2 s: the second read in a row is refused with Retry-After: 2.
  const caller = await createCaller(pool(), { rateLimits: { read: { perMinute: 30, burst: 1 } } });
  const { fetch, attempts } = countingFetch();
  const erp = createErpClient({ apiKey: caller.secret, baseUrl: baseUrl(), fetch });
  await erp.GET('/customers');
  const { data } = await erp.GET('/customers');
  t.deepEqual(data.data, []);
  t.deepEqual(
    attempts.map((a) => a.outcome),
    [200, 429, 200],
  );
  t.true(
    attempts[2]!.at - attempts[1]!.at >= 1000,
    'the retry waited for Retry-After (at least the 1 s left of the 2)',
  );
});

test('a Retry-After longer than maxRetryTimeMs is not waited for: the 429 surfaces as ErpApiError at once', async (t) => {
  const caller = await createCaller(pool(), { rateLimits: { read: { perMinute: 1, burst: 1 } } });
  const { fetch, attempts } = countingFetch();
  const erp = createErpClient({ apiKey: caller.secret, baseUrl: baseUrl(), fetch, maxRetryTimeMs: 5_000 });
  await erp.GET('/customers');
  const error = await t.throwsAsync(erp.GET('/customers'), { instanceOf: ErpApiError });
  t.like(error, { status: 429, code: 'rate_limited' });
  t.true(error!.retryAfterSeconds! > 5, `Retry-After ${error!.retryAfterSeconds} s is past the budget`);
  t.is(attempts.length, 2, 'one attempt for the first read, one for the limited one');
});

test('400, 404 and 422 answers are final: one attempt each, rejected with ErpApiError', async (t) => {
  const caller = await createCaller(pool());
  const { fetch, attempts } = countingFetch();
  const erp = createErpClient({ apiKey: caller.secret, baseUrl: baseUrl(), fetch });
  const taken = customer();
  await erp.POST('/customers', { body: taken });
  attempts.length = 0;

  const invalid = await t.throwsAsync(
    erp.POST('/customers', { body: { ...customer(), channel: 'spaceship' as 'retail' } }),
    { instanceOf: ErpApiError },
  );
  const missing = await t.throwsAsync(
    erp.GET('/customers/{id}', { params: { path: { id: 'cus_01JD4R7Q8S6T9V3X5Z7B9D1F3H' } } }),
    { instanceOf: ErpApiError },
  );
  const duplicate = await t.throwsAsync(
    erp.POST('/customers', { body: { ...customer(), outletCode: taken.outletCode } }),
    { instanceOf: ErpApiError },
  );

  t.deepEqual([invalid!.status, missing!.status, duplicate!.status], [400, 404, 422]);
  t.deepEqual([invalid!.code, missing!.code, duplicate!.code], ['invalid_field', 'not_found', 'business_rule']);
  t.is(attempts.length, 3, 'no retries');
});

test('5xx answers are retried maxRetries times (3 by default), then the last one surfaces as ErpApiError', async (t) => {
  const deployment = await failingDeployment((_request, response) =>
    problem(response, 503, 'server_error', { 'Retry-After': '0' }),
  );
  const byDefault = createErpClient({ baseUrl: deployment.baseUrl });
  const error = await t.throwsAsync(byDefault.GET('/health'), { instanceOf: ErpApiError });
  t.like(error, { status: 503, code: 'server_error', requestId: 'standin-server_error' });
  t.is(deployment.requests.length, 4, 'one attempt and 3 retries');

  const { fetch, attempts } = countingFetch();
  await t.throwsAsync(createErpClient({ baseUrl: deployment.baseUrl, fetch, maxRetries: 1 }).GET('/health'), {
    instanceOf: ErpApiError,
  });
  t.is(attempts.length, 2);
  await t.throwsAsync(createErpClient({ baseUrl: deployment.baseUrl, fetch, maxRetries: 0 }).GET('/health'), {
    instanceOf: ErpApiError,
  });
  t.is(attempts.length, 3);
});

test('maxRetryTimeMs bounds the retries: no retry is made whose wait would pass the budget (Retry-After in seconds or as an HTTP date)', async (t) => {
  // Any budget under 4 s fits exactly one 2 s wait (the second would end at 4 s or later, however fast the
  // attempts); 3.95 s leaves the first attempt nearly two seconds of slack on a loaded machine (1 s did not suffice).
  const inSeconds = await failingDeployment((_request, response) =>
    problem(response, 503, 'server_error', { 'Retry-After': '2' }),
  );
  await t.throwsAsync(
    createErpClient({ baseUrl: inSeconds.baseUrl, maxRetries: 10, maxRetryTimeMs: 3_950 }).GET('/health'),
    { instanceOf: ErpApiError },
  );
  t.is(inSeconds.requests.length, 2, 'the first wait (2 s) fits the 3.95 s budget, the second does not');

  const asDate = await failingDeployment((_request, response) =>
    problem(response, 503, 'server_error', { 'Retry-After': new Date(Date.now() + 5_000).toUTCString() }),
  );
  const error = await t.throwsAsync(
    createErpClient({ baseUrl: asDate.baseUrl, maxRetries: 10, maxRetryTimeMs: 3_000 }).GET('/health'),
    { instanceOf: ErpApiError },
  );
  t.is(asDate.requests.length, 1, 'an HTTP date 4-5 s ahead is past the 3 s budget');
  t.true(
    error!.retryAfterSeconds! >= 4 && error!.retryAfterSeconds! <= 5,
    `retryAfterSeconds ${error!.retryAfterSeconds}`,
  );
});

test('a 409 other than idempotency_in_progress is final', async (t) => {
  const deployment = await failingDeployment((_request, response) => problem(response, 409, 'invalid_state'));
  const error = await t.throwsAsync(
    createErpClient({ baseUrl: deployment.baseUrl }).POST('/customers', { body: customer() }),
    { instanceOf: ErpApiError },
  );
  t.is(error!.code, 'invalid_state');
  t.is(deployment.requests.length, 1);
});

test('an attempt without an answer within timeoutMs is retried, and after the last one the call rejects with ErpConnectionError', async (t) => {
  const silent = await failingDeployment(() => {}); // takes the request and never answers
  const error = await t.throwsAsync(
    createErpClient({ baseUrl: silent.baseUrl, timeoutMs: 1_000, maxRetries: 1 }).POST('/customers', {
      body: customer(),
    }),
    { instanceOf: ErpConnectionError },
  );
  t.is(error!.attempts, 2);
  t.is((error!.cause as Error).name, 'TimeoutError');
  t.is(silent.requests.length, 2);
  t.is(silent.requests[1]!.headers['idempotency-key'], silent.requests[0]!.headers['idempotency-key']);
});

test('maxRetryTimeMs bounds the attempts too: the last attempt gets only what is left of the budget, not a whole timeoutMs', async (t) => {
  // A 503 at once, then silence: the retry starts with ~1.5 s of budget left and a 5 s timeoutMs.
  const deployment = await failingDeployment((_request, response, index) => {
    if (index === 0) problem(response, 503, 'server_error', { 'Retry-After': '0' });
  });
  const started = Date.now();
  const outcome = await settledWithin(
    createErpClient({ baseUrl: deployment.baseUrl, timeoutMs: 5_000, maxRetryTimeMs: 1_500, maxRetries: 10 }).GET(
      '/health',
    ),
    10_000,
  );
  const elapsed = Date.now() - started;
  if (outcome === 'pending' || !('error' in outcome))
    return t.fail(`the call did not reject: ${JSON.stringify(outcome)}`);
  t.true(outcome.error instanceof ErpConnectionError);
  const error = outcome.error as ErpConnectionError;
  t.is(error.attempts, 2, 'the retry was made, and none after it: the budget was spent');
  t.is((error.cause as Error).name, 'TimeoutError');
  t.regex((error.cause as Error).message, /budget/, 'the retry was cut off by the budget, not by timeoutMs');
  // Generous bound: the budget is 1.5 s; with a whole timeoutMs for the retry the call would take over 5 s.
  t.true(elapsed < 3_500, `the call took ${elapsed} ms`);
});

test('a body that stalls after the headers counts against timeoutMs: the attempt is retried with the same key, then the call rejects with ErpConnectionError', async (t) => {
  const stalling = await failingDeployment((_request, response) => stallBody(response));
  const call = createErpClient({ baseUrl: stalling.baseUrl, timeoutMs: 1_000, maxRetries: 1 }).POST('/customers', {
    body: customer(),
  });
  // Two attempts of 1 s and a backoff under 0.5 s; a body read left outside the timeout would hang for ever.
  const outcome = await settledWithin(call, 10_000);
  if (outcome === 'pending' || !('error' in outcome))
    return t.fail(`the call did not reject: ${JSON.stringify(outcome)}`);
  t.true(outcome.error instanceof ErpConnectionError, String(outcome.error));
  const error = outcome.error as ErpConnectionError;
  t.is(error.attempts, 2);
  t.is((error.cause as Error).name, 'TimeoutError');
  t.is(stalling.requests.length, 2);
  t.is(stalling.requests[1]!.headers['idempotency-key'], stalling.requests[0]!.headers['idempotency-key']);
});

test("the caller's abort while the body is still coming ends the call at once, without retries", async (t) => {
  const controller = new AbortController();
  const stalling = await failingDeployment((_request, response) => stallBody(response));
  // Aborted once the headers are in the client's hands, while it waits for the rest of the body.
  const { fetch } = countingFetch(() => {
    setTimeout(() => controller.abort(), 50);
  });
  const call = createErpClient({ baseUrl: stalling.baseUrl, fetch, timeoutMs: 60_000 }).GET('/health', {
    signal: controller.signal,
  });
  const outcome = await settledWithin(call, 10_000);
  if (outcome === 'pending' || !('error' in outcome))
    return t.fail(`the call did not reject well before the 60 s timeout: ${JSON.stringify(outcome)}`);
  t.is((outcome.error as Error).name, 'AbortError');
  t.is(stalling.requests.length, 1);
});

test('retry options that would silently misbehave (NaN, negative, a fraction of a retry) are refused with TypeError', (t) => {
  for (const options of [
    { timeoutMs: Number.NaN },
    { timeoutMs: 0 },
    { maxRetryTimeMs: -1 },
    { maxRetries: 1.5 },
    { maxRetries: -1 },
  ]) {
    t.throws(
      () => createErpClient({ baseUrl: 'http://127.0.0.1:9/api/v1', ...options }),
      { instanceOf: TypeError },
      JSON.stringify(options),
    );
  }
});

test('a refused connection is retried, then rejects with ErpConnectionError carrying the attempts and the cause', async (t) => {
  const closedPort = await freePort();
  const { fetch, attempts } = countingFetch();
  const erp = createErpClient({ baseUrl: `http://127.0.0.1:${closedPort}/api/v1`, fetch, maxRetries: 2 });
  const error = await t.throwsAsync(erp.GET('/health'), { instanceOf: ErpConnectionError });
  t.is(error!.attempts, 3);
  t.is(attempts.length, 3);
  t.regex(error!.message, /ECONNREFUSED/);
});

test("the caller's abort ends the call at once, without retries", async (t) => {
  const controller = new AbortController();
  const silent = await failingDeployment(() => controller.abort()); // aborted once the request has arrived
  const call = createErpClient({ baseUrl: silent.baseUrl }).GET('/health', { signal: controller.signal });
  const error = await t.throwsAsync(call, { any: true });
  t.is((error as Error).name, 'AbortError');
  t.is(silent.requests.length, 1);
});

test('a gzipped answer is handed on decoded, without Content-Encoding and with the Content-Length of the decoded bytes', async (t) => {
  const body = JSON.stringify({ status: 'ok', padding: 'x'.repeat(1_000) });
  const zipped = gzipSync(body);
  const deployment = await failingDeployment((_request, response) => {
    response
      .writeHead(200, {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'content-length': String(zipped.length),
      })
      .end(zipped);
  });
  const { data, response } = await createErpClient({ baseUrl: deployment.baseUrl }).GET('/health');
  t.deepEqual(data as unknown, JSON.parse(body));
  t.true(zipped.length < Buffer.byteLength(body));
  t.is(response.headers.get('content-encoding'), null, 'the bytes are no longer gzip');
  t.is(
    response.headers.get('content-length'),
    String(Buffer.byteLength(body)),
    'the length of the decoded bytes, not of the gzip',
  );
  t.is(response.headers.get('content-type'), 'application/json', 'the other headers stay');
});

test('a content coding fetch does not decode is left as sent: the header stays, and Content-Length is the length of the bytes as sent', async (t) => {
  const body = JSON.stringify({ status: 'ok' });
  const deployment = await failingDeployment((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'x-unknown' }).end(body);
  });
  const { data, response } = await createErpClient({ baseUrl: deployment.baseUrl }).GET('/health');
  t.deepEqual(data as unknown, JSON.parse(body));
  t.is(response.headers.get('content-encoding'), 'x-unknown');
  t.is(response.headers.get('content-length'), String(Buffer.byteLength(body)));
});
