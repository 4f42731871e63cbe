// Every process of the service (role api, worker or all) has a row in service_processes and renews its heartbeat
// every HEARTBEAT_INTERVAL_MS (2 s: one statement, which also asks whether a worker has anything to sweep, so that an
// idle process runs half a statement a second for it; the lease is two and a half beats). The heartbeat is the lease of everything a worker holds while it works (its webhook send slots, see
// webhooks/slots.ts): a process whose heartbeat is older than PROCESS_LEASE_SECONDS is dead, and a live worker takes
// back what it held, so a crashed worker stalls nothing for longer than that. Health (GET /health, `admin health`)
// reads the same rows: which workers are alive, and when each was last heard of.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../database/transaction.js';

/** A process whose heartbeat is older than this is dead: what it held is taken back. */
export const PROCESS_LEASE_SECONDS = 5;
/**
 * How often a process renews its heartbeat (and a worker learns whether dead ones held anything). Less often makes an
 * idle process quieter but needs a longer lease (a dead worker's holdings wait longer): 2 s against the 5 s lease
 * leaves two missed beats before a live process looks dead.
 */
export const HEARTBEAT_INTERVAL_MS = 2_000;
/** Rows of processes not heard of for this long are deleted. */
const FORGET_AFTER_HOURS = 24;

export type ProcessRole = 'all' | 'api' | 'worker';

export interface ProcessHeartbeat {
  id: string;
  /** Stops the heartbeat and marks the process stopped (its holdings, if any are left, are taken back at once). */
  stop(): Promise<void>;
}

/** `now() - the lease`: interval arithmetic has no builder form; the seconds are bound. */
export const leaseCutoff = () => sql<Date>`now() - make_interval(secs => ${PROCESS_LEASE_SECONDS})`;

/**
 * Registers this process and renews its heartbeat every HEARTBEAT_INTERVAL_MS, then runs `afterBeat` (a worker's
 * sweep for the holdings of dead processes): after every beat, or, with `sweepWhen`, only after a beat whose statement
 * found it true (the probe rides on the beat's own UPDATE, so an idle worker runs one statement per beat). A failed
 * beat is logged and tried again at the next tick; a row deleted under a live process is written again.
 */
export async function startProcessHeartbeat(options: {
  db: Db;
  logger: Logger;
  role: ProcessRole;
  afterBeat?: () => Promise<void>;
  intervalMs?: number;
  id?: string;
  /** Whether afterBeat has anything to do: read in the beat's statement (RETURNING), by the database. */
  sweepWhen?: () => RawBuilder<boolean>;
}): Promise<ProcessHeartbeat> {
  const { db, logger } = options;
  const id = options.id ?? `proc_${randomUUID().replace(/-/g, '')}`;
  const row = { id, role: options.role, host: hostname().slice(0, 200), pid: process.pid };
  await db.insertInto('service_processes').values(row).execute();
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let beating: Promise<void> | null = null;

  async function beat(): Promise<void> {
    try {
      const renewed = await db
        .updateTable('service_processes')
        .set({ heartbeat_at: sql<Date>`now()` /* the database's clock, as the lease is read */ })
        .where('id', '=', id)
        .where('stopped_at', 'is', null)
        .returning((options.sweepWhen ?? (() => sql<boolean>`true`))().as('sweep'))
        .executeTakeFirst();
      if (!renewed) {
        logger.warn({ processId: id }, 'this process was forgotten; registering it again');
        await db
          .insertInto('service_processes')
          .values(row)
          .onConflict((oc) =>
            oc.column('id').doUpdateSet({ heartbeat_at: sql<Date>`now()` /* as above */, stopped_at: null }),
          )
          .execute();
      }
      if (!renewed || renewed.sweep) await options.afterBeat?.();
    } catch (error) {
      if (!stopped) logger.error({ err: error, processId: id }, 'process heartbeat failed; trying again');
    }
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = null;
      beating = beat().finally(() => {
        beating = null;
        schedule();
      });
    }, options.intervalMs ?? HEARTBEAT_INTERVAL_MS);
  }
  await options.afterBeat?.().catch((error: unknown) => logger.error({ err: error }, 'first sweep failed'));
  schedule();

  return {
    id,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await beating;
      await db
        .updateTable('service_processes')
        .set({ stopped_at: sql<Date>`now()` /* the database's clock */ })
        .where('id', '=', id)
        .execute()
        .catch((error: unknown) =>
          logger.warn({ err: error }, 'could not mark this process stopped; its lease ends on its own'),
        );
    },
  };
}

