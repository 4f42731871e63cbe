// The budget per client address of the requests no key pays for (docs/decisions/0027): the operations without a key
// and failed authentications share a token bucket per address in Postgres, announced in RateLimit-* headers and
// enforced with 429 rate_limited and Retry-After; the large keyless documents are compressed once, with a strong
// ETag and 304. Every test speaks from its own address (X-Forwarded-For, believed under TRUST_PROXY=loopback), so
// the tests of this file, run concurrently, never share a bucket.
import test from 'ava';
import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { apiContract } from '../support/api-contract.js';
import { addressBucketOf } from '../../server/platform/access/address-budget.js';
import { preferredCoding } from '../../server/platform/http/precompressed.js';
import { API_BASE_PATH, apiDocumentText } from '../../server/platform/spec.js';
import { createCaller } from '../support/callers.js';
import { useTestService, type ApiResponse } from '../support/service.js';

// A small budget (burst 5, one token in 10 s) so that a burst is a handful of requests and the countdown is exact.
const api = useTestService(test, 'keyless_budget', { env: { ANONYMOUS_RATE_LIMIT: '6,5', TRUST_PROXY: 'loopback' } });
const pool = () => api().service.database.pool;
const contract = apiContract;
const from = (address: string, headers: Record<string, string> = {}) => ({
  headers: { 'X-Forwarded-For': address, ...headers },
});
const rateHeaders = (res: ApiResponse) => ({
  limit: res.headers.get('ratelimit-limit'),
  remaining: res.headers.get('ratelimit-remaining'),
});

