// Due DMS documents become jobs. A document is due when it was just received, when something it waits for has
// arrived (process.ts wake), when its next retry comes, or when the job that had it died. The dispatcher sends one
// dms.process job per 50 due documents of one organisation, in the order they were received, and marks each document
// queued in its job (job_id), in one transaction. A document is sent once while it waits in the queue, however long
// the queue: when a queued document's next_attempt_at comes (QUEUED_CHECK_SECONDS), its job is looked up, and one
// still waiting or running keeps it (no second job; measured before: each job sent about 20 times on a real day's
// mix, its 30 s lease running out while it queued). Only a job gone without claiming it (failed for good) has it sent
// again. A job claims its documents when it starts (claimDocuments, from the manifest's handler: job_id cleared,
// claimed_by its process, LEASE_SECONDS to post them); a job whose worker died before claiming is failed by the sweep
// after UNCLAIMED_JOB_SECONDS (jobs/lost.ts) and retried, and the documents of a job whose process died while posting
// them are due again by the sweep within the heartbeat lease (requeueAbandonedDocuments; their own lease is the last
// resort). A document is posted only under its row lock and while `received`, so a document held by two jobs is still
// posted once.
//
// Fair to every distributor (decision 0040): a pass leases up to `batch` due documents of each organisation with any
// due (not `batch` in one global order), and sends their jobs fair (jobs.ts: behind their own organisation's waiting
// jobs only), so a 10,000-document file of one organisation does not hold another's one-document push behind it.
// Files are parsed by a loop of their own, first files of each organisation first: a long parse never holds the
// documents' dispatch.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { inTransaction, type Db, type Tx } from '../../platform/database/transaction.js';
import { JOBS_SCHEMA, type SendMany } from '../../platform/jobs/jobs.js';
import type { ClaimingQueue } from '../../platform/jobs/lost.js';
import { leaseCutoff } from '../../platform/jobs/processes.js';
import {
  DEFAULT_POLL_INTERVAL_MS,
  loopsTogether,
  startDispatchLoop,
  startLoop,
  type LoopSafetyNet,
  type BackgroundLoop,
} from '../../platform/jobs/loop.js';
import { parseNextFile } from './files.js';

export const DMS_QUEUE = 'dms.process';
/** How long a claimed document is left to its running job before it is dispatched again (its job died). */
export const LEASE_SECONDS = 30;
/** How often a queued document's job is looked up (still waiting or running: it keeps the document). */
export const QUEUED_CHECK_SECONDS = 60;
/** Documents per job: one posting transaction's share (process.ts DOCUMENTS_PER_TRANSACTION). */
export const DOCUMENTS_PER_JOB = 50;

export interface DmsJob {
  organizationId: string;
  documentIds: string[];
}

/**
 * Sends jobs for up to `batch` due documents of each organisation that has some (those whose job still waits or runs
 * are only looked at again later); returns how many jobs.
 */
export async function dispatchDmsDocuments(db: Db, sendMany: SendMany, batch = 1_000): Promise<number> {
  return inTransaction(db, async (tx) => {
    const due = await dueDocuments(tx, batch);
    if (due.length === 0) return 0;
    // Queued in a job that still waits or runs: looked at again later, no second job.
    const queued = due.filter((row) => row.queued);
    if (queued.length > 0) await holdQueued(tx, queued);
    const byOrganization = new Map<string, string[]>();
    for (const row of due)
      if (!row.queued)
        byOrganization.set(row.organization_id, [...(byOrganization.get(row.organization_id) ?? []), row.id]);
    const jobs = [...byOrganization].flatMap(([organizationId, ids]) => {
      const chunks: string[][] = [];
      for (let i = 0; i < ids.length; i += DOCUMENTS_PER_JOB) chunks.push(ids.slice(i, i + DOCUMENTS_PER_JOB));
      // The job's id is ours, so that its documents name it in the same transaction.
      return chunks.map((documentIds) => ({
        id: randomUUID(),
        data: { organizationId, documentIds } satisfies DmsJob,
        fair: true,
      }));
    });
    if (jobs.length === 0) return 0;
    for (const job of jobs)
      await tx
        .updateTable('dms_documents')
        // Queued in the job; its next look by the database's clock (the seconds bound).
        .set({ job_id: job.id, next_attempt_at: sql<Date>`now() + make_interval(secs => ${QUEUED_CHECK_SECONDS})` })
        .where('organization_id', '=', job.data.organizationId)
        .where('id', 'in', job.data.documentIds)
        .execute();
    await sendMany<DmsJob>(DMS_QUEUE, jobs, tx);
    return jobs.length;
  });
}

