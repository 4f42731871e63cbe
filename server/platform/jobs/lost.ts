// Jobs lost between a worker taking them and claiming their work. A worker takes a pg-boss job (active), then claims
// what the job stands for in our own tables (a webhook delivery's send slot, a posting's claimed_by, a DMS document's
// job_id cleared), within milliseconds. A worker killed in between leaves the job active with nothing claimed: pg-boss
// would retry it only after the queue's expiry (a minute or more), and whatever it carried waited that long. A job
// active for UNCLAIMED_JOB_SECONDS whose claim is still missing is failed instead, so pg-boss retries it after the queue's
// retryDelay. A live worker that still reaches such a job finds its work claimed or done: each queue's claim makes the
// work happen once.
// One shape for every queue that claims: the queue and its "still unclaimed" condition (SQL over the job row `j`).
import { sql, type RawBuilder } from 'kysely';
import { inTransaction, type Db, type Tx } from '../database/transaction.js';
import { JOBS_SCHEMA } from './jobs.js';

/** How long a job may be active with its work unclaimed before it is taken for lost (a live worker claims at once). */
export const UNCLAIMED_JOB_SECONDS = 10;

/** Fails pg-boss jobs (by id and the retry count they were fetched at) inside the given transaction. */
export type FailJobs = (tx: Tx, jobs: { id: string; retryCount: number }[]) => Promise<void>;

/** A queue whose jobs claim their work, and the condition (over pg-boss's job row `j`) that the claim is missing. */
export interface ClaimingQueue {
  queue: string;
  unclaimed: RawBuilder<boolean>;
}

/** pg-boss's job rows lost that way (its own table, not in our generated types: raw SQL, bound values). */
const lostJobs = ({ queue, unclaimed }: ClaimingQueue, columns: RawBuilder<unknown>) => sql`SELECT ${columns}
  FROM ${sql.table(`${JOBS_SCHEMA}.job`)} j
  WHERE j.name = ${queue} AND j.state = 'active'
    AND j.started_on < now() - make_interval(secs => ${UNCLAIMED_JOB_SECONDS}) AND ${unclaimed}`;

/** Whether failLostJobs has a job of the queue to fail: read in the probe after each heartbeat of a worker. */
export const lostJobsExist = (claiming: ClaimingQueue) => sql<boolean>`EXISTS (${lostJobs(claiming, sql`1`)})`;

/** Fails the queue's lost jobs (up to 100 a call); pg-boss retries each after the queue's retryDelay. Returns how many. */
export async function failLostJobs(db: Db, claiming: ClaimingQueue, failJobs: FailJobs): Promise<number> {
  return inTransaction(db, async (tx) => {
    const { rows } = await sql<{ id: string; retry_count: number }>`${lostJobs(claiming, sql`j.id, j.retry_count`)}
      LIMIT 100`.execute(tx);
    if (rows.length > 0)
      await failJobs(
        tx,
        rows.map((row) => ({ id: row.id, retryCount: row.retry_count })),
      );
    return rows.length;
  });
}
