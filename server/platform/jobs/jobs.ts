// Background jobs run in pg-boss, inside the same Postgres: no separate broker. The API role only sends
// jobs; the worker role also runs the handlers and pg-boss's maintenance and cron. Modules declare their
// jobs as JobDefinitions; this file is the only place that talks to pg-boss's lifecycle.
import { PgBoss, type Job, type JobInsert } from 'pg-boss';
import { CompiledQuery } from 'kysely';
import type { Tx } from '../database/transaction.js';
import type { Logger } from 'pino';

export const JOBS_SCHEMA = 'pgboss';

export interface JobDefinition<T extends object = object> {
  queue: string;
  /** Run on a cron schedule (pg-boss fires at most once a minute). */
  cron?: string;
  /** Concurrent jobs per worker process. */
  concurrency?: number;
  /**
   * After each job, wake one idle worker of the queue to fetch at once: a backlog is worked through at the speed
   * of the handlers, not one job per worker per polling interval (pg-boss polls only after a fetch of one job).
   */
  wakeAfterJob?: boolean;
  /** How often an idle worker looks for jobs (pg-boss's minimum is 0.5; its default 2). */
  pollingIntervalSeconds?: number;
  /** At most this many jobs of one group (JobToSend.group) run at once, across all worker processes. */
  groupConcurrency?: number;
  /** The queue's own settings: a job active longer than expireInSeconds is retried (up to retryLimit), as after a crash. */
  queueOptions?: { expireInSeconds?: number; retryLimit?: number; retryDelay?: number };
  /** sendMany is the job system's own, so that a handler can send follow-up jobs in its transaction. */
  handle(jobs: Job<T>[], sendMany: SendMany): Promise<void>;
}

export interface JobToSend<T extends object> {
  data: T;
  /** Not before this time (a Date) or this many seconds from now. */
  startAfter?: Date | number;
  /** Jobs of one group share the queue's groupConcurrency. */
  group?: string;
}

/** Sends jobs; with tx, inside that transaction: they exist exactly when it commits. */
export type SendMany = <T extends object>(queue: string, jobs: JobToSend<T>[], tx?: Tx) => Promise<void>;

export interface Jobs {
  boss: PgBoss;
  send<T extends object>(queue: string, data: T): Promise<string | null>;
  sendMany: SendMany;
  /** Fails jobs (by id and the retry count they were fetched at) inside the transaction: pg-boss retries them after the queue's retryDelay. */
  failInTransaction(queue: string, jobs: { id: string; retryCount: number }[], tx: Tx): Promise<void>;
  /** Wakes up to `count` of this process's idle workers of a queue to fetch now (after sending jobs due now) rather than at their next poll. */
  wake(queue: string, count?: number): void;
  /** Stops taking new jobs, waits up to timeoutMs for running handlers, then closes. */
  stop(timeoutMs: number): Promise<void>;
}

/**
 * pg-boss's own statements inside our transaction: its SQL text is passed through unchanged as one compiled query
 * (CompiledQuery.raw binds its values as parameters), so what it writes exists exactly when the transaction commits.
 */
const inside = (tx: Tx) => ({ executeSql: (text: string, values?: unknown[]) => tx.executeQuery(CompiledQuery.raw(text, (values ?? []) as unknown[])) as Promise<{ rows: any[] }> });

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
  const sendMany: SendMany = async (queue, jobs, tx) => {
    if (jobs.length === 0) return;
    const inserts: JobInsert[] = jobs.map((job) => ({
      data: job.data,
      ...(job.startAfter !== undefined ? { startAfter: job.startAfter } : {}),
      ...(job.group !== undefined ? { group: { id: job.group } } : {}),
    }));
    await boss.insert(queue, inserts, tx ? { db: inside(tx) } : {});
  };
  /** Wakes up to `count` workers of the queue that hold no job (they fetch now rather than at their next poll). */
  const wakeIdle = (queue: string, count: number): void => {
    let woken = 0;
    for (const worker of boss.getWipData()) {
      if (woken >= count) return;
      if (worker.name !== queue || worker.state !== 'active' || worker.count > 0) continue;
      boss.notifyWorker(worker.id);
      woken += 1;
    }
  };
  for (const definition of options.definitions) {
    await boss.createQueue(definition.queue, definition.queueOptions);
    if (definition.queueOptions) await boss.updateQueue(definition.queue, definition.queueOptions); // a queue made by an older version
    if (!options.runWorkers) continue;
    await boss.work(definition.queue, {
      batchSize: 1,
      localConcurrency: definition.concurrency ?? 1,
      ...(definition.pollingIntervalSeconds !== undefined ? { pollingIntervalSeconds: definition.pollingIntervalSeconds } : {}),
      ...(definition.groupConcurrency !== undefined ? { groupConcurrency: definition.groupConcurrency } : {}),
    }, async (jobs) => {
      try {
        await definition.handle(jobs as Job<never>[], sendMany);
      } finally {
        // This worker now waits its polling interval: another takes the next job at once, if there is one.
        if (definition.wakeAfterJob) wakeIdle(definition.queue, 1);
      }
    });
    if (definition.cron) await boss.schedule(definition.queue, definition.cron);
  }
  return {
    boss,
    send: (queue, data) => boss.send(queue, data),
    sendMany,
    async failInTransaction(queue, jobs, tx) {
      if (jobs.length > 0) await boss.fail(queue, jobs, { value: { message: 'its worker process stopped beating' } }, { db: inside(tx) });
    },
    wake: (queue, count = Infinity) => wakeIdle(queue, count),
    stop: (timeoutMs) => boss.stop({ graceful: true, close: true, timeout: Math.max(timeoutMs, 1) }),
  };
}

/** Installs pg-boss's schema (for example into the test template database) and stops again. */
export async function installJobsSchema(databaseUrl: string): Promise<void> {
  const boss = new PgBoss({ connectionString: databaseUrl, schema: JOBS_SCHEMA, supervise: false, schedule: false });
  await boss.start();
  await boss.stop({ graceful: false, close: true });
}