/** Organisations served in one pass at most (the others in the next, at once). */
const ORGANIZATIONS_PER_PASS = 100;

/**
 * Up to `batch` due documents of each organisation that has some, each organisation's in its own order, locked (FOR
 * UPDATE SKIP LOCKED: two dispatchers never send one document), and whether each is queued in a job that still
 * waits or runs.
 */
async function dueDocuments(tx: Tx, batch: number) {
  const organizations = tx
    .selectFrom('dms_documents')
    .select('organization_id')
    .distinct()
    .where('state', '=', 'received')
    // Due by the database's clock.
    .where('next_attempt_at', '<=', sql<Date>`now()`)
    .limit(ORGANIZATIONS_PER_PASS);
  return tx
    .selectFrom(organizations.as('o'))
    .innerJoinLateral(
      (eb) =>
        eb
          .selectFrom('dms_documents as d')
          .select(['d.organization_id', 'd.id', 'd.job_id'])
          .whereRef('d.organization_id', '=', 'o.organization_id')
          .where('d.state', '=', 'received')
          .where('d.next_attempt_at', '<=', sql<Date>`now()`) // as above
          .orderBy('d.next_attempt_at')
          .orderBy('d.received_at')
          .orderBy('d.batch_id')
          .orderBy('d.position')
          .limit(batch)
          .forUpdate()
          .skipLocked()
          .as('due'),
      (join) => join.onTrue(),
    )
    .select([
      'due.organization_id',
      'due.id',
      // pg-boss's own job table is not in our generated types: its job, by our id, still waiting or running.
      sql<boolean>`(due.job_id IS NOT NULL AND EXISTS (SELECT 1 FROM ${sql.table(`${JOBS_SCHEMA}.job`)} j
        WHERE j.name = ${DMS_QUEUE} AND j.id = due.job_id AND j.state IN ('created', 'retry', 'active')))`.as('queued'),
    ])
    .execute();
}

/** Documents whose job still waits or runs: looked at again after QUEUED_CHECK_SECONDS (the database's clock, bound). */
async function holdQueued(tx: Tx, queued: readonly { organization_id: string; id: string }[]): Promise<void> {
  await tx
    .updateTable('dms_documents')
    // The next look, by the database's clock; the seconds are bound.
    .set({ next_attempt_at: sql<Date>`now() + make_interval(secs => ${QUEUED_CHECK_SECONDS})` })
    .where((eb) =>
      eb(
        eb.refTuple('organization_id', 'id'),
        'in',
        queued.map((row) => eb.tuple(row.organization_id, row.id)),
      ),
    )
    .execute();
}

/**
 * A job's start: the documents queued in it are its own now (job_id cleared, claimed by this process), and left to
 * it for LEASE_SECONDS. If its process dies posting them, the sweep makes them due again within the heartbeat lease
 * (requeueAbandonedDocuments); the lease is the last resort. Those another job or an earlier run of it took are not
 * touched.
 */
export async function claimDocuments(db: Db, processId: string, jobId: string, job: DmsJob): Promise<void> {
  if (job.documentIds.length === 0) return;
  await db
    .updateTable('dms_documents')
    // The lease, by the database's clock; the seconds are bound.
    .set({
      job_id: null,
      claimed_by: processId,
      next_attempt_at: sql<Date>`now() + make_interval(secs => ${LEASE_SECONDS})`,
    })
    .where('organization_id', '=', job.organizationId)
    .where('id', 'in', job.documentIds)
    .where('job_id', '=', jobId)
    .execute();
}

/** A job's end: its documents are no longer claimed (those still received are due at the time their flag says). */
export async function releaseDocuments(db: Db, processId: string, job: DmsJob): Promise<void> {
  if (job.documentIds.length === 0) return;
  await db
    .updateTable('dms_documents')
    .set({ claimed_by: null })
    .where('organization_id', '=', job.organizationId)
    .where('id', 'in', job.documentIds)
    .where('claimed_by', '=', processId)
    .execute();
}

