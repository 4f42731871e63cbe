// claim_idempotency_key (migration 20261124095831_idempotency_claim): the advisory lock and the read of a stored
// result in one round trip. The rule it exists for: the read sees a result committed after the calling statement
// began (its snapshot is taken after the lock), which a plain SELECT of the lock and the row together would miss.
import test from 'ava';
import pg from 'pg';
import { createCaller, type TestCaller } from '../support/callers.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let database: TestDatabase;
let pool: pg.Pool;
let caller: TestCaller;

test.before(async () => {
  database = await createTestDatabase('idempotency_claim');
  pool = new pg.Pool({ connectionString: database.url, max: 4 });
  caller = await createCaller(pool);
});

test.after.always(async () => {
  await pool?.end();
  await database?.drop();
});

const storeResult = (key: string, createdAt = 'now()') =>
  pool.query(
    `INSERT INTO idempotency_keys (organization_id, api_key_id, key, method, path, request_hash, response_status, response_body, created_at)
   VALUES ($1, $2, $3, 'POST', '/api/v1/customers', repeat('a', 64), 201, '{"id":"cus_1"}', ${createdAt})`,
    [caller.organizationId, caller.keyId, key],
  );

const claim = (client: pg.Pool | pg.PoolClient, key: string) =>
  client
    .query<{ locked: boolean; method: string | null; response_status: number | null; response_body: string | null }>(
      'SELECT * FROM claim_idempotency_key($1, $2, $3, 24)',
      [caller.organizationId, caller.keyId, key],
    )
    .then((result) => result.rows);

test('no stored result: locked, nothing read; a stored one is read; an expired one is not', async (t) => {
  t.deepEqual(await claim(pool, 'claim-none'), [
    { locked: true, method: null, path: null, request_hash: null, response_status: null, response_body: null },
  ] as never);
  await storeResult('claim-stored');
  const [stored] = await claim(pool, 'claim-stored');
  t.like(stored, { locked: true, method: 'POST', response_status: 201, response_body: '{"id":"cus_1"}' });
  await storeResult('claim-expired', "now() - interval '25 hours'");
  t.like((await claim(pool, 'claim-expired'))[0], { locked: true, method: null });
});

test('a key held by another transaction is not locked (answered at once, not waited for)', async (t) => {
  const holder = await pool.connect();
  try {
    await holder.query('BEGIN');
    t.true((await claim(holder, 'claim-held'))[0]!.locked);
    const started = performance.now();
    t.like((await claim(pool, 'claim-held'))[0], { locked: false, method: null });
    t.true(performance.now() - started < 1_000);
    await holder.query('ROLLBACK');
    t.true((await claim(pool, 'claim-held'))[0]!.locked, 'the lock ends with the transaction');
  } finally {
    holder.release();
  }
});

test('the read sees a result committed after the calling statement took its snapshot (the snapshot rule)', async (t) => {
  // One statement: its snapshot is taken at its start, then it sleeps, then calls the function (LATERAL: after the
  // sleep). Meanwhile another connection commits the result. The function's own read must see it; the same read
  // as part of the calling statement does not (that is why lock and read cannot simply be one SELECT).
  const statement = pool.query<{ locked: boolean; method: string | null; outer_sees: boolean }>(
    `SELECT c.locked, c.method, EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.api_key_id = $2 AND k.key = $3) AS outer_sees
       FROM (SELECT pg_sleep(1)) AS s, LATERAL claim_idempotency_key($1, $2, $3, 24) AS c`,
    [caller.organizationId, caller.keyId, 'claim-late'],
  );
  // Commit the result only once the statement is running (asleep), so its snapshot is surely the older one.
  for (let attempt = 0; ; attempt++) {
    const { rows } = await pool.query(
      "SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%claim_idempotency_key%'",
    );
    if (rows.length > 0) break;
    if (attempt > 200) throw new Error('the statement never started');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await storeResult('claim-late');
  const [row] = (await statement).rows;
  t.like(row, { locked: true, method: 'POST' });
  t.false(row!.outer_sees, 'the calling statement itself still has its older snapshot');
});