/** The bytes as sent (fetch would decompress them), checked against the contract on their decoded text. */
function raw(
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(api().baseUrl + API_BASE_PATH + path, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          headers: res.headers as Record<string, string>,
          body: Buffer.concat(chunks),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function checkContract(
  path: string,
  answer: { status: number; headers: Record<string, string> },
  text: string,
): string[] {
  return contract.check({
    method: 'GET',
    path,
    status: answer.status,
    headers: new Headers(answer.headers),
    bodyText: text,
  });
}

test('a burst over the address budget on operations without a key gets 429 rate_limited with RateLimit-* headers and Retry-After; another address is unaffected', async (t) => {
  const seen = [];
  for (const path of ['/health', '/openapi.json', '/errors', '/errors/invalid_field', '/xml-schemas/dms-flags.xsd']) {
    const res = await api().request('GET', path, from('203.0.113.1'));
    t.is(res.status, 200, path);
    seen.push(rateHeaders(res));
  }
  t.deepEqual(
    seen.map((h) => h.limit),
    ['5', '5', '5', '5', '5'],
    'RateLimit-Limit: the burst of ANONYMOUS_RATE_LIMIT',
  );
  t.deepEqual(
    seen.map((h) => h.remaining),
    ['4', '3', '2', '1', '0'],
    'every keyless operation draws on the one budget of the address',
  );

  const limited = await api().request('GET', '/health', from('203.0.113.1'));
  t.is(limited.status, 429);
  t.is(limited.body.code, 'rate_limited');
  t.regex(limited.body.detail, /6 per minute, burst 5/);
  t.is(limited.headers.get('ratelimit-limit'), '5');
  t.is(limited.headers.get('ratelimit-remaining'), '0');
  const retryAfter = Number(limited.headers.get('retry-after'));
  t.true(retryAfter >= 1 && retryAfter <= 10, `one token in 10 s: Retry-After ${retryAfter}`);

  const other = await api().request('GET', '/health', from('203.0.113.2'));
  t.is(other.status, 200, 'another address has its own budget');
  t.deepEqual(rateHeaders(other), { limit: '5', remaining: '4' });

  // The bucket is in Postgres: one row per address, shared by every process on the database.
  const { rows } = await pool().query<{ address: string }>(
    'SELECT address FROM address_rate_buckets WHERE address LIKE $1 ORDER BY address',
    ['203.0.113.%'],
  );
  t.deepEqual(
    rows.map((row) => row.address),
    ['203.0.113.1', '203.0.113.2'],
  );
});

test('repeated wrong keys from one address end in 429 rate_limited, while another address still gets 401 and a valid key from the first is served and not charged', async (t) => {
  const caller = await createCaller(pool());
  const attempts: Record<string, string>[] = [
    { Authorization: 'Bearer not-a-key' }, // malformed
    { Authorization: `Bearer ${caller.secret.slice(0, -4)}AAAA` }, // the right prefix, a wrong secret
    { Authorization: `Bearer ${caller.secret.replace('_test_', '_live_')}` }, // wrong_environment
    {}, // no key at all
    { Authorization: 'Bearer erp_0000000000_test_0000000000000000000000000000000000000000000' }, // unknown
  ];
  for (const headers of attempts) {
    const res = await api().request('GET', '/customers', from('198.51.100.7', headers));
    t.is(res.status, 401, JSON.stringify(headers));
    t.is(res.headers.get('ratelimit-limit'), null, 'a 401 carries no RateLimit-* headers: no key was counted');
  }
  const guessed = await api().request('GET', '/customers', from('198.51.100.7', { Authorization: 'Bearer not-a-key' }));
  t.is(guessed.status, 429, 'the sixth failure in a burst of 5');
  t.is(guessed.body.code, 'rate_limited');
  t.truthy(guessed.headers.get('retry-after'));
  t.deepEqual(rateHeaders(guessed), { limit: '5', remaining: '0' }, 'the 429 tells the address budget');

  const keyless = await api().request('GET', '/health', from('198.51.100.7'));
  t.is(keyless.status, 429, 'failed authentications and keyless operations share the budget of the address');

  const elsewhere = await api().request(
    'GET',
    '/customers',
    from('198.51.100.8', { Authorization: 'Bearer not-a-key' }),
  );
  t.is(elsewhere.status, 401, 'another address is unaffected');

  for (let i = 0; i < 3; i++) {
    const served = await api().request('GET', '/customers?limit=1', from('198.51.100.7', caller.auth));
    t.is(served.status, 200, 'a valid key is served from an address whose budget is spent');
    t.is(served.headers.get('ratelimit-limit'), '100', "with the key's own budget in its headers");
  }
  for (let i = 0; i < 3; i++)
    t.is((await api().request('GET', '/customers?limit=1', from('198.51.100.9', caller.auth))).status, 200);
  const { rows } = await pool().query('SELECT address FROM address_rate_buckets WHERE address = $1', ['198.51.100.9']);
  t.deepEqual(rows, [], "a valid key's requests are not charged to the address");
});

test('/openapi.json with Accept-Encoding gzip or br is sent compressed with a strong ETag, and If-None-Match with it gives 304 with no body', async (t) => {
  const identity = await raw('/openapi.json', { 'X-Forwarded-For': '192.0.2.10' });
  t.is(identity.status, 200);
  t.is(identity.headers['content-encoding'], undefined, 'no Accept-Encoding: the document as it is');
  t.is(identity.body.toString('utf8'), apiDocumentText);
  t.regex(identity.headers.etag!, /^"[A-Za-z0-9_-]{32}"$/, 'a strong ETag');
  t.deepEqual(checkContract('/openapi.json', identity, identity.body.toString('utf8')), []);

  const gzipped = await raw('/openapi.json', { 'X-Forwarded-For': '192.0.2.10', 'Accept-Encoding': 'gzip' });
  t.is(gzipped.status, 200);
  t.is(gzipped.headers['content-encoding'], 'gzip');
  t.is(gzipped.headers.vary, 'Accept-Encoding');
  t.true(gzipped.body.length * 5 < identity.body.length, `${gzipped.body.length} bytes for ${identity.body.length}`);
  t.is(gunzipSync(gzipped.body).toString('utf8'), apiDocumentText);
  t.is(gzipped.headers.etag, identity.headers.etag!.replace(/"$/, '-gzip"'), 'each encoding its own strong ETag');
  t.deepEqual(checkContract('/openapi.json', gzipped, apiDocumentText), []);

  const brotli = await raw('/openapi.json', {
    'X-Forwarded-For': '192.0.2.10',
    'Accept-Encoding': 'gzip, deflate, br',
  });
  t.is(brotli.headers['content-encoding'], 'br');
  t.is(brotliDecompressSync(brotli.body).toString('utf8'), apiDocumentText);

  const notModified = await raw('/openapi.json', {
    'X-Forwarded-For': '192.0.2.10',
    'Accept-Encoding': 'gzip',
    'If-None-Match': gzipped.headers.etag!,
  });
  t.is(notModified.status, 304);
  t.is(notModified.body.length, 0);
  t.is(notModified.headers.etag, gzipped.headers.etag);
  t.deepEqual(checkContract('/openapi.json', notModified, ''), []);
  const other = await raw('/openapi.json', {
    'X-Forwarded-For': '192.0.2.11',
    'If-None-Match': '"someone-elses-etag-00000000000000"',
  });
  t.is(other.status, 200, "an ETag that is not the document's gets the document");
});

test('the /docs page, its script and the XML schemas are compressed with their ETags and 304 too', async (t) => {
  const page = await raw('/docs', { 'X-Forwarded-For': '192.0.2.20', 'Accept-Encoding': 'br' });
  t.is(page.status, 200);
  t.is(page.headers['content-encoding'], undefined, 'the page is under 1 KB: sent as it is, compression would not pay');
  t.is((await raw('/docs', { 'X-Forwarded-For': '192.0.2.20', 'If-None-Match': page.headers.etag! })).status, 304);
  const script = page.body.toString('utf8').match(/<script src="([^"]+)"/)![1]!;
  const js = await raw(script.slice(API_BASE_PATH.length), {
    'X-Forwarded-For': '192.0.2.21',
    'Accept-Encoding': 'gzip',
  });
  t.is(js.status, 200);
  t.is(js.headers['content-encoding'], 'gzip');
  t.is(js.headers['cache-control'], 'public, max-age=31536000, immutable');
  const again = await raw(script.slice(API_BASE_PATH.length), {
    'X-Forwarded-For': '192.0.2.21',
    'Accept-Encoding': 'gzip',
    'If-None-Match': js.headers.etag!,
  });
  t.is(again.status, 304);
  const xsd = await raw('/xml-schemas/dms-file.xsd', { 'X-Forwarded-For': '192.0.2.22', 'Accept-Encoding': 'gzip' });
  t.is(xsd.headers['content-encoding'], 'gzip');
  t.regex(gunzipSync(xsd.body).toString('utf8'), /^<\?xml/);
  t.deepEqual(checkContract('/xml-schemas/dms-file.xsd', xsd, gunzipSync(xsd.body).toString('utf8')), []);
});

test('the address of a budget: IPv4 as it is (an IPv4-mapped IPv6 address as its IPv4), IPv6 by its /64', (t) => {
  t.is(addressBucketOf('203.0.113.5'), '203.0.113.5');
  t.is(addressBucketOf('::ffff:203.0.113.5'), '203.0.113.5');
  t.is(addressBucketOf('2001:db8:1:2:aaaa:bbbb:cccc:dddd'), '2001:db8:1:2::/64');
  t.is(addressBucketOf('2001:db8:1:2::1'), addressBucketOf('2001:db8:1:2:ffff::9'), 'one /64, one budget');
  t.not(addressBucketOf('2001:db8:1:2::1'), addressBucketOf('2001:db8:1:3::1'));
});

test('the coding sent: brotli when accepted at least as much as gzip, gzip otherwise, none when neither is accepted', (t) => {
  t.is(preferredCoding('gzip, deflate, br'), 'br');
  t.is(preferredCoding('gzip'), 'gzip');
  t.is(preferredCoding('br;q=0.5, gzip'), 'gzip');
  t.is(preferredCoding('*'), 'br');
  t.is(preferredCoding('gzip;q=0, identity'), 'identity');
  t.is(preferredCoding(undefined), 'identity');
  t.is(preferredCoding('deflate'), 'identity');
});
