// Ledger rows are never updated or deleted: the database refuses it (refuse_ledger_change(), attached by each ledger
// table's migration with appendOnlyTriggerSql(table)), whoever asks. Proved on a scratch ledger in this file's own
// migrated database; then every trigger on the function in the schema is checked to be the complete one.
import test from 'ava';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { DB } from '../../generated/kysely/types.js';
import {
  appendOnlyTriggerName,
  appendOnlyTriggerSql,
  isLedgerChangeRefused,
  LEDGER_CHANGE_REFUSED,
} from '../../server/domain/ledgers/append-only.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let database: TestDatabase;
let db: Kysely<DB>;
test.before(async () => {
  database = await createTestDatabase('ledger_append_only');
  db = new Kysely<DB>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url, max: 3 }) }),
  });
  // DDL: Kysely's schema builder has no CREATE TRIGGER. The trigger is the text a ledger's migration carries, run
  // as such (the table name is a constant, checked by appendOnlyTriggerSql).
  await db.schema
    .createTable('scratch_ledger')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('quantity', 'numeric', (c) => c.notNull())
    .execute();
  await sql.raw(appendOnlyTriggerSql('scratch_ledger')).execute(db);
  await sql`INSERT INTO scratch_ledger VALUES ('m1', 10), ('m2', -4)`.execute(db);
});
test.after.always(async () => {
  await db?.destroy();
  await database?.drop();
});

// The scratch table is not in the generated types, hence plain SQL.
const rows = async () =>
  (await sql<{ id: string; quantity: string }>`SELECT id, quantity FROM scratch_ledger ORDER BY id`.execute(db)).rows;

test('the trigger statement a ledger migration carries', (t) => {
  t.is(
    appendOnlyTriggerSql('stock_movements'),
    'CREATE TRIGGER stock_movements_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON stock_movements\n  FOR EACH STATEMENT EXECUTE FUNCTION refuse_ledger_change();',
  );
  t.is(appendOnlyTriggerName('payment_allocations'), 'payment_allocations_append_only');
  for (const name of [
    'Stock',
    'stock movements',
    'x; DROP TABLE customers',
    '"quoted"',
    '1ledger',
    '',
    'a'.repeat(52),
  ]) {
    t.throws(() => appendOnlyTriggerSql(name), { message: /is not a plain lower-case table name/ }, name);
  }
  t.notThrows(() => appendOnlyTriggerSql('a'.repeat(51)));
});

test.serial('a ledger accepts new rows: a correction is a reversing row', async (t) => {
  await sql`INSERT INTO scratch_ledger VALUES ('m3', 4)`.execute(db);
  t.deepEqual(await rows(), [
    { id: 'm1', quantity: '10' },
    { id: 'm2', quantity: '-4' },
    { id: 'm3', quantity: '4' },
  ]);
});

for (const [change, title, statement] of [
  ['UPDATE', 'of a row', sql`UPDATE scratch_ledger SET quantity = 0 WHERE id = 'm1'`],
  ['UPDATE', 'matching no row', sql`UPDATE scratch_ledger SET quantity = 0 WHERE id = 'no such row'`],
  ['DELETE', 'of a row', sql`DELETE FROM scratch_ledger WHERE id = 'm2'`],
  ['DELETE', 'of every row', sql`DELETE FROM scratch_ledger`],
  ['TRUNCATE', 'of the table', sql`TRUNCATE scratch_ledger`],
] as const) {
  test.serial(`${change} (${title}): refused with restrict_violation (23001), nothing changed`, async (t) => {
    const before = await rows();
    t.is(before.length, 3);
    const error = await t.throwsAsync(statement.execute(db));
    t.is((error as { code?: string }).code, LEDGER_CHANGE_REFUSED);
    t.true(isLedgerChangeRefused(error));
    t.is(error!.message, `ledger scratch_ledger is append-only: ${change} refused`);
    t.deepEqual(await rows(), before);
  });
}

test.serial('refused inside a transaction too: the transaction fails and its earlier writes go with it', async (t) => {
  const before = await rows();
  const error = await t.throwsAsync(
    db.transaction().execute(async (tx) => {
      await sql`INSERT INTO scratch_ledger VALUES ('m4', 1)`.execute(tx);
      await sql`UPDATE scratch_ledger SET quantity = quantity + 1`.execute(tx);
    }),
  );
  t.true(isLedgerChangeRefused(error));
  t.deepEqual(await rows(), before);
});

test('isLedgerChangeRefused knows only 23001', (t) => {
  t.true(isLedgerChangeRefused({ code: '23001' }));
  t.false(isLedgerChangeRefused({ code: '23505' }));
  t.false(isLedgerChangeRefused(new Error('23001')));
  t.false(isLedgerChangeRefused(null));
  t.false(isLedgerChangeRefused(undefined));
});

test.serial(
  'every trigger on refuse_ledger_change() in the schema is the complete one: BEFORE UPDATE OR DELETE OR TRUNCATE, per statement, enabled',
  async (t) => {
    // pg_trigger is not in the generated types: a catalogue query. tgtype bits: 1 row, 2 before, 4 insert, 8 delete,
    // 16 update, 32 truncate; 2 + 8 + 16 + 32 = 58 is exactly this trigger.
    const { rows: triggers } = await sql<{ table: string; name: string; type: number; enabled: string }>`
    SELECT c.relname AS table, g.tgname AS name, g.tgtype::int AS type, g.tgenabled AS enabled
      FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
     WHERE g.tgfoid = 'refuse_ledger_change()'::regprocedure
     ORDER BY c.relname`.execute(db);
    t.true(
      triggers.some((trigger) => trigger.table === 'scratch_ledger'),
      'the scratch ledger is among them',
    );
    for (const trigger of triggers) {
      t.deepEqual(
        trigger,
        { table: trigger.table, name: appendOnlyTriggerName(trigger.table), type: 58, enabled: 'O' },
        trigger.table,
      );
    }
  },
);
