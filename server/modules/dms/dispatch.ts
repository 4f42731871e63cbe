// Due DMS documents become jobs. A document is due when it was just received, when something it waits for has
// arrived (process.ts wake), when its next retry comes, or when the job that had it died (its lease ran out). The
// dispatcher leases the due documents (next_attempt_at moved LEASE_SECONDS ahead) and sends one dms.process job per
// 50 of one organisation, in the order they were received, in one transaction. A document is posted only under its
// row lock and while `received`, so a document leased twice (a slow job) is still posted once.
import { sql } from 'kysely';
import { inTransaction, type Db } from '../../platform/database/transaction.js';
import type { SendMany } from '../../platform/jobs/jobs.js';
import { startDispatchLoop, type BackgroundLoop } from '../../platform/jobs/loop.js';
import { parseNextFile } from './files.js';

export const DMS_QUEUE = 'dms.process';
/** How long a dispatched document is left to its job before it is dispatched again. */
export const LEASE_SECONDS = 30;
/** Documents per job: one posting transaction's share (process.ts DOCUMENTS_PER_TRANSACTION). */
export const DOCUMENTS_PER_JOB = 50;

export interface DmsJob {
  organizationId: string;
  documentIds: string[];
}

/** Leases up to `batch` due documents and sends their jobs; returns how many. */
export async function dispatchDmsDocuments(db: Db, sendMany: SendMany, batch = 1_000): Promise<number> {
  return inTransaction(db, async (tx) => {
    const due = await tx.selectFrom('dms_documents').select(['organization_id', 'id'])
      .where('state', '=', 'received')
      // Due by the database's clock.
      .where('next_attempt_at', '<=', sql<Date>`now()`)
      .orderBy('next_attempt_at').orderBy('received_at').orderBy('batch_id').orderBy('position')
      .limit(batch).forUpdate().skipLocked().execute();
    if (due.length === 0) return 0;
    await tx.updateTable('dms_documents')
      // The lease, by the database's clock; the seconds are bound.
      .set({ next_attempt_at: sql<Date>`now() + make_interval(secs => ${LEASE_SECONDS})` })
      .where((eb) => eb(eb.refTuple('organization_id', 'id'), 'in', due.map((row) => eb.tuple(row.organization_id, row.id))))
      .execute();
    const byOrganization = new Map<string, string[]>();
    for (const row of due) byOrganization.set(row.organization_id, [...(byOrganization.get(row.organization_id) ?? []), row.id]);
    const jobs = [...byOrganization].flatMap(([organizationId, ids]) => {
      const chunks: string[][] = [];
      for (let i = 0; i < ids.length; i += DOCUMENTS_PER_JOB) chunks.push(ids.slice(i, i + DOCUMENTS_PER_JOB));
      return chunks.map((documentIds) => ({ data: { organizationId, documentIds } satisfies DmsJob }));
    });
    await sendMany<DmsJob>(DMS_QUEUE, jobs, tx);
    return jobs.length;
  });
}

/** The dispatch loop of a worker: every pollIntervalMs, at once again while there is work. */
export function startDmsDispatcher(options: { db: Db; sendMany: SendMany; onError: (error: unknown) => void; wake?: (count: number) => void; pollIntervalMs?: number }): BackgroundLoop {
  return startDispatchLoop({
    // A file waiting is parsed first (its documents become due), one per pass while there are any.
    dispatch: async () => (await parseNextFile(options.db) ? 1 : 0) + await dispatchDmsDocuments(options.db, options.sendMany),
    onError: options.onError, wake: options.wake, pollIntervalMs: options.pollIntervalMs,
  });
}
