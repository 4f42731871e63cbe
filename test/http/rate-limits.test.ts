// Rate limits: a token bucket per key and class, in Postgres, announced in RateLimit-* headers and enforced with
// 429 rate_limited and Retry-After; every process on one database draws on one budget.
import test from 'ava';
import { pino } from 'pino';
import { apiContract } from '../support/api-contract.js';
import { API_BASE_PATH } from '../../server/platform/spec.js';
import { startService } from '../../server/composition/service.js';
import { createCaller } from '../support/callers.js';
import { useTestService, type ApiResponse } from '../support/service.js';

const api = useTestService(test, 'rate_limits');
const pool = () => api().service.database.pool;
const contract = apiContract;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A request to another process's base URL, checked against the contract like api().request. */
async function requestAt(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<ApiResponse> {
  const response = await fetch(baseUrl + API_BASE_PATH + path, { method, headers });
  const text = await response.text();
  const violations = contract.check({
    method,
    path: path.split('?')[0]!,
    status: response.status,
    headers: response.headers,
    bodyText: text,
  });
  if (violations.length > 0)
    throw new Error(`Contract violation:\n  ${violations.join('\n  ')}\nBody: ${text.slice(0, 2000)}`);
  return { status: response.status, headers: response.headers, text, body: JSON.parse(text) };
}

const rateHeaders = (res: ApiResponse) => ({
  limit: res.headers.get('ratelimit-limit'),
  remaining: res.headers.get('ratelimit-remaining'),
  reset: res.headers.get('ratelimit-reset'),
});

async function bucket(apiKeyId: string, rateClass: string): Promise<{ tokens: number } | undefined> {
  const { rows } = await pool().query<{ tokens: number }>(
    'SELECT tokens FROM rate_limit_buckets WHERE api_key_id = $1 AND class = $2',
    [apiKeyId, rateClass],
  );
  return rows[0];
}

let outlet = 0;
const customerBody = () => ({
  outletCode: `UG${String(2_000_000 + ++outlet).padStart(7, '0')}`,
  name: 'Mama Grace Shop',
  channel: 'retail',
});

test('responses to a valid key carry RateLimit-Limit, -Remaining and -Reset, Remaining counts down, and a 401 carries none', async (t) => {
  const standard = await createCaller(pool());
  const first = await api().request('GET', '/customers', { headers: standard.auth });
  t.is(first.status, 200);
  t.deepEqual(
    rateHeaders(first),
    { limit: '100', remaining: '99', reset: '1' },
    'the default read budget: burst 100 at 600 a minute',
  );

  // A slow refill (6 a minute: one token in 10 s) makes the countdown exact.
  const slow = await createCaller(pool(), { rateLimits: { read: { perMinute: 6, burst: 10 } } });
  const seen = [];
  for (let i = 0; i < 3; i++) {
    const res = await api().request('GET', '/customers', { headers: slow.auth });
    t.is(res.status, 200);
    seen.push(rateHeaders(res));
  }
  t.deepEqual(
    seen.map((h) => h.limit),
    ['10', '10', '10'],
  );
  t.deepEqual(
    seen.map((h) => h.remaining),
    ['9', '8', '7'],
  );
  const resets = seen.map((h) => Number(h.reset));
  t.true(resets.every(Number.isInteger), `integers: ${resets.join(', ')}`);
  t.deepEqual(resets, [10, 20, 30], 'ten seconds a token to refill');
  const stored = await bucket(slow.keyId, 'read');
  t.true(stored!.tokens >= 7 && stored!.tokens < 7.1, `the bucket row holds ${stored!.tokens}`);

  const unauthenticated = await api().request('GET', '/customers');
  t.is(unauthenticated.status, 401);
  t.deepEqual(rateHeaders(unauthenticated), { limit: null, remaining: null, reset: null });
  const wrongKey = await api().request('GET', '/customers', {
    headers: { Authorization: `Bearer ${standard.secret.slice(0, -1)}${standard.secret.endsWith('A') ? 'B' : 'A'}` },
  });
  t.is(wrongKey.status, 401);
  t.deepEqual(rateHeaders(wrongKey), { limit: null, remaining: null, reset: null });
  t.is(
    (await bucket(standard.keyId, 'read'))!.tokens,
    99,
    'the one good read took a token, the 401s (same key prefix) none',
  );
});

// Timing-sensitive tests run serially, before the others.
test.serial(
  'when the read budget is spent the next read is 429 rate_limited with Retry-After, and writes draw on their own budget',
  async (t) => {
    // 6 a minute refills one token in 10 s: the four reads fit in that window even on a loaded machine (at 60 a minute
    // a slow second read let a token come back and the fourth read passed).
    const caller = await createCaller(pool(), { rateLimits: { read: { perMinute: 6, burst: 3 } } });
    for (let i = 0; i < 3; i++) {
      const res = await api().request('GET', '/customers', { headers: caller.auth });
      t.is(res.status, 200, `read ${i + 1}`);
    }
    const limited = await api().request('GET', '/customers', { headers: caller.auth });
    t.is(limited.status, 429);
    t.is(limited.body.code, 'rate_limited');
    t.is(limited.body.status, 429);
    t.regex(limited.body.detail, /read budget of this key \(6 per minute, burst 3\)/);
    const retryAfter = limited.headers.get('retry-after') ?? '';
    t.regex(retryAfter, /^\d+$/);
    t.true(Number(retryAfter) >= 1);
    t.regex(limited.body.detail, new RegExp(`Retry after ${retryAfter} s`));
    t.is(limited.headers.get('ratelimit-limit'), '3');
    t.is(limited.headers.get('ratelimit-remaining'), '0');

    // The 429 took nothing from the write budget, and a write still succeeds.
    const write = await api().request('POST', '/customers', {
      headers: { ...caller.auth, 'Idempotency-Key': 'write-after-429' },
      json: customerBody(),
    });
    t.is(write.status, 201);
    t.is(write.headers.get('ratelimit-limit'), '30', 'the default write budget');
    t.is(write.headers.get('ratelimit-remaining'), '29');
    const { rows } = await pool().query('SELECT 1 FROM customers WHERE organization_id = $1', [caller.organizationId]);
    t.is(rows.length, 1);
    t.true((await bucket(caller.keyId, 'read'))!.tokens < 1);

    // Reads stay limited after the write.
    t.is((await api().request('GET', '/customers', { headers: caller.auth })).status, 429);
  },
);

test('two server processes on one database share one budget: of alternating reads with a burst-5 key exactly 5 succeed', async (t) => {
  const second = await startService({ ...api().config, port: 0 }, pino({ level: 'silent' }), { role: 'api' });
  try {
    t.not(second.url, api().baseUrl);
    t.not(second.database.pool, pool(), 'the second process has its own connections');
    const caller = await createCaller(pool(), { rateLimits: { read: { perMinute: 1, burst: 5 } } });
    const statuses: string[] = [];
    for (let i = 0; i < 12; i++) {
      const res =
        i % 2 === 0
          ? await api().request('GET', '/customers', { headers: caller.auth })
          : await requestAt(second.url!, 'GET', '/customers', caller.auth);
      if (res.status === 429) t.is(res.body.code, 'rate_limited');
      statuses.push(`${i % 2 === 0 ? 'first' : 'second'}:${res.status}`);
    }
    t.deepEqual(statuses, [
      'first:200',
      'second:200',
      'first:200',
      'second:200',
      'first:200',
      'second:429',
      'first:429',
      'second:429',
      'first:429',
      'second:429',
      'first:429',
      'second:429',
    ]);
  } finally {
    await second.stop();
  }
});

test('concurrent reads never overspend the budget: of 30 at once with a burst-10 key (on both processes) exactly 10 succeed', async (t) => {
  const second = await startService({ ...api().config, port: 0 }, pino({ level: 'silent' }), { role: 'api' });
  try {
    const caller = await createCaller(pool(), { rateLimits: { read: { perMinute: 1, burst: 10 } } });
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        i % 2 === 0
          ? api().request('GET', '/customers', { headers: caller.auth })
          : requestAt(second.url!, 'GET', '/customers', caller.auth),
      ),
    );
    t.is(answers.filter((res) => res.status === 200).length, 10);
    t.is(answers.filter((res) => res.status === 429 && res.body.code === 'rate_limited').length, 20);
    const remaining = answers
      .filter((res) => res.status === 200)
      .map((res) => Number(res.headers.get('ratelimit-remaining')))
      .sort((a, b) => a - b);
    t.deepEqual(remaining, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 'each allowed read took its own token');
  } finally {
    await second.stop();
  }
});

