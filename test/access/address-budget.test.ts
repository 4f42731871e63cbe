// A process's side of the budget per address of keyless requests (AddressBudget, decisions 0027 and 0056), against a
// real bucket table, without HTTP: one request at a time takes exactly one token (the bucket row says so); concurrent
// requests of one address share a statement and take tokens ahead for the next ones (the keys' prefetch), never
// overspend, and each allowed one reports its own remaining count.
import test from 'ava';
import type { KyselyPlugin } from 'kysely';
import pg from 'pg';
import { AddressBudget } from '../../server/platform/access/address-budget.js';
import { HELD_FOR_MS, PREFETCH_MAX } from '../../server/platform/access/rate-limit.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let database: TestDatabase;
let pool: pg.Pool;
test.before(async () => {
  database = await createTestDatabase('address_budget');
  pool = new pg.Pool({ connectionString: database.url, max: 4 });
});
test.after.always(async () => {
  await pool?.end();
  await database?.drop();
});

/** A budget over the test pool that counts the bucket statements it sends (each answers rows; its sweep answers none). */
function countedBudget(limit: { perMinute: number; burst: number }): {
  budget: AddressBudget;
  statements: () => number;
} {
  let statements = 0;
  const counter: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      if (args.result.rows.length > 0) statements += 1;
      return args.result;
    },
  };
  return { budget: new AddressBudget(kyselyOver(pool).withPlugin(counter), limit), statements: () => statements };
}
/** A refill too slow to move a count within a test however long a loaded machine makes it (one token in 16 hours). */
const SLOW = 0.001;
const stored = async (address: string) =>
  Number((await pool.query('SELECT tokens FROM address_rate_buckets WHERE address = $1', [address])).rows[0].tokens);

test('one request at a time takes exactly one token each: nothing is held in memory', async (t) => {
  const { budget, statements } = countedBudget({ perMinute: SLOW, burst: 100 });
  const remaining = [];
  for (let i = 0; i < 5; i++) {
    const answer = await budget.take('192.0.2.1');
    t.true(answer.allowed);
    remaining.push(Math.floor(answer.remaining));
  }
  t.deepEqual(remaining, [99, 98, 97, 96, 95]);
  t.is(statements(), 5, 'one statement each');
  const tokens = await stored('192.0.2.1');
  t.true(tokens >= 95 && tokens < 95.01, `the bucket row holds ${tokens}`);
});

test('200 concurrent requests of one address cost a few statements, not 200; each allowed one sees its own remaining count', async (t) => {
  const { budget, statements } = countedBudget({ perMinute: SLOW, burst: 1_000 });
  const answers = await Promise.all(Array.from({ length: 200 }, () => budget.take('192.0.2.2')));
  t.true(
    answers.every((answer) => answer.allowed),
    'all allowed',
  );
  t.true(statements() <= 10, `${statements()} statements`);
  const remaining = answers.map((answer) => Math.floor(answer.remaining));
  t.is(new Set(remaining).size, 200, 'no two requests report the same count');
  const tokens = await stored('192.0.2.2');
  // What the bucket lost is what was allowed plus what this process still holds (at most PREFETCH_MAX).
  t.true(1_000 - tokens > 199.99 && 1_000 - tokens <= 200 + PREFETCH_MAX, `the bucket row holds ${tokens}`);
});

test('the next requests after a busy moment are served from the tokens taken ahead, until they are HELD_FOR_MS old', async (t) => {
  const { budget, statements } = countedBudget({ perMinute: SLOW, burst: 800 });
  await Promise.all(Array.from({ length: 40 }, () => budget.take('192.0.2.3')));
  const before = statements();
  const held = await budget.take('192.0.2.3');
  t.true(held.allowed);
  t.is(statements(), before, 'served from what is held: no statement');
  await new Promise((resolve) => setTimeout(resolve, HELD_FOR_MS + 100));
  const tokens = await stored('192.0.2.3');
  const fresh = await budget.take('192.0.2.3');
  t.true(fresh.allowed);
  t.is(statements(), before + 1, 'held tokens are dropped unspent after HELD_FOR_MS: the bucket is asked again');
  t.true(Math.floor(fresh.remaining) === Math.floor(tokens) - 1, 'and the token comes from the bucket');
});

test('50 concurrent requests on a budget of 30: exactly 30 allowed, 20 refused, nothing left held, and the refused say what remains', async (t) => {
  const { budget } = countedBudget({ perMinute: SLOW, burst: 30 });
  const answers = await Promise.all(Array.from({ length: 50 }, () => budget.take('192.0.2.4')));
  t.is(answers.filter((answer) => answer.allowed).length, 30);
  const refused = answers.filter((answer) => !answer.allowed);
  t.is(refused.length, 20);
  t.true(refused.every((answer) => answer.remaining < 1));
  t.false((await budget.take('192.0.2.4')).allowed, 'nothing was held back for later');
});

test('two processes (two budgets over their own statements) never spend more than the bucket gives', async (t) => {
  const limit = { perMinute: SLOW, burst: 40 };
  const [a, b] = [countedBudget(limit).budget, countedBudget(limit).budget];
  const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? a : b).take('192.0.2.5')));
  const allowed = answers.filter((answer) => answer.allowed).length;
  t.true(allowed <= 40, `${allowed} allowed`);
  // Whatever one process holds unspent is gone from the bucket, so the other is refused: the two add up to the burst.
  const tokens = await stored('192.0.2.5');
  t.true(tokens < 1, `the bucket row holds ${tokens}`);
});

test('50 addresses with a request each at once share a few statements, and each is charged exactly one token', async (t) => {
  const { budget, statements } = countedBudget({ perMinute: SLOW, burst: 10 });
  const addresses = Array.from({ length: 50 }, (_, i) => `198.51.100.${i + 1}`);
  const answers = await Promise.all(addresses.map((address) => budget.take(address)));
  t.true(answers.every((answer) => answer.allowed && Math.floor(answer.remaining) === 9));
  t.true(statements() <= 4, `${statements()} statements for 50 addresses`);
  const { rows } = await pool.query('SELECT tokens FROM address_rate_buckets WHERE address = ANY($1)', [addresses]);
  t.is(rows.length, 50);
  t.true(
    rows.every((row) => row.tokens >= 9 && row.tokens < 9.01),
    'one token each: one request per address holds nothing back',
  );
});
