// The token bucket in Postgres, its statement alone (no HTTP): the first request of a key fills the bucket to its
// burst and takes one token; each next one takes one while a whole token is there; a refused one takes nothing;
// the bucket refills at perMinute/60 tokens a second, never above the burst, and follows a changed limit.
import test from 'ava';
import pg from 'pg';
import { createOrganization } from '../../server/platform/access/organizations.js';
import { createApiKey } from '../../server/platform/access/api-keys.js';
import { takeTokenUpsert } from '../../server/platform/access/rate-limit.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let database: TestDatabase;
let pool: pg.Pool;
test.before(async () => {
  database = await createTestDatabase('rate_limit_bucket');
  pool = new pg.Pool({ connectionString: database.url, max: 4 });
});
test.after.always(async () => {
  await pool?.end();
  await database?.drop();
});

async function newKey(): Promise<{ organizationId: string; keyId: string }> {
  const organizationId = (await createOrganization(kyselyOver(pool), { name: 'Bucket Distributor' })).id;
  const { id } = await createApiKey(kyselyOver(pool), {
    organizationId,
    environment: 'sandbox',
    scopes: [],
    name: 'bucket key',
  });
  return { organizationId, keyId: id };
}

/** Takes a token for the key in `rateClass` with the given limit, as authentication does; answers the row. */
async function take(
  key: { organizationId: string; keyId: string },
  limit: { perMinute: number; burst: number },
  rateClass = 'read',
) {
  const row = await kyselyOver(pool)
    .with('key', (q) =>
      q.selectNoFrom((eb) => [
        eb.val(key.organizationId).as('organization_id'),
        eb.val(key.keyId).as('id'),
        eb.cast<number>(eb.val(limit.perMinute), 'float8').as('per_minute'),
        eb.cast<number>(eb.val(limit.burst), 'float8').as('burst'),
        eb.val(rateClass).as('class'),
        eb.lit(1).as('wanted'),
        eb.lit(0).as('prefetch'), // one request, nothing held
      ]),
    )
    .with('bucket', (q) => takeTokenUpsert(q as never))
    .selectFrom('bucket')
    .selectAll()
    .executeTakeFirstOrThrow();
  return { allowed: row.last_allowed, tokens: Number(row.tokens) };
}
const rewind = (keyId: string, seconds: number) =>
  pool.query(
    `UPDATE rate_limit_buckets SET refilled_at = refilled_at - make_interval(secs => $2) WHERE api_key_id = $1`,
    [keyId, seconds],
  );
const stored = async (keyId: string, rateClass = 'read') =>
  (
    await pool.query(
      'SELECT tokens, last_allowed, per_minute, burst FROM rate_limit_buckets WHERE api_key_id = $1 AND class = $2',
      [keyId, rateClass],
    )
  ).rows[0];

test('the first request fills the bucket to the burst and takes one; then one each until none is left; a refused request takes nothing', async (t) => {
  const key = await newKey();
  const limit = { perMinute: 1, burst: 3 }; // a token a minute: no refill within the test
  t.deepEqual(await take(key, limit), { allowed: true, tokens: 2 });
  const second = await take(key, limit);
  t.true(second.allowed);
  t.true(second.tokens >= 1 && second.tokens < 1.01, String(second.tokens));
  const third = await take(key, limit);
  t.true(third.allowed);
  t.true(third.tokens >= 0 && third.tokens < 0.01, String(third.tokens));
  const refused = await take(key, limit);
  t.false(refused.allowed);
  t.true(refused.tokens >= third.tokens && refused.tokens < 0.02, `nothing taken: ${refused.tokens}`);
  t.like(await stored(key.keyId), { last_allowed: false, per_minute: 1, burst: 3 });
});

test('the bucket refills at perMinute/60 a second and never above the burst; each class has its own bucket', async (t) => {
  const key = await newKey();
  // One a minute: the real time between statements (a busy machine: up to a few seconds) adds under 0.05.
  const limit = { perMinute: 1, burst: 5 };
  for (let i = 0; i < 5; i++) t.true((await take(key, limit)).allowed, `take ${i + 1}`);
  t.false((await take(key, limit)).allowed, 'empty');
  await rewind(key.keyId, 150); // 2.5 tokens back at one a minute
  const after = await take(key, limit);
  t.true(after.allowed);
  t.true(after.tokens >= 1.5 && after.tokens < 1.55, `2.5 back, one taken: ${after.tokens}`);
  await rewind(key.keyId, 3600);
  t.true(Math.abs((await take(key, limit)).tokens - 4) < 1e-9, 'capped at the burst (5), one taken');
  t.deepEqual(
    await take(key, { perMinute: 1, burst: 2 }, 'write'),
    { allowed: true, tokens: 1 },
    'the write bucket is apart',
  );
  const read = await stored(key.keyId);
  t.true(read.tokens >= 4 && read.tokens < 4.05, `read untouched by the write: ${read.tokens}`);
});

test('a changed limit applies at the next request: a lower burst caps what is there, the new rate refills', async (t) => {
  const key = await newKey();
  t.deepEqual(await take(key, { perMinute: 60, burst: 10 }), { allowed: true, tokens: 9 });
  const lowered = await take(key, { perMinute: 1, burst: 3 });
  t.true(lowered.allowed);
  t.true(Math.abs(lowered.tokens - 2) < 1e-9, `min(3, 9) - 1: ${lowered.tokens}`);
  t.like(await stored(key.keyId), { per_minute: 1, burst: 3 });
  await pool.query('UPDATE rate_limit_buckets SET tokens = 0 WHERE api_key_id = $1', [key.keyId]);
  await rewind(key.keyId, 30); // at 1 a minute, 30 s give half a token: not enough
  const half = await take(key, { perMinute: 1, burst: 3 });
  t.false(half.allowed);
  t.true(half.tokens >= 0.5 && half.tokens < 0.55, String(half.tokens));
  await rewind(key.keyId, 30); // another half: one whole token
  const whole = await take(key, { perMinute: 1, burst: 3 });
  t.true(whole.allowed);
  t.true(whole.tokens >= 0 && whole.tokens < 0.05, String(whole.tokens));
});

test('refilled_at never moves backwards: a bucket stamped in the future is not refilled for the gap', async (t) => {
  const key = await newKey();
  await take(key, { perMinute: 60, burst: 5 });
  await pool.query(
    "UPDATE rate_limit_buckets SET refilled_at = now() + interval '1 hour', tokens = 0 WHERE api_key_id = $1",
    [key.keyId],
  );
  t.deepEqual(
    await take(key, { perMinute: 60, burst: 5 }),
    { allowed: false, tokens: 0 },
    'a negative gap adds nothing',
  );
  const { rows } = await pool.query(
    "SELECT refilled_at > now() + interval '59 minutes' AS kept FROM rate_limit_buckets WHERE api_key_id = $1",
    [key.keyId],
  );
  t.true(rows[0].kept);
});
