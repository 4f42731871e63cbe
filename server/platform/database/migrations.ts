// Applies prisma/migrations at start-up, recording them in Prisma's own `_prisma_migrations` table with
// Prisma's checksums, so that `prisma migrate deploy` (where its engine can be downloaded) sees the same
// history. An advisory lock (transaction-level, see applyMigrations) lets several processes start against one database at once.
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';

export const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'prisma', 'migrations');
const LOCK_KEY = 7_245_001; // any fixed number; names the "migrating" advisory lock

interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export function readMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, 'migration.sql')))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

/**
 * Applies every migration not yet applied, each in its own transaction. Returns the names applied.
 *
 * Each transaction takes the "migrating" lock as a transaction-level advisory lock and reads the ledger again under
 * it: a session-level lock would not survive a transaction-mode pooler (PgBouncer), which may run the lock, the
 * migrations and the unlock on three server connections and leave the lock held on the first, where the next
 * start would wait for it forever (docs/decisions/0043-behind-a-transaction-pooler.md). Several processes starting at
 * once so take turns per migration; each migration is still applied exactly once, and none returns before all are.
 */
export async function applyMigrations(pool: pg.Pool, dir: string = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = readMigrations(dir);
  const applied: string[] = [];
  for (;;) {
    const next = await locked(pool, async (client) => {
      await client.query(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
        "id" VARCHAR(36) PRIMARY KEY NOT NULL,
        "checksum" VARCHAR(64) NOT NULL,
        "finished_at" TIMESTAMPTZ,
        "migration_name" VARCHAR(255) NOT NULL,
        "logs" TEXT,
        "rolled_back_at" TIMESTAMPTZ,
        "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
        "applied_steps_count" INTEGER NOT NULL DEFAULT 0
      )`);
      const { rows } = await client.query<{ migration_name: string; checksum: string; finished_at: Date | null }>(
        'SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL',
      );
      const recorded = new Map(rows.map((row) => [row.migration_name, row]));
      const pending = migrations.find((migration) => {
        const row = recorded.get(migration.name);
        if (row?.finished_at) {
          if (row.checksum !== migration.checksum) {
            throw new Error(
              `Migration ${migration.name} was changed after it was applied. Never edit an applied migration; write a new one with npm run db:migration.`,
            );
          }
          return false;
        }
        if (row)
          throw new Error(
            `Migration ${migration.name} failed earlier and is marked unfinished in _prisma_migrations; resolve it by hand.`,
          );
        return true;
      });
      if (!pending) return null;
      try {
        await client.query(pending.sql);
      } catch (error) {
        throw new Error(`Migration ${pending.name} failed: ${(error as Error).message}`, { cause: error }); // rolled back whole
      }
      await client.query(
        `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
         VALUES ($1, $2, $3, now(), now(), 1)`,
        [randomUUID(), pending.checksum, pending.name],
      );
      return pending.name;
    });
    if (next === null) return applied;
    applied.push(next);
  }
}

/** Runs fn in a transaction that holds the "migrating" lock until it ends (commits, or rolls back if fn throws). */
async function locked<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      // A connection that cannot roll back is dropped rather than handed back mid-transaction.
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        broken = rollbackError;
      });
      throw error;
    }
  } finally {
    client.release(broken);
  }
}
