// Due postings become jobs: rows written in their documents' transactions (or put back by `admin postings retry`, or
// freed from a dead worker) with no job yet get one pg-boss job each, and are marked queued, in one transaction
// (claimed FOR UPDATE SKIP LOCKED, so several workers dispatch side by side without queueing one row twice). A job's
// own retries are sent by the job itself (run.ts), so a row is queued here only once per life. Fair to every
// organisation (decision 0040): a pass takes up to `batch` due rows of each organisation with any due, and their jobs
// are sent fair, so one organisation's thousands of postings do not hold another's first one behind them.
import { sql } from 'kysely';
import { inTransaction, type Db } from '../../platform/database/transaction.js';
import type { ClaimingQueue } from '../../platform/jobs/lost.js';
import { leaseCutoff } from '../../platform/jobs/processes.js';
import { JOBS_SCHEMA, type SendMany } from '../../platform/jobs/jobs.js';
import { startDispatchLoop, type BackgroundLoop, type LoopSafetyNet } from '../../platform/jobs/loop.js';
import { POSTING_QUEUE, type PostingJob } from './run.js';

/** Organisations served in one pass at most (the others in the next, at once). */
const ORGANIZATIONS_PER_PASS = 100;

/** Queues up to `batch` due postings of each organisation that has some; returns how many. */
export async function dispatchPostings(db: Db, sendMany: SendMany, batch = 200): Promise<number> {
  return inTransaction(db, async (tx) => {
    // Each organisation's oldest due rows, side by side: a LATERAL per organisation with due rows (the lock is taken in
    // it, FOR UPDATE SKIP LOCKED, so several workers dispatch side by side without queueing one row twice).
    const organizations = tx
      .selectFrom('external_postings')
      .select('organization_id')
      .distinct()
      .where('queued_at', 'is', null)
      .where('status', '=', 'pending')
      // Due by the database's clock.
      .where('next_attempt_at', '<=', sql<Date>`now()`)
      .limit(ORGANIZATIONS_PER_PASS);
    const due = await tx
      .selectFrom(organizations.as('o'))
      .innerJoinLateral(
        (eb) =>
          eb
            .selectFrom('external_postings as p')
            .select(['p.organization_id', 'p.id'])
            .whereRef('p.organization_id', '=', 'o.organization_id')
            .where('p.queued_at', 'is', null)
            .where('p.status', '=', 'pending')
            .where('p.next_attempt_at', '<=', sql<Date>`now()`) // as above
            .orderBy('p.next_attempt_at')
            .limit(batch)
            .forUpdate()
            .skipLocked()
            .as('d'),
        (join) => join.onTrue(),
      )
      .select(['d.organization_id', 'd.id'])
      .execute();
    if (due.length === 0) return 0;
    // Marked queued, each in a job of its own whose id the database makes (gen_random_uuid) and the row keeps.
    const marked = await tx
      .updateTable('external_postings')
      .set((eb) => ({ queued_at: eb.fn<Date>('now'), job_id: sql<string>`gen_random_uuid()` }))
      .where((eb) =>
        eb(
          eb.refTuple('organization_id', 'id'),
          'in',
          due.map((row) => eb.tuple(row.organization_id, row.id)),
        ),
      )
      .returning(['organization_id', 'id', 'job_id'])
      .execute();
    const jobOf = new Map(marked.map((row) => [`${row.organization_id}|${row.id}`, row.job_id!]));
    // In the order they fell due (RETURNING keeps none).
    await sendMany<PostingJob>(
      POSTING_QUEUE,
      due.map((row) => ({
        id: jobOf.get(`${row.organization_id}|${row.id}`)!,
        data: { organizationId: row.organization_id, postingId: row.id },
        fair: true,
      })),
      tx,
    );
    return due.length;
  });
}

/**
 * When the next posting not yet queued falls due (a row written for later), or null, as SQL: read by the loop when it
 * goes idle (it sleeps until then) and by the worker's safety net (loop.ts's startLoopSafetyNet).
 */
export const postingsDueAt = () =>
  sql<Date | null>`SELECT min(next_attempt_at) FROM external_postings WHERE queued_at IS NULL AND status = 'pending'`;

/** When the next posting not yet queued falls due, or null: the loop sleeps until then. */
export async function nextPostingDueAt(db: Db): Promise<Date | null> {
  const { rows } = await sql<{ at: Date | null }>`SELECT (${postingsDueAt()}) AS at`.execute(db);
  return rows[0]?.at ? new Date(rows[0].at) : null;
}

/** How often a queued posting whose attempt is due and unclaimed has its job looked up (gone: queued again). */
export const UNCLAIMED_SECONDS = 60;