test.serial(
  'the bucket refills at perMinute/60 tokens a second: with 600 a minute and burst 1, a read is allowed again after about 150 ms',
  async (t) => {
    const caller = await createCaller(pool(), { rateLimits: { read: { perMinute: 600, burst: 1 } } });
    const first = await api().request('GET', '/customers', { headers: caller.auth });
    t.is(first.status, 200);
    t.is(first.headers.get('ratelimit-remaining'), '0');
    const immediate = await api().request('GET', '/customers', { headers: caller.auth });
    t.is(immediate.status, 429);
    t.is(immediate.headers.get('retry-after'), '1', 'a tenth of a second, rounded up to whole seconds');

    await sleep(150);
    const refilled = await api().request('GET', '/customers', { headers: caller.auth });
    t.is(refilled.status, 200);
    t.is(refilled.headers.get('ratelimit-remaining'), '0');
  },
);

test('the value of Retry-After: the whole seconds until the bucket holds a token again (1 a minute, just emptied: 60 less the seconds since), the same as RateLimit-Reset', async (t) => {
  const caller = await createCaller(pool(), { rateLimits: { read: { perMinute: 1, burst: 1 } } });
  const started = Date.now();
  t.is((await api().request('GET', '/customers', { headers: caller.auth })).status, 200);
  const limited = await api().request('GET', '/customers', { headers: caller.auth });
  const elapsedSeconds = (Date.now() - started) / 1000;
  t.is(limited.status, 429);
  t.is(limited.body.code, 'rate_limited');
  const retryAfter = Number(limited.headers.get('retry-after'));
  t.true(
    retryAfter <= 60 && retryAfter >= 60 - Math.ceil(elapsedSeconds),
    `Retry-After ${retryAfter} after ${elapsedSeconds} s`,
  );
  t.is(limited.headers.get('ratelimit-reset'), String(retryAfter), 'a burst of 1: full again when one token is back');
  t.is(
    limited.body.detail,
    `The read budget of this key (1 per minute, burst 1) is spent. Retry after ${retryAfter} s.`,
  );
});
