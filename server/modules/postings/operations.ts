// What the operator sees and does about postings (the CLI's `admin postings`): the documents and where they stand in
// each system, and a retry of what failed.
import { inTransaction, type Db, type Tx } from '../../platform/database/transaction.js';
import type { PostedDocumentType } from './queue.js';
import { subjectOf } from './registry.js';

export interface PostingView {
  postingId: string;
  documentType: string;
  documentId: string;
  documentNumber: string;
  system: string;
  operation: string;
  status: string;
  attempts: number;
  externalType: string | null;
  externalRef: string | null;
  reason: string | null;
  nextAttemptAt: string;
  updatedAt: string;
}

export async function listPostings(
  db: Db,
  organizationId: string,
  filters: { status?: string; limit?: number; id?: string } = {},
): Promise<PostingView[]> {
  let query = db
    .selectFrom('external_postings')
    .select([
      'id',
      'document_type',
      'document_id',
      'document_number',
      'system',
      'operation',
      'status',
      'attempts',
      'external_type',
      'external_ref',
      'reason',
      'next_attempt_at',
      'updated_at',
    ])
    .where('organization_id', '=', organizationId);
  if (filters.status) query = query.where('status', '=', filters.status);
  if (filters.id) query = query.where('id', '=', filters.id);
  const rows = await query
    .orderBy('updated_at', 'desc')
    .orderBy('id', 'desc')
    .limit(filters.limit ?? 100)
    .execute();
  return rows.map((row) => ({
    postingId: row.id,
    documentType: row.document_type,
    documentId: row.document_id,
    documentNumber: row.document_number,
    system: row.system,
    operation: row.operation,
    status: row.status,
    attempts: row.attempts,
    externalType: row.external_type,
    externalRef: row.external_ref,
    reason: row.reason,
    nextAttemptAt: row.next_attempt_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }));
}

/**
 * Queues again the failed postings of a document (by its id) or one posting (by its `xpo_` id): pending, a fresh
 * series of attempts from now, the document's block back to pending. The request id is kept, so a posting that did
 * reach the system after all is not booked twice. Returns the postings re-queued (none: nothing had failed).
 */
export async function retryPostings(db: Db, organizationId: string, id: string): Promise<PostingView[]> {
  const retried = await inTransaction(db, (tx) => requeueFailedPostings(tx, organizationId, id));
  return (await listPostings(db, organizationId, {})).filter((view) => retried.includes(view.postingId));
}

/**
 * retryPostings in the caller's transaction (a DMS re-process of a document whose accounting posting failed calls it
 * too, so both ways are one): the failed postings of a document or one posting, optionally of one system, queued
 * again. Returns their ids.
 */
export async function requeueFailedPostings(
  tx: Tx,
  organizationId: string,
  id: string,
  system?: 'accounting' | 'fiscal',
): Promise<string[]> {
  let query = tx
    .selectFrom('external_postings')
    .select(['id', 'document_type', 'document_id', 'system', 'operation'])
    .where('organization_id', '=', organizationId)
    .where((eb) => eb.or([eb('id', '=', id), eb('document_id', '=', id)]))
    .where('status', '=', 'failed');
  if (system) query = query.where('system', '=', system);
  const rows = await query.orderBy('id').forUpdate().execute();
  for (const row of rows) {
    await tx
      .updateTable('external_postings')
      .set((eb) => ({
        status: 'pending',
        attempts: 0,
        next_attempt_at: eb.fn<Date>('now'),
        queued_at: null,
        claimed_by: null,
        reason: null,
        updated_at: eb.fn<Date>('now'),
      }))
      .where('organization_id', '=', organizationId)
      .where('id', '=', row.id)
      .execute();
    const subject = subjectOf(row.document_type);
    if (row.system === 'fiscal')
      await subject.setFiscal!(tx, organizationId, row.document_id, { status: 'pending', receipt: null, reason: null });
    else if (row.operation === 'post')
      await subject.setPosting(tx, organizationId, row.document_id, {
        status: 'pending',
        accountingRef: null,
        accountingType: null,
        reason: null,
      });
  }
  return rows.map((row) => row.id);
}

/**
 * Cancels the fiscal submissions of these documents that were not sent yet (a DMS connection's fiscalise switch
 * turned off): the rows `cancelled`, each document's fiscal block `cancelled` with the reason. A submission already
 * sent goes on. Returns how many were cancelled.
 */
export async function cancelUnsentFiscal(
  tx: Tx,
  organizationId: string,
  documents: readonly { type: PostedDocumentType; id: string }[],
  reason: string,
): Promise<number> {
  if (documents.length === 0) return 0;
  const rows = await tx
    .selectFrom('external_postings')
    .select(['id', 'document_type', 'document_id'])
    .where('organization_id', '=', organizationId)
    .where('system', '=', 'fiscal')
    .where('status', '=', 'pending')
    .where('last_attempt_at', 'is', null)
    .where((eb) =>
      eb(
        eb.refTuple('document_type', 'document_id'),
        'in',
        documents.map((d) => eb.tuple(d.type, d.id)),
      ),
    )
    .orderBy('id')
    .forUpdate()
    .execute();
  for (const row of rows) {
    await tx
      .updateTable('external_postings')
      .set((eb) => ({ status: 'cancelled', reason, updated_at: eb.fn<Date>('now') }))
      .where('organization_id', '=', organizationId)
      .where('id', '=', row.id)
      .execute();
    await subjectOf(row.document_type).setFiscal!(tx, organizationId, row.document_id, {
      status: 'cancelled',
      receipt: null,
      reason,
    });
  }
  return rows.length;
}
