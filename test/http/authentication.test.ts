import test from 'ava';
import { hashSecret } from '../../server/platform/access/api-key-secret.js';
import { rotateApiKey, revokeApiKey } from '../../server/platform/access/api-keys.js';
import { updateOrganization } from '../../server/platform/access/organizations.js';
import { createCaller } from '../support/callers.js';
import { useTestService } from '../support/service.js';
import { kyselyOver } from '../../server/platform/database/database.js';

const api = useTestService(test, 'authentication');
const pool = () => api().service.database.pool;
const bearer = (secret: string) => ({ Authorization: `Bearer ${secret}` });

test('GET /me answers any valid key, even one without scopes, with the key, its organisation, scopes and limits', async (t) => {
  const caller = await createCaller(pool(), { scopes: [] });
  const res = await api().request('GET', '/me', { headers: caller.auth });
  t.is(res.status, 200);
  t.like(res.body, {
    name: 'test key',
    prefix: caller.prefix,
    environment: 'test',
    organization: { id: caller.organizationId, name: 'Test Distributor' },
    scopes: [],
  });
  t.deepEqual(res.body.rateLimits, {
    read: { perMinute: 600, burst: 100 },
    write: { perMinute: 120, burst: 30 },
    ingest: { perMinute: 60, burst: 60 },
  });
});

