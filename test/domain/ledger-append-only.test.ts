// Ledger rows are never updated or deleted: the database refuses it (refuse_ledger_change(), attached by each
// ledger table's migration), whoever asks.
import test from 'ava';
import { sql } from 'kysely';
import { isLedgerChangeRefused } from '../../server/domain/ledgers/append-only.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('ledger_append_only');
  // A scratch ledger with the trigger every ledger table's migration attaches.
  await sql`CREATE TABLE scratch_ledger (id text PRIMARY KEY, quantity numeric NOT NULL)`.execute(world.db);
  await sql`CREATE TRIGGER scratch_ledger_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON scratch_ledger
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_ledger_change()`.execute(world.db);
  await sql`INSERT INTO scratch_ledger VALUES ('m1', 10), ('m2', -4)`.execute(world.db);
});
test.after.always(async () => { await world?.close(); });

const rows = async () => (await sql<{ id: string; quantity: string }>`SELECT id, quantity FROM scratch_ledger ORDER BY id`.execute(world.db)).rows;

test.serial('a ledger accepts new rows: a correction is a reversing row', async (t) => {
  await sql`INSERT INTO scratch_ledger VALUES ('m3', 4)`.execute(world.db);
  t.deepEqual((await rows()).map((row) => row.id), ['m1', 'm2', 'm3']);
});

for (const [change, statement] of [
  ['UPDATE', sql`UPDATE scratch_ledger SET quantity = 0 WHERE id = 'm1'`],
  ['DELETE', sql`DELETE FROM scratch_ledger WHERE id = 'm2'`],
  ['TRUNCATE', sql`TRUNCATE scratch_ledger`],
] as const) {
  test.serial(`${change} of a ledger is refused with restrict_violation and changes nothing`, async (t) => {
    const before = await rows();
    const error = await t.throwsAsync(statement.execute(world.db));
    t.true(isLedgerChangeRefused(error), `${change}: ${(error as { code?: string }).code}`);
    t.regex(error!.message, new RegExp(`ledger scratch_ledger is append-only: ${change} refused`));
    t.deepEqual(await rows(), before);
  });
}
