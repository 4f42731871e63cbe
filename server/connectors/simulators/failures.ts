// Failures on demand, shared by both simulators: the operator CLI (`admin connector fail`) and the tests add an
// injection for one account (a QuickBooks realm, an EFRIS TIN); each request of that account takes the oldest one
// (decrementing its count in the same statement, so two requests never take one failure twice) and fails in its mode.
import { sql, type Generated } from 'kysely';
import type { Db } from '../../platform/database/transaction.js';
import { simulatorDb } from './database.js';

export type SimulatedSystem = 'accounting' | 'fiscal';

interface FailureTables {
  failure_injections: {
    id: Generated<string>;
    system: string;
    account: string;
    mode: string;
    remaining: number | null;
    delay_ms: Generated<number>;
    created_at: Generated<Date>;
  };
}

export interface InjectedFailure {
  mode: string;
  delayMs: number;
}

/** Adds a failure: the next `count` requests (null: every request until cleared) of the account fail in `mode`. */
export async function injectFailure(
  db: Db,
  system: SimulatedSystem,
  account: string,
  mode: string,
  count: number | null,
  delayMs = 0,
): Promise<void> {
  await simulatorDb<FailureTables>(db)
    .insertInto('failure_injections')
    .values({ system, account, mode, remaining: count, delay_ms: delayMs })
    .execute();
}

/** Removes every failure of the account; returns how many there were. */
export async function clearFailures(db: Db, system: SimulatedSystem, account: string): Promise<number> {
  const result = await simulatorDb<FailureTables>(db)
    .deleteFrom('failure_injections')
    .where('system', '=', system)
    .where('account', '=', account)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The failures waiting for the account, oldest first. */
export async function listFailures(
  db: Db,
  system: SimulatedSystem,
  account: string,
): Promise<{ mode: string; remaining: number | null; delayMs: number }[]> {
  const rows = await simulatorDb<FailureTables>(db)
    .selectFrom('failure_injections')
    .select(['mode', 'remaining', 'delay_ms'])
    .where('system', '=', system)
    .where('account', '=', account)
    .orderBy('id')
    .execute();
  return rows.map((row) => ({ mode: row.mode, remaining: row.remaining, delayMs: row.delay_ms }));
}

/**
 * Takes the account's oldest failure for this request, or null. A counted failure is decremented and deleted when
 * spent, in one statement on the row it locked (SKIP LOCKED: a concurrent request takes the next one or none).
 */
export async function takeFailure(db: Db, system: SimulatedSystem, account: string): Promise<InjectedFailure | null> {
  // One statement: lock the oldest injection, then decrement it; a spent one is deleted by the next statement.
  const taken = await sql<{ id: string; mode: string; delay_ms: number; remaining: number | null }>`
    UPDATE simulators.failure_injections SET remaining = remaining - 1
    WHERE id = (SELECT id FROM simulators.failure_injections
                WHERE system = ${system} AND account = ${account} AND (remaining IS NULL OR remaining > 0)
                ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING id, mode, delay_ms, remaining`.execute(db);
  const row = taken.rows[0];
  if (!row) return null;
  if (row.remaining !== null && row.remaining <= 0) {
    await simulatorDb<FailureTables>(db).deleteFrom('failure_injections').where('id', '=', row.id).execute();
  }
  return { mode: row.mode, delayMs: row.delay_ms };
}