test('a missing, malformed, mistyped, revoked or expired key gets the very same 401 unauthorized, without rate-limit headers', async (t) => {
  const good = await createCaller(pool());
  const revoked = await createCaller(pool());
  await revokeApiKey(kyselyOver(pool()), revoked.keyId);
  const expired = await createCaller(pool(), { expiresAt: new Date(Date.now() - 1000) });
  const mistyped = good.secret.slice(0, -1) + (good.secret.endsWith('a') ? 'b' : 'a');
  const unknown = `erp_0000000000_test_${'A'.repeat(43)}`;
  const attempts: Record<string, Record<string, string>> = {
    missing: {},
    'not bearer': { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
    malformed: bearer('not-a-key'),
    mistyped: bearer(mistyped),
    unknown: bearer(unknown),
    revoked: revoked.auth,
    expired: expired.auth,
  };
  const answers = new Set<string>();
  for (const [name, headers] of Object.entries(attempts)) {
    const res = await api().request('GET', '/customers', { headers });
    t.is(res.status, 401, name);
    t.is(res.body.code, 'unauthorized', name);
    t.is(res.headers.get('ratelimit-limit'), null, name);
    answers.add(JSON.stringify({ ...res.body, requestId: undefined }));
  }
  t.is(answers.size, 1, 'nothing tells the cases apart');
  t.is((await api().request('GET', '/customers', { headers: good.auth })).status, 200);
});

test('a production key on the sandbox is 401 wrong_environment', async (t) => {
  const live = await createCaller(pool(), { environment: 'production' });
  t.regex(live.secret, /^erp_live_[0-9a-z]{10}_[0-9A-Za-z]{43}$/);
  const res = await api().request('GET', '/me', { headers: live.auth });
  t.is(res.status, 401);
  t.is(res.body.code, 'wrong_environment');
});

test('a key in any query parameter is 400 key_in_query, checked before anything else, and the call is not logged', async (t) => {
  const caller = await createCaller(pool());
  for (const query of [
    `?api_key=${caller.secret}`,
    `?status=active&token=${encodeURIComponent(caller.secret)}`,
    `?x=Bearer%20${caller.secret}`,
  ]) {
    const res = await api().request('GET', `/customers${query}`, { headers: caller.auth });
    t.is(res.status, 400, query);
    t.is(res.body.code, 'key_in_query', query);
  }
  await api().service.apiLog.flush();
  const { rows } = await pool().query('SELECT path FROM api_log WHERE organization_id = $1', [caller.organizationId]);
  t.deepEqual(rows, []);
  t.false(
    api().logs.some((line) => JSON.stringify(line).includes(caller.secret)),
    'the secret is in no process log line',
  );
});

test('an organisation without API access enabled gets 403 api_disabled', async (t) => {
  const caller = await createCaller(pool());
  await updateOrganization(kyselyOver(pool()), caller.organizationId, { apiAccessEnabled: false });
  const res = await api().request('GET', '/customers', { headers: caller.auth });
  t.is(res.status, 403);
  t.is(res.body.code, 'api_disabled');
  t.truthy(res.headers.get('ratelimit-remaining'), '403 carries rate-limit headers');
});

test("a key without the operation's scope gets 403 insufficient_scope naming the scope the spec declares", async (t) => {
  const reader = await createCaller(pool(), { scopes: ['customers:read'] });
  const res = await api().request('POST', '/customers', {
    headers: { ...reader.auth, 'Idempotency-Key': 'scope-1' },
    json: { outletCode: 'UG0000001', name: 'A', channel: 'retail' },
  });
  t.is(res.status, 403);
  t.is(res.body.code, 'insufficient_scope');
  t.regex(res.body.detail, /customers:write/);
  const none = await createCaller(pool(), { scopes: ['returns:read'] });
  const read = await api().request('GET', '/customers', { headers: none.auth });
  t.is(read.status, 403);
  t.regex(read.body.detail, /customers:read/);
});

test("a caller address outside the key's IP allowlist gets 403 ip_not_allowed; X-Forwarded-For is ignored without a trusted proxy", async (t) => {
  const outside = await createCaller(pool(), { ipAllowlist: ['203.0.113.0/24', '2001:db8::/32'] });
  const res = await api().request('GET', '/me', { headers: { ...outside.auth, 'X-Forwarded-For': '203.0.113.7' } });
  t.is(res.status, 403);
  t.is(res.body.code, 'ip_not_allowed');
  const inside = await createCaller(pool(), { ipAllowlist: ['127.0.0.0/8'] });
  t.is((await api().request('GET', '/me', { headers: inside.auth })).status, 200);
  const ipv6Loopback = await createCaller(pool(), { ipAllowlist: ['::1/128'] });
  t.is(
    (await api().request('GET', '/me', { headers: ipv6Loopback.auth })).status,
    403,
    'an IPv4 caller does not match an IPv6 range',
  );
});

test('behind a trusted proxy the allowlist applies to the forwarded address', async (t) => {
  const { startTestService } = await import('../support/service.js');
  const proxied = await startTestService('auth_proxy', { env: { TRUST_PROXY: 'loopback' } });
  try {
    const caller = await createCaller(proxied.service.database.pool, { ipAllowlist: ['203.0.113.0/24'] });
    t.is(
      (await proxied.request('GET', '/me', { headers: { ...caller.auth, 'X-Forwarded-For': '203.0.113.7' } })).status,
      200,
    );
    t.is(
      (await proxied.request('GET', '/me', { headers: { ...caller.auth, 'X-Forwarded-For': '198.51.100.1' } })).status,
      403,
    );
  } finally {
    await proxied.stop();
  }
});

test('only a hash of the secret is stored', async (t) => {
  const caller = await createCaller(pool());
  const { rows } = await pool().query('SELECT row_to_json(k)::text AS row FROM api_keys k WHERE id = $1', [
    caller.keyId,
  ]);
  t.false(rows[0].row.includes(caller.secret.split('_').pop()!));
  t.true(rows[0].row.includes(hashSecret(caller.secret)));
});

test('a rotated key keeps working for the overlap; with no overlap it stops at once and the new key works', async (t) => {
  const caller = await createCaller(pool());
  const overlapping = await rotateApiKey(kyselyOver(pool()), caller.keyId, 1);
  t.is((await api().request('GET', '/me', { headers: caller.auth })).status, 200, 'old key during the overlap');
  t.is((await api().request('GET', '/me', { headers: bearer(overlapping.secret) })).status, 200, 'new key');

  const second = await rotateApiKey(kyselyOver(pool()), overlapping.id, 0);
  t.is(
    (await api().request('GET', '/me', { headers: bearer(overlapping.secret) })).status,
    401,
    'replaced key with no overlap',
  );
  const me = await api().request('GET', '/me', { headers: bearer(second.secret) });
  t.is(me.status, 200);
  t.is(me.body.prefix, second.prefix);
});

test('GET /me names a sandbox key `test`, as the released 1.13.0 contract and the product spec do, while GET /health names the deployment `sandbox`', async (t) => {
  const caller = await createCaller(pool(), { scopes: [] });
  const me = await api().request('GET', '/me', { headers: caller.auth });
  const health = await api().request('GET', '/health');
  t.is(me.body.environment, 'test');
  t.is(health.body.environment, 'sandbox');
});

test('a key issued before the erp_test_/erp_live_ form (erp_<lookup id>_test_<random>) keeps working, its environment still checked, and in a query string it is still key_in_query', async (t) => {
  const caller = await createCaller(pool(), { scopes: ['customers:read'] });
  const lookupId = caller.prefix.slice('erp_test_'.length);
  // The row as the earlier issuing code wrote it: prefix erp_<lookup id>, the hash of the earlier secret.
  const earlier = `erp_${lookupId}_test_${caller.secret.slice(caller.prefix.length + 1)}`;
  await pool().query('UPDATE api_keys SET prefix = $1, secret_hash = $2 WHERE id = $3', [
    `erp_${lookupId}`,
    hashSecret(earlier),
    caller.keyId,
  ]);
  const me = await api().request('GET', '/me', { headers: bearer(earlier) });
  t.is(me.status, 200, me.text);
  t.like(me.body, { prefix: `erp_${lookupId}`, environment: 'test' });
  t.is((await api().request('GET', '/customers', { headers: bearer(earlier) })).status, 200);
  t.is(
    (await api().request('GET', '/me', { headers: bearer(caller.secret) })).status,
    401,
    "the new-form secret was not this row's any more",
  );
  const live = await api().request('GET', '/me', { headers: bearer(earlier.replace('_test_', '_live_')) });
  t.deepEqual([live.status, live.body.code], [401, 'wrong_environment']);
  const inQuery = await api().request('GET', `/customers?token=${earlier}`, { headers: bearer(earlier) });
  t.deepEqual([inQuery.status, inQuery.body.code], [400, 'key_in_query']);
});

test('a new key begins with the fixed erp_test_ (sandbox) or erp_live_ (production), then its lookup id, which is the public prefix', async (t) => {
  const sandbox = await createCaller(pool());
  t.regex(sandbox.prefix, /^erp_test_[0-9a-z]{10}$/);
  t.regex(sandbox.secret, /^erp_test_[0-9a-z]{10}_[0-9A-Za-z]{43}$/);
  t.true(sandbox.secret.startsWith(`${sandbox.prefix}_`));
  const me = await api().request('GET', '/me', { headers: sandbox.auth });
  t.like(me.body, { prefix: sandbox.prefix, environment: 'test' });
  const inQuery = await api().request('GET', `/customers?api_key=${sandbox.secret}`, { headers: sandbox.auth });
  t.deepEqual([inQuery.status, inQuery.body.code], [400, 'key_in_query']);
});