/** Its job (job_id) still waits or runs (pg-boss's own table, not in our generated types: raw SQL, bound values). */
const jobAlive = sql<boolean>`EXISTS (SELECT 1 FROM ${sql.table(`${JOBS_SCHEMA}.job`)} j
  WHERE j.name = ${POSTING_QUEUE} AND j.id = external_postings.job_id AND j.state IN ('created', 'retry', 'active'))`;

/** Claimed by a process that stopped or stopped beating (by the database's clock: leaseCutoff). */
const deadClaim = sql<boolean>`(external_postings.claimed_by IS NOT NULL AND NOT EXISTS (SELECT 1 FROM service_processes p
  WHERE p.id = external_postings.claimed_by AND p.stopped_at IS NULL AND p.heartbeat_at > ${leaseCutoff()}))`;

/** Queued, due and unclaimed for UNCLAIMED_SECONDS (the database's clock, the seconds bound): its job to look up. */
const longUnclaimed = sql<boolean>`(external_postings.claimed_by IS NULL
  AND external_postings.next_attempt_at < now() - make_interval(secs => ${UNCLAIMED_SECONDS})
  AND external_postings.queued_at < now() - make_interval(secs => ${UNCLAIMED_SECONDS}))`;

/**
 * Postings whose attempt belonged to a dead process, or queued long ago and unclaimed with their job gone (failed for
 * good, or never there: a row queued before jobs were named), are queued again (their request id is unchanged: if
 * the dead attempt reached the system, the new one books nothing twice). One whose job still waits or runs is only
 * looked at again after UNCLAIMED_SECONDS: a long queue (a system's rate limit) does not send it twice (measured
 * before: about 2.3 jobs a posting on a real day's mix). Runs after each heartbeat of a worker. Returns how many are
 * queued again.
 */
export async function requeueAbandonedPostings(db: Db): Promise<number> {
  const pending = db
    .updateTable('external_postings')
    .where('status', '=', 'pending')
    .where('queued_at', 'is not', null);
  // Their job waits in the queue or runs: looked at again later (the database's clock).
  await pending.set({ queued_at: sql<Date>`now()` }).where(sql<boolean>`${longUnclaimed} AND ${jobAlive}`).execute();
  const result = await pending
    .set({ queued_at: null, claimed_by: null })
    // The dead claims, and the long unclaimed whose job is gone (the conditions above).
    .where(sql<boolean>`(${deadClaim} OR (${longUnclaimed} AND NOT ${jobAlive}))`)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Whether requeueAbandonedPostings has a row to look at: read in the probe after each heartbeat (the index on queued_at). */
export const abandonedPostingsExist = () => sql<boolean>`EXISTS (SELECT 1 FROM external_postings
  WHERE status = 'pending' AND queued_at IS NOT NULL AND (${deadClaim} OR ${longUnclaimed}))`;

/**
 * Posting jobs whose worker died between taking the job and claiming the posting (jobs/lost.ts): a live runner claims
 * it, or finds it done or busy, within milliseconds of taking the job. Without this its posting waited for
 * UNCLAIMED_SECONDS and its job for its expiry (measured: the last 2-3 of 200 postings held about a minute after a
 * worker was killed).
 */
export const unclaimedPostingJobs: ClaimingQueue = {
  queue: POSTING_QUEUE,
  // Over pg-boss's job row `j` (lost.ts's raw SQL): its posting is still pending and unclaimed.
  unclaimed: sql<boolean>`EXISTS (SELECT 1 FROM external_postings ep
    WHERE ep.organization_id = j.data->>'organizationId' AND ep.id = j.data->>'postingId'
      AND ep.status = 'pending' AND ep.claimed_by IS NULL)`,
};

export type PostingDispatcher = BackgroundLoop;

/** The dispatch loop of a worker: when woken, when the next row falls due, at once again while there is work. */
export function startPostingDispatcher(options: {
  db: Db;
  sendMany: SendMany;
  onError: (error: unknown) => void;
  wake?: (count: number) => void;
  pollIntervalMs?: number;
  /** The worker's safety net, which watches the loop (when given, pollIntervalMs is only the loop's backstop). */
  safetyNet?: LoopSafetyNet;
}): PostingDispatcher {
  const loop = startDispatchLoop({
    dispatch: () => dispatchPostings(options.db, options.sendMany),
    nextDueAt: () => nextPostingDueAt(options.db),
    onError: options.onError,
    wake: options.wake,
    pollIntervalMs: options.pollIntervalMs,
  });
  options.safetyNet?.watch(loop, postingsDueAt());
  return loop;
}
