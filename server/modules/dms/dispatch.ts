// Due DMS documents become jobs. A document is due when it was just received, when something it waits for has
// arrived (process.ts wake), when its next retry comes, or when the job that had it died (its lease ran out). The
// dispatcher leases the due documents (next_attempt_at moved LEASE_SECONDS ahead) and sends one dms.process job per
// 50 of one organisation, in the order they were received, in one transaction. A document is posted only under its
// row lock and while `received`, so a document leased twice (a slow job) is still posted once.
//
// Fair to every distributor (decision 0040): a pass leases up to `batch` due documents of each organisation with any
// due (not `batch` in one global order), and sends their jobs fair (jobs.ts: behind their own organisation's waiting
// jobs only), so a 10,000-document file of one organisation does not hold another's one-document push behind it.
// Files are parsed by a loop of their own, first files of each organisation first: a long parse never holds the
// documents' dispatch.
import { sql } from 'kysely';
import { inTransaction, type Db } from '../../platform/database/transaction.js';
import type { SendMany } from '../../platform/jobs/jobs.js';
import {
  DEFAULT_POLL_INTERVAL_MS,
  loopsTogether,
  startDispatchLoop,
  startLoop,
  type BackgroundLoop,
} from '../../platform/jobs/loop.js';
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

/** Organisations served in one pass at most (the others in the next, at once). */
const ORGANIZATIONS_PER_PASS = 100;

/** Leases up to `batch` due documents of each organisation that has some and sends their jobs; returns how many jobs. */
export async function dispatchDmsDocuments(db: Db, sendMany: SendMany, batch = 1_000): Promise<number> {
  return inTransaction(db, async (tx) => {
    const organizations = tx
      .selectFrom('dms_documents')
      .select('organization_id')
      .distinct()
      .where('state', '=', 'received')
      // Due by the database's clock.
      .where('next_attempt_at', '<=', sql<Date>`now()`)
      .limit(ORGANIZATIONS_PER_PASS);
    // Each organisation's due documents in its own order, locked in the LATERAL (FOR UPDATE SKIP LOCKED: two
    // dispatchers never lease one document).
    const due = await tx
      .selectFrom(organizations.as('o'))
      .innerJoinLateral(
        (eb) =>
          eb
            .selectFrom('dms_documents as d')
            .select(['d.organization_id', 'd.id'])
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
      .select(['due.organization_id', 'due.id'])
      .execute();
    if (due.length === 0) return 0;
    await tx
      .updateTable('dms_documents')
      // The lease, by the database's clock; the seconds are bound.
      .set({ next_attempt_at: sql<Date>`now() + make_interval(secs => ${LEASE_SECONDS})` })
      .where((eb) =>
        eb(
          eb.refTuple('organization_id', 'id'),
          'in',
          due.map((row) => eb.tuple(row.organization_id, row.id)),
        ),
      )
      .execute();
    const byOrganization = new Map<string, string[]>();
    for (const row of due)
      byOrganization.set(row.organization_id, [...(byOrganization.get(row.organization_id) ?? []), row.id]);
    const jobs = [...byOrganization].flatMap(([organizationId, ids]) => {
      const chunks: string[][] = [];
      for (let i = 0; i < ids.length; i += DOCUMENTS_PER_JOB) chunks.push(ids.slice(i, i + DOCUMENTS_PER_JOB));
      return chunks.map((documentIds) => ({ data: { organizationId, documentIds } satisfies DmsJob, fair: true }));
    });
    await sendMany<DmsJob>(DMS_QUEUE, jobs, tx);
    return jobs.length;
  });
}

/**
 * When the next received document falls due (a retry, a lease that runs out), or null: the loop sleeps until then.
 * (A document woken by what it waits for is due now, and its UPDATE notifies.)
 */
export async function nextDmsDocumentDueAt(db: Db): Promise<Date | null> {
  const row = await db
    .selectFrom('dms_documents')
    .select((eb) => eb.fn.min('next_attempt_at').as('at'))
    .where('state', '=', 'received')
    .executeTakeFirst();
  return row?.at ? new Date(row.at) : null;
}

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
  return loopsTogether([documents, files]);
}
