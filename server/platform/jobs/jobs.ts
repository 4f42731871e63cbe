// Background jobs run in pg-boss, inside the same Postgres: no separate broker. The API role only sends
// jobs; the worker role also runs the handlers and pg-boss's maintenance and cron. Modules declare their
// jobs as JobDefinitions; this file is the only place that talks to pg-boss's lifecycle.
//
// Idle workers do not poll (decision 0040): every queue is created with pg-boss's notify, so an insert of a job due
// now NOTIFYs in its own statement, and the worker role LISTENs (wake.ts) and wakes that queue's idle workers; a job
// due later wakes this process's workers when it falls due (a timer), as does a failed job after its retry delay. The
// safety net is one statement for every queue each pollingIntervalSeconds (wakeWorkers, decision 0054); the workers'
// own polling is only its backstop, ten times rarer. A worker that finished a job fetches again at
// once while there are jobs (wakeAfterJob). Jobs sent `fair` are ordered per organisation: each gets the priority
// minus the number of its organisation's jobs already waiting, so one organisation's backlog never holds another's
// first job behind it (pg-boss fetches by priority, then age).
import { PgBoss, type Job, type JobInsert } from 'pg-boss';
import { CompiledQuery } from 'kysely';
import type { Tx } from '../database/transaction.js';
import type { Logger } from 'pino';
import { listenForJobs } from './wake.js';
import { startLoop } from './loop.js';

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
  /** How often an idle worker looks for jobs without being woken (default: startJobs's safety net; pg-boss's minimum is 0.5). */
  pollingIntervalSeconds?: number;
  /** At most this many jobs of one group (JobToSend.group) run at once, across all worker processes. */
  groupConcurrency?: number;
  /** The queue's own settings: a job active longer than expireInSeconds is retried (up to retryLimit), as after a crash. */
  queueOptions?: { expireInSeconds?: number; retryLimit?: number; retryDelay?: number };
  /** sendMany is the job system's own, so that a handler can send follow-up jobs in its transaction. */
  handle(jobs: Job<T>[], sendMany: SendMany): Promise<void>;
}

