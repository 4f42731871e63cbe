// A process's side of the shared budget (RateBudget), against a real bucket table, without HTTP: one request at a
// time takes exactly one token (the bucket row says so); concurrent requests of one key share one statement per
// round trip, never overspend, and each allowed one reports its own remaining count.
import test from 'ava';
import type { KyselyPlugin } from 'kysely';
import pg from 'pg';
import { createApiKey } from '../../server/platform/access/api-keys.js';
import { createOrganization } from '../../server/platform/access/organizations.js';
import { RateBudget } from '../../server/platform/access/rate-limit.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let database: TestDatabase;
let pool: pg.Pool;
test.before(async () => {
  database = await createTestDatabase('rate_budget');
  pool = new pg.Pool({ connectionString: database.url, max: 4 });
});
test.after.always(async () => {
  await pool?.end();
  await database?.drop();
});

async function newKey(): Promise<{ organizationId: string; id: string }> {
  const organizationId = (await createOrganization(kyselyOver(pool), { name: 'Budget Distributor' })).id;
  const { id } = await createApiKey(kyselyOver(pool), { organizationId, environment: 'sandbox', scopes: [] });
  return { organizationId, id };
}

/** A budget over the test pool that counts the statements it sends. */
function countedBudget(): { budget: RateBudget; statements: () => number } {
  let statements = 0;
  const counter: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      statements += 1;
      return args.result;
    },
  };
  return { budget: new RateBudget(kyselyOver(pool).withPlugin(counter)), statements: () => statements };
}
const stored = async (keyId: string) =>
  Number((await pool.query('SELECT tokens FROM rate_limit_buckets WHERE api_key_id = $1', [keyId])).rows[0].tokens);

test('one request at a time takes exactly one token each, as without batching: nothing is held in memory', async (t) => {
  const key = await newKey();
  const { budget, statements } = countedBudget();
  const limit = { perMinute: 1, burst: 100 };
  const remaining = [];
  for (let i = 0; i < 5; i++) {
    const answer = await budget.take(key, 'read', limit);
    t.true(answer.allowed);
    remaining.push(Math.floor(answer.remaining));
  }
  t.deepEqual(remaining, [99, 98, 97, 96, 95]);
  t.is(statements(), 5, 'one statement each');
  const tokens = await stored(key.id);
  t.true(tokens >= 95 && tokens < 95.01, `the bucket row holds ${tokens}`);
});

test('200 concurrent requests of one key cost a few statements, not 200; each allowed one sees its own remaining count', async (t) => {
  const key = await newKey();
  const { budget, statements } = countedBudget();
  const limit = { perMinute: 1, burst: 1_000 };
  const answers = await Promise.all(Array.from({ length: 200 }, () => budget.take(key, 'read', limit)));
  t.true(answers.every((answer) => answer.allowed));
  t.true(statements() <= 10, `${statements()} statements`);
  const remaining = answers.map((answer) => Math.floor(answer.remaining));
  t.is(new Set(remaining).size, 200, 'no two requests report the same count');
  const tokens = await stored(key.id);
  // What the bucket lost is what was allowed plus what this process still holds (at most PREFETCH_MAX).
  t.true(1_000 - tokens >= 200 && 1_000 - tokens <= 200 + 32, `the bucket row holds ${tokens}`);
});

test('50 concurrent requests on a budget of 30: exactly 30 allowed, 20 refused, nothing left held, and the refused say what remains', async (t) => {
  const key = await newKey();
  const { budget } = countedBudget();
  const limit = { perMinute: 1, burst: 30 };
  const answers = await Promise.all(Array.from({ length: 50 }, () => budget.take(key, 'read', limit)));
  t.is(answers.filter((answer) => answer.allowed).length, 30);
  const refused = answers.filter((answer) => !answer.allowed);
  t.is(refused.length, 20);
  t.true(refused.every((answer) => answer.remaining < 1));
  t.false((await budget.take(key, 'read', limit)).allowed, 'nothing was held back for later');
});

test('two processes (two budgets over their own statements) never spend more than the bucket gives', async (t) => {
  const key = await newKey();
  const [a, b] = [countedBudget().budget, countedBudget().budget];
  const limit = { perMinute: 1, burst: 40 };
  const answers = await Promise.all(
    Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? a : b).take(key, 'read', limit)),
  );
  const allowed = answers.filter((answer) => answer.allowed).length;
  t.true(allowed <= 40, `${allowed} allowed`);
  // Whatever one process holds unspent is gone from the bucket, so the other is refused: the two add up to the burst.
  const tokens = await stored(key.id);
  t.true(tokens < 1, `the bucket row holds ${tokens}`);
});

test('50 keys with a request each at once share a few statements, and each key is charged exactly one token', async (t) => {
  const keys = await Promise.all(Array.from({ length: 50 }, () => newKey()));
  const { budget, statements } = countedBudget();
  const limit = { perMinute: 1, burst: 10 };
  const answers = await Promise.all(keys.map((key) => budget.take(key, 'read', limit)));
  t.true(answers.every((answer) => answer.allowed && Math.floor(answer.remaining) === 9));
  t.true(statements() <= 4, `${statements()} statements for 50 keys`);
  const { rows } = await pool.query('SELECT tokens FROM rate_limit_buckets WHERE api_key_id = ANY($1)', [
    keys.map((key) => key.id),
  ]);
  t.is(rows.length, 50);
  t.true(
    rows.every((row) => row.tokens >= 9 && row.tokens < 9.01),
    'one token each: one request per key holds nothing back',
  );
});

test('tokens held for a key are dropped when its organisation changes', async (t) => {
  const key = await newKey();
  const { budget, statements } = countedBudget();
  const limit = { perMinute: 1, burst: 800 };
  await Promise.all(Array.from({ length: 40 }, () => budget.take(key, 'read', limit))); // batches hold some
  const before = statements();
  await budget.take(key, 'read', limit);
  t.is(statements(), before, 'served from what is held');
  budget.forgetOrganization(key.organizationId);
  await budget.take(key, 'read', limit);
  t.is(statements(), before + 1, 'after the change the bucket is asked again');
});
