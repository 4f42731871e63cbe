// The simulators keep their state in Postgres, in their own schema `simulators`: they stand in for other companies'
// systems, so their tables are not the service's and are not in prisma/schema.prisma. Their DDL is the SQL files of
// ./migrations, applied in name order at start (under an advisory lock, each file once, recorded in
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
  const files = readdirSync(MIGRATIONS).filter((name) => name.endsWith('.sql')).sort();
  return db.connection().execute(async (connection) => {
    // A session-level advisory lock: several processes starting at once migrate one after the other.
    await sql`SELECT pg_advisory_lock(${LOCK_KEY})`.execute(connection);
    try {
      // The schema and its ledger of applied files; the names are this module's constants.
      await sql`CREATE SCHEMA IF NOT EXISTS simulators`.execute(connection);
      await sql`CREATE TABLE IF NOT EXISTS simulators.migrations (name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`.execute(connection);
      // The ledger read back as plain rows.
      const done = await sql<{ name: string }>`SELECT name FROM simulators.migrations`.execute(connection);
      const applied = new Set(done.rows.map((row) => row.name));
      const now: string[] = [];
      for (const name of files.filter((file) => !applied.has(file))) {
        await connection.transaction().execute(async (tx) => {
          // A migration file is trusted DDL of this repository, run as written: several statements and no parameters,
          // which pg sends in one simple-protocol query (as the service's own migrations are applied).
          await tx.executeQuery(CompiledQuery.raw(readFileSync(join(MIGRATIONS, name), 'utf8'), []));
          // Recorded in the same transaction as its statements.
          await sql`INSERT INTO simulators.migrations (name) VALUES (${name})`.execute(tx);
        });
        now.push(name);
      }
      return now;
    } finally {
      // The lock is released on the same connection that took it.
      await sql`SELECT pg_advisory_unlock(${LOCK_KEY})`.execute(connection);
    }
  });
}
