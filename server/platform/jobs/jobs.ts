// Background jobs run in pg-boss, inside the same Postgres: no separate broker. The API role only sends
// jobs; the worker role also runs the handlers and pg-boss's maintenance and cron. Modules declare their
// jobs as JobDefinitions; this file is the only place that talks to pg-boss's lifecycle.
import { PgBoss, type Job } from 'pg-boss';
import type { Logger } from 'pino';

export const JOBS_SCHEMA = 'pgboss';

export interface JobDefinition<T extends object = object> {
  queue: string;
  /** Run on a cron schedule (pg-boss fires at most once a minute). */
  cron?: string;
  /** Concurrent jobs per worker process. */
  concurrency?: number;
  handle(jobs: Job<T>[]): Promise<void>;
}

export interface Jobs {
  boss: PgBoss;
  send<T extends object>(queue: string, data: T): Promise<string | null>;
  /** Stops taking new jobs, waits up to timeoutMs for running handlers, then closes. */
  stop(timeoutMs: number): Promise<void>;
}

export async function startJobs(options: {
  databaseUrl: string;
  runWorkers: boolean;
  definitions: JobDefinition<never>[];
  logger: Logger;
}): Promise<Jobs> {
  const boss = new PgBoss({
    connectionString: options.databaseUrl,
    schema: JOBS_SCHEMA,
    application_name: 'erp-jobs',
    supervise: options.runWorkers,
    schedule: options.runWorkers,
  });
  boss.on('error', (error) => options.logger.error({ err: error }, 'job system error'));
  await boss.start();
  for (const definition of options.definitions) {
    await boss.createQueue(definition.queue);
    if (!options.runWorkers) continue;
    await boss.work(definition.queue, { batchSize: 1, localConcurrency: definition.concurrency ?? 1 }, async (jobs) => {
      await definition.handle(jobs as Job<never>[]);
    });
    if (definition.cron) await boss.schedule(definition.queue, definition.cron);
  }
  return {
    boss,
    send: (queue, data) => boss.send(queue, data),
    stop: (timeoutMs) => boss.stop({ graceful: true, close: true, timeout: Math.max(timeoutMs, 1) }),
  };
}

/** Installs pg-boss's schema (for example into the test template database) and stops again. */
export async function installJobsSchema(databaseUrl: string): Promise<void> {
  const boss = new PgBoss({ connectionString: databaseUrl, schema: JOBS_SCHEMA, supervise: false, schedule: false });
  await boss.start();
  await boss.stop({ graceful: false, close: true });
}
