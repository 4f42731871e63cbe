// The simulators keep their state in Postgres, in their own schema `simulators`: they stand in for other companies'
// systems, so their tables are not the service's and are not in prisma/schema.prisma. Their DDL is the SQL files of
// ./migrations, applied in name order at start (under a transaction-level advisory lock, each file once, recorded in
// simulators.migrations), and each simulator types its tables with its own Kysely interface over the same pool.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { Db } from '../../platform/database/transaction.js';

export const SIMULATOR_SCHEMA = 'simulators';
const MIGRATIONS = join(dirname(fileURLToPath(import.meta.url)), 'migrations');
const LOCK_KEY = 7_245_014; // any fixed number; names the "migrating the simulators" advisory lock

/** The simulators' tables seen through Kysely: `T` is a simulator's own table interface (no schema prefix). */
export function simulatorDb<T>(db: Db): Kysely<T> {
  // withSchema only sets the schema of the statements; the cast gives them the simulator's table types.
  return db.withSchema(SIMULATOR_SCHEMA) as unknown as Kysely<T>;
}

/** Applies the simulators' migrations not yet applied; returns their names. */
export async function migrateSimulators(db: Db): Promise<string[]> {
  const files = readdirSync(MIGRATIONS)
    .filter((name) => name.endsWith('.sql'))
    .sort();
  const now: string[] = [];
  for (;;) {
    // One file per transaction, under a transaction-level advisory lock taken first and the ledger read under it:
    // several processes starting at once migrate one after the other, and nothing of the lock outlives its
    // transaction (a session-level lock would stay on whichever server connection a transaction-mode pooler ran it
    // on: docs/decisions/0043-behind-a-transaction-pooler.md).
    const applied = await db.transaction().execute(async (tx) => {
      await sql`SELECT pg_advisory_xact_lock(${LOCK_KEY})`.execute(tx);
      // The schema and its ledger of applied files; the names are this module's constants.
      await sql`CREATE SCHEMA IF NOT EXISTS simulators`.execute(tx);
      await sql`CREATE TABLE IF NOT EXISTS simulators.migrations (name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`.execute(
        tx,
      );
      // The ledger read back as plain rows.
      const done = new Set(
        (await sql<{ name: string }>`SELECT name FROM simulators.migrations`.execute(tx)).rows.map((row) => row.name),
      );
      const name = files.find((file) => !done.has(file));
      if (name === undefined) return null;
      // A migration file is trusted DDL of this repository, run as written: several statements and no parameters,
      // which pg sends in one simple-protocol query (as the service's own migrations are applied).
      await tx.executeQuery(CompiledQuery.raw(readFileSync(join(MIGRATIONS, name), 'utf8'), []));
      // Recorded in the same transaction as its statements.
      await sql`INSERT INTO simulators.migrations (name) VALUES (${name})`.execute(tx);
      return name;
    });
    if (applied === null) return now;
    now.push(applied);
  }
}