export interface JobToSend<T extends object> {
  /** The job's id (a UUID), when the sender records it beside the job in the same transaction; pg-boss's own otherwise. */
  id?: string;
  data: T;
  /** Not before this time (a Date) or this many seconds from now. */
  startAfter?: Date | number;
  /** Jobs of one group share the queue's groupConcurrency. */
  group?: string;
  /**
   * Fair between organisations (data.organizationId): the job waits behind its own organisation's waiting jobs of
   * the queue, not behind other organisations' (its priority is minus the number of its organisation's jobs waiting).
   */
  fair?: boolean;
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
const inside = (tx: Tx) => ({
  executeSql: (text: string, values?: unknown[]) =>
    tx.executeQuery(CompiledQuery.raw(text, (values ?? []) as unknown[])) as Promise<{ rows: any[] }>,
});

/** The safety net's interval (one statement for every queue) when startJobs is given none (WORK_POLL_SECONDS's default). */
export const DEFAULT_JOBS_POLL_SECONDS = 30;

/** How often pg-boss's supervision, queue cache, instance row and background migrations run (its defaults: 60, 60, 30, 60 s). */
export const SUPERVISE_SECONDS = 300;

/** How much longer than the safety net's interval a queue's first worker waits before it polls on its own. */
export const JOB_BACKSTOP_FACTOR = 10;

/**
 * How a worker's job workers are woken: each job due now by pg-boss's NOTIFY (heard on its channel; every queue when
 * the LISTEN is (re)established), and by the safety net of every queue, one statement each pollingIntervalSeconds
 * (dueQueues): the queues with a job due that no notification told of (lost, or sent for later or retried by
 * another process) have their idle workers woken.
 */
function wakeWorkers(
  boss: PgBoss,
  options: { databaseUrl: string; listenUrl?: string; pollingIntervalSeconds: number; logger: Logger },
  queues: Set<string>,
  wake: (queue: string) => void,
): { close(): Promise<void> } {
  const listener = listenForJobs(
    options.listenUrl ?? options.databaseUrl,
    JOBS_SCHEMA,
    (queue) => {
      if (queue === null) for (const name of queues) wake(name);
      else if (queues.has(queue)) wake(queue);
    },
    options.logger,
  );
  const safetyNet = startLoop({
    pollIntervalMs: options.pollingIntervalSeconds * 1_000,
    async pass() {
      for (const queue of await dueQueues(boss, [...queues])) wake(queue);
      return false;
    },
    onError: (error) => options.logger.error({ err: error }, "the job queues' safety net failed; retrying"),
  });
  return {
    async close() {
      await safetyNet.stop();
      await listener.close();
    },
  };
}

/**
 * The queues (of `names`) with a job due now, as pg-boss's fetch decides it (created or retry, not blocked, its start
 * time past by pg-boss's clock; job_i11 and job_i14 cover it): one statement for every queue.
 */
async function dueQueues(boss: PgBoss, names: string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const { rows } = (await boss.getDb().executeSql(
    `SELECT q.name FROM unnest($1::text[]) AS q(name) WHERE EXISTS (SELECT 1 FROM ${JOBS_SCHEMA}.job j
      WHERE j.name = q.name AND j.state < 'active' AND NOT j.blocked AND j.start_after <= ${JOBS_SCHEMA}.job_now())`,
    [names],
  )) as { rows: { name: string }[] };
  return rows.map((row) => row.name);
}

export async function startJobs(options: {
  databaseUrl: string;
  /** Where the LISTEN for jobs connects: a session of its own, never through a transaction pooler (decision 0043). */
  listenUrl?: string;
  runWorkers: boolean;
  definitions: JobDefinition<never>[];
  logger: Logger;
  /** How often an idle worker fetches without being woken, for the definitions that name no interval of their own. */
  pollingIntervalSeconds?: number;
}): Promise<Jobs> {
  const pollingIntervalSeconds = options.pollingIntervalSeconds ?? DEFAULT_JOBS_POLL_SECONDS;
  const boss = new PgBoss({
    connectionString: options.databaseUrl,
    schema: JOBS_SCHEMA,
    application_name: 'erp-jobs',
    supervise: options.runWorkers,
    schedule: options.runWorkers,
    // The cron worker's poll (pg-boss's default 5 s) is the only one left between notifications: a cron job is sent
    // within this of its minute (ours run each minute or less often, and none is timed to the second).
    cronWorkerIntervalSeconds: Math.min(45, Math.max(5, Math.round(pollingIntervalSeconds))),
    // pg-boss's flows (jobs that wait for other jobs) are checked every 5 s by default, two statements each time; the
    // service sends no such job, so the check runs every ten minutes.
    flowIntervalSeconds: 600,
    // pg-boss's supervision (decision 0054): its monitor fails jobs active past their queue's expiry so that they are
    // retried, and refreshes its queue statistics (read by nothing of ours); about 12 statements a pass, each minute by
    // default. Every five minutes here: our own sweeps take back what a dead worker held within seconds (lost.ts, the
    // heartbeat's), so the expiry is the last resort, and a job of a queue without a sweep (the cron jobs) whose
    // worker died is retried up to four minutes later than before. Its maintenance (deletion of old jobs) keeps its
    // own interval (a day), only looked for less often.
    superviseIntervalSeconds: SUPERVISE_SECONDS,
    monitorIntervalSeconds: SUPERVISE_SECONDS,
    // Its queue cache (each minute by default) serves what the service does not use (pg-boss's own LISTEN, burst
    // fetching); its instance row (every 30 s) is read by nothing on the job path; its background migrations (looked
    // for each minute) are there only after an upgrade of pg-boss, and start up to five minutes after it.
    queueCacheIntervalSeconds: SUPERVISE_SECONDS,
    instanceHeartbeatSeconds: SUPERVISE_SECONDS,
    bamIntervalSeconds: SUPERVISE_SECONDS,
  });
  boss.on('error', (error) => options.logger.error({ err: error }, 'job system error'));
  // A second attempt (pg-boss's own retry, a second later) if the first lost a race: processes starting together on a
  // database without pg-boss's schema both create it, and the loser gets a unique violation from the catalogue (behind
  // a transaction pooler, 8 times in 8; decision 0043). By the second attempt the schema is there and is only checked.
  await boss.start({ attempts: 2 });
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  /** Wakes the queue's idle workers of this process in `ms` (a job sent for later, a failed job's retry). */
  const wakeLater = (queue: string, ms: number): void => {
    if (!options.runWorkers || stopped) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      wakeIdle(queue, Infinity);
    }, Math.max(0, ms) + 10);
    timer.unref();
    timers.add(timer);
  };
  const sendMany: SendMany = async (queue, jobs, tx) => {
    if (jobs.length === 0) return;
    const db = tx ? inside(tx) : boss.getDb();
    const priorities = jobs.some((job) => job.fair) ? await fairPriorities(db, queue, jobs) : [];
    const inserts: JobInsert[] = jobs.map((job, i) => ({
      ...(job.id !== undefined ? { id: job.id } : {}),
      data: job.data,
      ...(job.startAfter !== undefined ? { startAfter: job.startAfter } : {}),
      ...(job.group !== undefined ? { group: { id: job.group } } : {}),
      ...(priorities[i] !== undefined ? { priority: priorities[i] } : {}),
    }));
    await boss.insert(queue, inserts, tx ? { db: inside(tx) } : {});
    // A job due now NOTIFYs (pg-boss, in the insert); one due later is not told: this process wakes its workers then.
    const later = jobs
      .map((job) =>
        job.startAfter instanceof Date
          ? job.startAfter.getTime() - Date.now()
          : typeof job.startAfter === 'number'
            ? job.startAfter * 1000
            : 0,
      )
      .filter((ms) => ms > 0);
    if (later.length > 0) wakeLater(queue, Math.min(...later));
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
  /** Every worker of the queue busy with a job fetches again as soon as it is done (not after its polling interval). */
  const fetchAgainWhenDone = (queue: string): void => {
    for (const worker of boss.getWipData()) {
      if (worker.name === queue && worker.state === 'active' && worker.count > 0) boss.notifyWorker(worker.id);
    }
  };
  for (const definition of options.definitions) {
    const queueOptions = { ...definition.queueOptions, notify: true };
    await boss.createQueue(definition.queue, queueOptions);
    await boss.updateQueue(definition.queue, queueOptions); // a queue made by an older version
    if (!options.runWorkers) continue;
    const handler = async (jobs: Job<object>[]) => {
      try {
        await definition.handle(jobs as Job<never>[], sendMany);
      } catch (error) {
        // pg-boss retries it after the queue's retry delay: this process's workers look for it then.
        wakeLater(definition.queue, (definition.queueOptions?.retryDelay ?? 0) * 1000);
        throw error;
      } finally {
        // While there are jobs, the workers go on at the speed of the handlers: this one (and any other busy one)
        // fetches again when done, and one idle worker now.
        if (definition.wakeAfterJob) {
          fetchAgainWhenDone(definition.queue);
          wakeIdle(definition.queue, 1);
        }
      }
    };
    // Every pg-boss worker polls on its own, one statement a poll. The safety net is one statement for every queue
    // (dueQueues below), so a worker's own poll is only its backstop: the queue's first worker polls
    // JOB_BACKSTOP_FACTOR times less often than the safety net, and its others ten times less often again (they are
    // woken like it), so that an idle queue of 32 workers is not 32 polls every interval.
    const concurrency = definition.concurrency ?? 1;
    const interval = definition.pollingIntervalSeconds ?? pollingIntervalSeconds * JOB_BACKSTOP_FACTOR;
    const settings = {
      batchSize: 1,
      ...(definition.groupConcurrency !== undefined ? { groupConcurrency: definition.groupConcurrency } : {}),
    };
    await boss.work(definition.queue, { ...settings, localConcurrency: 1, pollingIntervalSeconds: interval }, handler);
    if (concurrency > 1)
      await boss.work(
        definition.queue,
        { ...settings, localConcurrency: concurrency - 1, pollingIntervalSeconds: interval * 10 },
        handler,
      );
    if (definition.cron) await boss.schedule(definition.queue, definition.cron);
  }
  // The worker role hears each job due now (pg-boss's NOTIFY in the insert), and its safety net finds the others.
  const queues = new Set(options.definitions.map((definition) => definition.queue));
  const waking = options.runWorkers
    ? wakeWorkers(boss, { ...options, pollingIntervalSeconds }, queues, (queue) => wakeIdle(queue, Infinity))
    : null;
  return {
    boss,
    send: (queue, data) => boss.send(queue, data),
    sendMany,
    async failInTransaction(queue, jobs, tx) {
      if (jobs.length === 0) return;
      await boss.fail(queue, jobs, { value: { message: 'its worker process stopped beating' } }, { db: inside(tx) });
      const definition = options.definitions.find((d) => d.queue === queue);
      wakeLater(queue, (definition?.queueOptions?.retryDelay ?? 0) * 1000);
    },
    wake: (queue, count = Infinity) => wakeIdle(queue, count),
    async stop(timeoutMs) {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      await waking?.close();
      await boss.stop({ graceful: true, close: true, timeout: Math.max(timeoutMs, 1) });
    },
  };
}