/** Claims of processes that stopped or stopped beating (by the database's clock: leaseCutoff). */
const deadClaim = sql<boolean>`(dms_documents.claimed_by IS NOT NULL AND NOT EXISTS (SELECT 1 FROM service_processes p
  WHERE p.id = dms_documents.claimed_by AND p.stopped_at IS NULL AND p.heartbeat_at > ${leaseCutoff()}))`;

/**
 * Documents claimed by a dead process are no longer claimed, and those still received are due now (what the dead
 * job posted was committed with its flag, and is no longer received). Runs in a worker's sweep; returns how many.
 */
export async function requeueAbandonedDocuments(db: Db): Promise<number> {
  const result = await db
    .updateTable('dms_documents')
    // Due now by the database's clock (a document that was already done keeps its time).
    .set({
      claimed_by: null,
      next_attempt_at: sql<Date>`CASE WHEN state = 'received' THEN now() ELSE next_attempt_at END`,
    })
    // The dead claims (deadClaim: the claimed_by index finds the claimed few).
    .where(deadClaim)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Whether requeueAbandonedDocuments has a document to free: the same condition, read in the probe after each heartbeat. */
export const abandonedDocumentsExist = () => sql<boolean>`EXISTS (SELECT 1 FROM dms_documents WHERE ${deadClaim})`;

/**
 * DMS jobs whose worker died between taking the job and claiming its documents (jobs/lost.ts): a live job claims them
 * when it starts (claimDocuments). Failed, they are retried after the queue's retryDelay, not its expiry.
 */
export const unclaimedDmsJobs: ClaimingQueue = {
  queue: DMS_QUEUE,
  // Over pg-boss's job row `j` (lost.ts's raw SQL): one of its documents still names it. By the primary key.
  unclaimed: sql<boolean>`EXISTS (SELECT 1 FROM dms_documents d
    WHERE d.organization_id = j.data->>'organizationId'
      AND d.id IN (SELECT jsonb_array_elements_text(j.data->'documentIds')) AND d.job_id = j.id)`,
};

/**
 * When the next received document falls due (a retry, a lease that runs out), or null: the loop sleeps until then.
 * (A document woken by what it waits for is due now, and its UPDATE notifies.)
 */
export async function nextDmsDocumentDueAt(db: Db): Promise<Date | null> {
  const { rows } = await sql<{ at: Date | null }>`SELECT (${dmsDocumentsDueAt()}) AS at`.execute(db);
  return rows[0]?.at ? new Date(rows[0].at) : null;
}

/** The same as SQL, also read by the worker's safety net (loop.ts's startLoopSafetyNet). */
export const dmsDocumentsDueAt = () =>
  sql<Date | null>`SELECT min(next_attempt_at) FROM dms_documents WHERE state = 'received'`;

/** Whether a file waits to be parsed (now, as SQL), or null: the files' loop's part of the worker's safety net. */
export const dmsFilesDueAt = () =>
  sql<Date | null>`SELECT now() WHERE EXISTS (SELECT 1 FROM dms_batches
    WHERE source = 'xml_file' AND file_status = 'received')`;

/**
 * The DMS loops of a worker: files (one parsed per pass, while there are any) and documents (leased and sent as
 * jobs), each when woken, when its next work falls due, and at once again while there is work.
 */
export function startDmsDispatcher(options: {
  db: Db;
  sendMany: SendMany;
  onError: (error: unknown) => void;
  wake?: (count: number) => void;
  pollIntervalMs?: number;
  /** The worker's safety net, which watches each loop (when given, pollIntervalMs is only the loops' backstop). */
  safetyNet?: LoopSafetyNet;
}): BackgroundLoop {
  const documents = startDispatchLoop({
    dispatch: () => dispatchDmsDocuments(options.db, options.sendMany),
    nextDueAt: () => nextDmsDocumentDueAt(options.db),
    onError: options.onError,
    wake: options.wake,
    pollIntervalMs: options.pollIntervalMs,
  });
  const files = startLoop({
    // A parsed file's documents are inserted received and due: their trigger wakes the documents' loop.
    pass: () => parseNextFile(options.db),
    onError: options.onError,
    pollIntervalMs: options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
  });
  options.safetyNet?.watch(documents, dmsDocumentsDueAt());
  options.safetyNet?.watch(files, dmsFilesDueAt());
  return loopsTogether([documents, files]);
}