export interface ProcessStatus {
  id: string;
  role: ProcessRole;
  host: string;
  pid: number;
  startedAt: Date;
  heartbeatAt: Date;
  /** Seconds since the last heartbeat, by the database's clock. */
  silentSeconds: number;
  alive: boolean;
}

/** The processes heard of in the last FORGET_AFTER_HOURS, newest first, each with whether it is alive. */
export async function listProcesses(db: Db): Promise<ProcessStatus[]> {
  const rows = await db
    .selectFrom('service_processes')
    .select(['id', 'role', 'host', 'pid', 'started_at', 'heartbeat_at', 'stopped_at'])
    // Seconds since the heartbeat and the lease's test by the database's clock (the one every process writes with).
    .select(sql<number>`extract(epoch FROM now() - heartbeat_at)::float8`.as('silent_seconds'))
    .select(
      sql<boolean>`(stopped_at IS NULL AND heartbeat_at > now() - make_interval(secs => ${PROCESS_LEASE_SECONDS}))`.as(
        'alive',
      ),
    )
    .orderBy('started_at', 'desc')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    role: r.role as ProcessRole,
    host: r.host,
    pid: r.pid,
    startedAt: r.started_at,
    heartbeatAt: r.heartbeat_at,
    silentSeconds: Math.max(0, Number(r.silent_seconds)),
    alive: r.alive,
  }));
}

/** Whether forgetOldProcesses has a row to delete (part of a worker's probe after each beat). */
export const oldProcessesExist = () =>
  // now() minus hours: interval arithmetic has no builder form; the hours are bound.
  sql<boolean>`EXISTS (SELECT 1 FROM service_processes WHERE heartbeat_at < now() - make_interval(hours => ${FORGET_AFTER_HOURS}))`;

/** Deletes the rows of processes not heard of for a day (a worker does it in its sweep). */
export async function forgetOldProcesses(db: Db): Promise<void> {
  // now() minus hours: interval arithmetic has no builder form; the hours are bound.
  await db
    .deleteFrom('service_processes')
    .where('heartbeat_at', '<', sql<Date>`now() - make_interval(hours => ${FORGET_AFTER_HOURS})`)
    .execute();
}

/** The worker processes (role worker or all) alive now, and the newest heartbeat of any heard of in the last day. */
export async function workerHealth(db: Db): Promise<{ alive: number; lastHeartbeatAt: Date | null }> {
  const row = await db
    .selectFrom('service_processes')
    // The lease's test by the database's clock: interval arithmetic has no builder form; the seconds are bound.
    .select(
      sql<number>`count(*) FILTER (WHERE stopped_at IS NULL AND heartbeat_at > now() - make_interval(secs => ${PROCESS_LEASE_SECONDS}))::int`.as(
        'alive',
      ),
    )
    .select((eb) => eb.fn.max('heartbeat_at').as('last'))
    .where('role', 'in', ['worker', 'all'])
    .executeTakeFirstOrThrow();
  return { alive: Number(row.alive), lastHeartbeatAt: row.last ? new Date(row.last) : null };
}

export interface QueueDepth {
  queue: string;
  /** Jobs due now and not yet taken by a worker. */
  waiting: number;
  /** Jobs a worker holds. */
  active: number;
  /** Jobs scheduled for later (retries, a delivery's next attempt). */
  scheduled: number;
  /** Seconds the oldest waiting job has been due; 0 when none waits. */
  oldestWaitingSeconds: number;
}

/** Each job queue's depth, read from pg-boss's job table (queues with no unfinished job are left out). */
export async function queueDepths(db: Db): Promise<QueueDepth[]> {
  // pg-boss's own table (schema pgboss), which is not in our generated types: the builder cannot name it.
  const { rows } = await sql<{
    queue: string;
    waiting: number;
    active: number;
    scheduled: number;
    oldest: number | null;
  }>`
    SELECT name AS queue,
           count(*) FILTER (WHERE state IN ('created', 'retry') AND start_after <= now())::int AS waiting,
           count(*) FILTER (WHERE state = 'active')::int AS active,
           count(*) FILTER (WHERE state IN ('created', 'retry') AND start_after > now())::int AS scheduled,
           extract(epoch FROM now() - min(start_after) FILTER (WHERE state IN ('created', 'retry') AND start_after <= now()))::float8 AS oldest
      FROM pgboss.job WHERE state IN ('created', 'retry', 'active') GROUP BY name ORDER BY name`.execute(db);
  return rows.map((r) => ({
    queue: r.queue,
    waiting: r.waiting,
    active: r.active,
    scheduled: r.scheduled,
    oldestWaitingSeconds: Math.max(0, Math.round((r.oldest ?? 0) * 10) / 10),
  }));
}
