// Bodies and parameters that a hostile or careless client sends (issue 11's outside-in findings): each is refused
// with its documented problem, never a 500, and changes nothing.
import test from 'ava';
import { request as httpRequest } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { createCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';

const api = useSharedService(test);
const pool = () => api().pool;
const countCustomers = async (organizationId: string) =>
  (await pool().query('SELECT count(*)::int AS n FROM customers WHERE organization_id = $1', [organizationId])).rows[0]
    .n as number;

/** fetch refuses a body on GET; curl does not, and neither does a hostile client. */
function rawRequest(
  method: string,
  path: string,
  headers: Record<string, string>,
  body: string | Buffer,
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${api().baseUrl}/api/v1${path}`,
      { method, headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString()) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const customer = (outletCode: string) => JSON.stringify({ outletCode, name: 'Mama Grace Shop', channel: 'retail' });

for (const encoding of ['gzip', 'deflate', 'br']) {
  test(`a body marked Content-Encoding: ${encoding} that is not ${encoding} data is 400 invalid_json saying so, never a 500`, async (t) => {
    const caller = await createCaller(pool());
    // GET /health takes no body: refused unread (it was a 500 here), with the 400 every operation declares.
    const health = await rawRequest(
      'GET',
      '/health',
      { 'Content-Encoding': encoding, 'Content-Type': 'application/json' },
      '{"a":1}',
    );
    t.is(health.status, 400);
    t.is(health.body.code, 'unknown_field');
    const create = await api().request('POST', '/customers', {
      headers: {
        ...caller.auth,
        'Idempotency-Key': `enc-${encoding}`,
        'Content-Encoding': encoding,
        'Content-Type': 'application/json',
      },
      body: customer('UG9100001'),
    });
    t.is(create.status, 400);
    t.is(create.body.code, 'invalid_json');
    t.true(create.body.detail.includes(`Content-Encoding: ${encoding}`), create.body.detail);
    t.is(await countCustomers(caller.organizationId), 0);
  });
}

test('a body on an operation that takes none is 400 unknown_field, refused unread however large (never an undeclared 413)', async (t) => {
  for (const body of ['{"a":1}', Buffer.alloc(1_100_000, 0x20)]) {
    const res = await rawRequest('GET', '/health', { 'Content-Type': 'application/json' }, body);
    t.is(res.status, 400);
    t.deepEqual(res.body.errors, [{ field: '', code: 'unknown_field', message: 'this operation takes no body' }]);
  }
  t.is((await rawRequest('GET', '/health', { 'Content-Type': 'application/json' }, '')).status, 200);
});

test('a body really in gzip, deflate or br is read after decoding', async (t) => {
  const caller = await createCaller(pool());
  const encoders = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };
  for (const [index, [encoding, encode]] of Object.entries(encoders).entries()) {
    const code = `UG910010${index}`;
    const res = await api().request('POST', '/customers', {
      headers: {
        ...caller.auth,
        'Idempotency-Key': `ok-${encoding}`,
        'Content-Encoding': encoding,
        'Content-Type': 'application/json',
      },
      body: encode(Buffer.from(customer(code))),
    });
    t.is(res.status, 201, `${encoding}: ${res.text}`);
    t.is(res.body.outletCode, code);
  }
});

test('a Content-Encoding the service does not accept is 415 unsupported_media_type naming the accepted ones', async (t) => {
  const caller = await createCaller(pool());
  const res = await rawRequest(
    'POST',
    '/customers',
    { ...caller.auth, 'Idempotency-Key': 'zstd', 'Content-Encoding': 'zstd', 'Content-Type': 'application/json' },
    customer('UG9100003'),
  );
  t.is(res.status, 415);
  t.is(res.body.code, 'unsupported_media_type');
  t.true(res.body.detail.includes('gzip, deflate, br or identity'), res.body.detail);
});

for (const resource of [
  { path: '/customers/by-code/dms/C-EMPTY' },
  { path: '/products/by-code/dms/100999' },
  { path: '/locations/by-code/dms/M09' },
  { path: '/salespeople/by-code/dms/SM99' },
  { path: '/routes/by-code/dms/R99' },
]) {
  test(`an empty body on PUT ${resource.path.replace(/\/[^/]+$/, '/{code}')} is 400 required_field, and nothing is written`, async (t) => {
    const caller = await createCaller(pool());
    const res = await api().request('PUT', resource.path, {
      headers: { ...caller.auth, 'Content-Type': 'application/json' },
      body: '',
    });
    t.is(res.status, 400, res.text);
    t.is(res.body.code, 'required_field');
    t.deepEqual(
      res.body.errors.map((e: { field: string }) => e.field),
      [''],
    );
    const read = await api().request('GET', resource.path, { headers: caller.auth });
    t.is(read.status, 404);
  });
}

test('an empty body on POST is 400 required_field too (no body, not an empty object)', async (t) => {
  const caller = await createCaller(pool());
  const res = await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': 'empty-post', 'Content-Type': 'application/json' },
    body: '',
  });
  t.is(res.status, 400);
  t.is(res.body.code, 'required_field');
});

test('invalid UTF-8 in a JSON body is 400 invalid_json naming the byte offset, and nothing is stored', async (t) => {
  const caller = await createCaller(pool());
  const prefix = Buffer.from('{"outletCode":"UG9100010","channel":"retail","name":"Caf');
  const body = Buffer.concat([prefix, Buffer.from([0xe9]), Buffer.from('"}')]); // Latin-1 é, not UTF-8
  const res = await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': 'utf8-1', 'Content-Type': 'application/json' },
    body,
  });
  t.is(res.status, 400);
  t.is(res.body.code, 'invalid_json');
  t.true(res.body.detail.includes(`0xE9 at offset ${prefix.length}`), res.body.detail);
  t.is(await countCustomers(caller.organizationId), 0);
});

test('an overlong or surrogate UTF-8 encoding is refused like any invalid UTF-8', async (t) => {
  const caller = await createCaller(pool());
  for (const bytes of [
    [0xc0, 0xaf],
    [0xed, 0xa0, 0x80],
    [0xf4, 0x90, 0x80, 0x80],
  ]) {
    const body = Buffer.concat([
      Buffer.from('{"outletCode":"UG9100004","channel":"retail","name":"'),
      Buffer.from(bytes),
      Buffer.from('"}'),
    ]);
    const res = await rawRequest(
      'POST',
      '/customers',
      { ...caller.auth, 'Idempotency-Key': `overlong-${bytes[0]}`, 'Content-Type': 'application/json' },
      body,
    );
    t.is(res.status, 400, bytes.join(','));
    t.is(res.body.code, 'invalid_json');
  }
});

test('valid multi-byte UTF-8 (accents, emoji) is stored exactly', async (t) => {
  const caller = await createCaller(pool());
  const res = await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': 'utf8-ok' },
    json: { outletCode: 'UG9100011', name: 'Café Ñandú 🍺', channel: 'retail' },
  });
  t.is(res.status, 201);
  t.is(res.body.name, 'Café Ñandú 🍺');
});

test('a lone surrogate escape ("\\ud800") is 400 invalid_json naming where it is, and nothing is stored', async (t) => {
  const caller = await createCaller(pool());
  for (const [index, escape] of ['\\ud800', '\\udc00', 'a\\ud83d'].entries()) {
    const body = `{"outletCode":"UG910002${index}","name":"Shop ${escape}","channel":"retail"}`;
    const res = await api().request('POST', '/customers', {
      headers: { ...caller.auth, 'Idempotency-Key': `surrogate-${index}`, 'Content-Type': 'application/json' },
      body,
    });
    t.is(res.status, 400, escape);
    t.is(res.body.code, 'invalid_json');
    t.true(res.body.detail.includes('/name'), res.body.detail);
  }
  const pair = await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': 'surrogate-pair', 'Content-Type': 'application/json' },
    body: '{"outletCode":"UG9100029","name":"Shop \\ud83c\\udf7a","channel":"retail"}',
  });
  t.is(pair.status, 201);
  t.is(pair.body.name, 'Shop 🍺');
  t.is(await countCustomers(caller.organizationId), 1);
});

test('query integers are as strict as bodies: " 5", "0x10", "1e2", "+5", "05" and "5.0" are 400 invalid_field naming /query/limit', async (t) => {
  const caller = await createCaller(pool());
  for (const limit of [' 5', '0x10', '1e2', '+5', '05', '5.0', '']) {
    const res = await api().request('GET', `/customers?limit=${encodeURIComponent(limit)}`, { headers: caller.auth });
    t.is(res.status, 400, JSON.stringify(limit));
    t.is(res.body.code, 'invalid_field', JSON.stringify(limit));
    t.deepEqual(
      res.body.errors.map((e: { field: string }) => e.field),
      ['/query/limit'],
      JSON.stringify(limit),
    );
  }
  const plain = await api().request('GET', '/customers?limit=5', { headers: caller.auth });
  t.is(plain.status, 200);
});

test('query booleans accept only true and false', async (t) => {
  const caller = await createCaller(pool());
  for (const value of ['1', 'TRUE', ' true', 'yes']) {
    const res = await api().request('GET', `/products?isEmpty=${encodeURIComponent(value)}`, { headers: caller.auth });
    t.is(res.status, 400, value);
    t.is(res.body.code, 'invalid_field', value);
  }
  t.is((await api().request('GET', '/products?isEmpty=false', { headers: caller.auth })).status, 200);
});

test('a body nested deeper than 32 levels is 400 invalid_json before anything walks it (a deep one used to overflow the stack: 500)', async (t) => {
  const caller = await createCaller(pool());
  for (const depth of [33, 100_000]) {
    const body = `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const prices = await api().request('PUT', '/prices', {
      headers: { ...caller.auth, 'Content-Type': 'application/json' },
      body,
    });
    t.is(prices.status, 400, String(depth));
    t.is(prices.body.code, 'invalid_json');
    t.regex(prices.body.detail, /more than 32 levels deep/);
    const create = await api().request('POST', '/customers', {
      headers: { ...caller.auth, 'Idempotency-Key': `deep-${depth}`, 'Content-Type': 'application/json' },
      body: `{"outletCode":"UG9100090","name":"x","channel":"retail","address":${body}}`,
    });
    t.is(create.status, 400);
    t.is(create.body.code, 'invalid_json');
  }
  // At the limit the body is parsed and judged by the schema: an array is not the object PUT /prices takes.
  const atLimit = await api().request('PUT', '/prices', {
    headers: { ...caller.auth, 'Content-Type': 'application/json' },
    body: `${'['.repeat(32)}${']'.repeat(32)}`,
  });
  t.is(atLimit.status, 400);
  t.is(atLimit.body.code, 'invalid_field');
  t.is(await countCustomers(caller.organizationId), 0);
});

test('a wrong method or unknown path is 404 not_found before its body is read, whatever the body', async (t) => {
  const bodies: Array<[Record<string, string>, string | Buffer]> = [
    [{ 'Content-Type': 'application/json' }, 'null'],
    [{ 'Content-Type': 'application/json', 'Content-Encoding': 'x-gzip' }, '{"a":1}'],
    [{ 'Content-Type': 'text/plain' }, 'hello'],
    [{ 'Content-Type': 'application/json' }, Buffer.alloc(1_100_000, 0x20)],
  ];
  for (const [method, path] of [
    ['POST', '/health'],
    ['DELETE', '/customers'],
    ['PUT', '/nowhere'],
  ]) {
    for (const [headers, body] of bodies) {
      const res = await rawRequest(method!, path!, headers, body);
      t.is(res.status, 404, `${method} ${path} ${JSON.stringify(headers)}`);
      t.is(res.body.code, 'not_found');
    }
  }
});
