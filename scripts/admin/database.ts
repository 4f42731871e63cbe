// The CLI works on the database `npm start` uses: DATABASE_URL when set, else the embedded PostgreSQL under
// DATA_DIR (reused when running, started and stopped again otherwise). Migrations are applied first, as at start-up.
import type pg from 'pg';
import { pino } from 'pino';
import { loadConfig, type Config } from '../../server/platform/config.js';
import { openDatabase } from '../../server/platform/database/database.js';
import { applyMigrations } from '../../server/platform/database/migrations.js';

export async function withDatabase<T>(use: (pool: pg.Pool, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig();
  // Errors only, to stderr: stdout carries the command's output alone (--json is parsed by scripts).
  const logger = pino({ level: 'error' }, pino.destination({ dest: 2, sync: true }));
  const database = await openDatabase(config, logger);
  try {
    await applyMigrations(database.pool);
    return await use(database.pool, config);
  } finally {
    await database.close();
  }
}
