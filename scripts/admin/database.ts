// The CLI works on the database `npm start` uses: DATABASE_URL when set, else the embedded PostgreSQL under
// DATA_DIR (reused when running, started and stopped again otherwise). Migrations are applied first, as at start-up.
import { pino } from 'pino';
import { loadConfig, type ServiceConfig } from '../../server/platform/config.js';
import { withInstallationSecrets } from '../../server/platform/installation-secrets.js';
import { openDatabase } from '../../server/platform/database/database.js';
import type { Db } from '../../server/platform/database/transaction.js';
import { checkDatabase } from '../../server/platform/start-checks.js';
import { applyMigrations } from '../../server/platform/database/migrations.js';
import { startJobs } from '../../server/platform/jobs/jobs.js';
import { deliveryEnqueuer, type EnqueueDeliveries } from '../../server/platform/webhooks/deliver.js';
import { webhookJob } from '../../server/composition/jobs.js';
import { io } from './io.js';

export async function withDatabase<T>(
  use: (db: Db, config: ServiceConfig, databaseUrl: string) => Promise<T>,
): Promise<T> {
  const loaded = loadConfig(io().env);
  await checkDatabase(loaded); // an unreachable DATABASE_URL or an unusable DATA_DIR: one line saying what to do, exit 1
  // The secrets `npm start` uses (the variables, or the installation's file in the same DATA_DIR), so that what the CLI
  // seals the workers can open.
  const config = withInstallationSecrets(loaded);
  // Errors only, to stderr: stdout carries the command's output alone (--json is parsed by scripts).
  const logger = errorLogger();
  const database = await openDatabase(config, logger);
  try {
    await applyMigrations(database.pool);
    return await use(database.db, config, database.url);
  } finally {
    await database.close();
  }
}

/** As withDatabase, with a send-only job system: commands that make deliveries due send their jobs (a worker sends them). */
export async function withDeliveries<T>(use: (db: Db, enqueue: EnqueueDeliveries) => Promise<T>): Promise<T> {
  return withDatabase(async (db, config, databaseUrl) => {
    const logger = errorLogger();
    // Send-only: this process runs no handler, so it never takes a send slot and needs no heartbeat of its own.
    const jobs = await startJobs({
      databaseUrl,
      runWorkers: false,
      definitions: [webhookJob(db, logger, config, 'admin-cli')],
      logger,
    });
    try {
      return await use(db, deliveryEnqueuer(jobs.sendMany));
    } finally {
      await jobs.stop(0);
    }
  });
}

/** Errors only, to the run's stderr. */
function errorLogger() {
  const run = io(); // taken now: a pool's late 'error' event fires outside the run's async context
  return pino({ level: 'error' }, { write: (line: string) => run.stderr(line) });
}