/**
 * The priorities of jobs sent fair: minus the number of jobs of the same organisation (data.organizationId) already
 * waiting in the queue, counting down through the batch. pg-boss fetches the highest priority first (then the oldest),
 * so the first job of an organisation with nothing waiting goes before every job of a backlog, and two backlogs take
 * turns; within one organisation the order of sending is kept.
 */
async function fairPriorities(
  db: { executeSql: (text: string, values?: unknown[]) => Promise<{ rows: any[] }> },
  queue: string,
  jobs: JobToSend<object>[],
): Promise<(number | undefined)[]> {
  const organizationOf = (job: JobToSend<object>) =>
    job.fair ? (job.data as { organizationId?: unknown }).organizationId : undefined;
  const organizations = [...new Set(jobs.map(organizationOf).filter((id): id is string => typeof id === 'string'))];
  if (organizations.length === 0) return [];
  // pg-boss's own table (schema pgboss), which is not in our generated types: plain SQL through its executor.
  const { rows } = await db.executeSql(
    `SELECT data->>'organizationId' AS organization_id, count(*)::int AS waiting FROM ${JOBS_SCHEMA}.job
      WHERE name = $1 AND state IN ('created', 'retry') AND data->>'organizationId' = ANY($2::text[]) GROUP BY 1`,
    [queue, organizations],
  );
  const next = new Map<string, number>(organizations.map((id) => [id, 0]));
  for (const row of rows as { organization_id: string; waiting: number }[]) next.set(row.organization_id, row.waiting);
  return jobs.map((job) => {
    const organizationId = organizationOf(job);
    if (typeof organizationId !== 'string') return undefined;
    const rank = next.get(organizationId)!;
    next.set(organizationId, rank + 1);
    return -rank;
  });
}

/** Installs pg-boss's schema (for example into the test template database) and stops again. */
export async function installJobsSchema(databaseUrl: string): Promise<void> {
  const boss = new PgBoss({ connectionString: databaseUrl, schema: JOBS_SCHEMA, supervise: false, schedule: false });
  await boss.start();
  await boss.stop({ graceful: false, close: true });
}
