// The sandbox bootstrap's time: the synthetic distributor (master data, opening stock and stock history, trips,
// field activity) written through the modules' posting functions into a fresh, migrated database, as the first
// `npm start` does. Measured here rather than asserted in a test: a timed test flakes on a shared machine.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { bootstrapSandbox } from '../../server/modules/sandbox/bootstrap.js';
// The registries the posting functions read (the customer account reads the invoice's lifecycle there).
import '../../server/composition/modules.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { applyMigrations } from '../../server/platform/database/migrations.js';

/** The tables whose rows the report counts (fixed names: no caller input reaches the statement). */
const COUNTED_TABLES = [
  'customers',
  'products',
  'stock_movements',
  'empties_movements',
  'trips',
  'trip_locations',
  'visits',
  'sales_orders',
  'invoices',
  'events',
] as const;

export interface SandboxFigures {
  /** Milliseconds of each bootstrap, in run order. */
  millis: number[];
  /** What one bootstrap wrote (rows of the tables it fills most). */
  rows: Record<string, number>;
}

/** `urlOf(name)`: the URL of database `name` on the bench's server; `postgres` is used to create and drop. */
export async function benchSandbox(urlOf: (database: string) => string, rounds = 3): Promise<SandboxFigures> {
  const admin = new pg.Pool({ connectionString: urlOf('postgres'), max: 1 });
  const millis: number[] = [];
  const rows: Record<string, number> = {};
  try {
    for (let round = 0; round < rounds; round += 1) {
      const name = `bench_sandbox_${round}`;
      await admin.query(`DROP DATABASE IF EXISTS ${name}`);
      await admin.query(`CREATE DATABASE ${name}`);
      const pool = new pg.Pool({ connectionString: urlOf(name), max: 2 });
      const dataDir = mkdtempSync(join(tmpdir(), 'bench-sandbox-'));
      try {
        await applyMigrations(pool);
        const started = performance.now();
        await bootstrapSandbox(kyselyOver(pool), dataDir, pino({ level: 'silent' }));
        millis.push(performance.now() - started);
        if (round === 0) {
          // Exact counts of the tables the bootstrap fills most (the statistics views lag behind a just-committed write).
          for (const table of COUNTED_TABLES) {
            const counted = await pool.query(`SELECT count(*)::int AS n FROM ${table}`);
            rows[table] = (counted.rows[0] as { n: number }).n;
          }
        }
      } finally {
        await pool.end();
        rmSync(dataDir, { recursive: true, force: true });
        await admin.query(`DROP DATABASE IF EXISTS ${name}`);
      }
    }
  } finally {
    await admin.end();
  }
  return { millis, rows };
}

export function sandboxReport(figures: SandboxFigures): string[] {
  const sorted = [...figures.millis].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? NaN;
  return [
    `sandbox bootstrap (the whole synthetic distributor through the posting functions, one transaction): median ${median.toFixed(0)} ms of ${figures.millis.map((m) => m.toFixed(0)).join(', ')} ms`,
    `  rows one bootstrap wrote: ${Object.entries(figures.rows)
      .map(([table, n]) => `${table} ${n}`)
      .join(', ')}`,
  ];
}
