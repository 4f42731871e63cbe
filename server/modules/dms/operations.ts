// What an operator does about DMS documents (the CLI's `admin dms`): read one document with its flag and what its
// posting found, re-process rejected or held documents (a new flag is issued; R05 never), and turn a connection's
// fiscalise switch off (which cancels that connection's submissions not sent yet).
import { sql } from 'kysely';
import { inTransaction, type Db, type Tx } from '../../platform/database/transaction.js';
import { cancelUnsentFiscal } from '../postings/operations.js';
import type { PostedDocumentType } from '../postings/queue.js';
import { findConnection, updateConnection, type DmsConnectionRow, type DmsConnectionSettings } from './connections.js';
import { setFlags, toFlag, findFlag } from './flags.js';
import { fileBatchesOf, noteFlagFiles, setAction } from './actions.js';

export interface ReprocessSelection {
  documentId?: string;
  batchId?: string;
  /** With `reasons`: every document of this business date rejected with one of them. */
  date?: string;
  reasons?: string[];
}

/**
 * Issues a new flag for each selected document that can be re-processed: a rejected one (not R05) and one held
 * `received` with no retry left (a version held past its 48 hours, a type without a mapper). Each becomes
 * `received` and due now, with a fresh 48-hour window; the workers post it again. Returns the ids.
 */
export async function reprocessDocuments(
  db: Db,
  organizationId: string,
  selection: ReprocessSelection,
): Promise<string[]> {
  return inTransaction(db, async (tx) => {
    let query = tx
      .selectFrom('dms_documents')
      .select(['id', 'state', 'reason_code', 'natural_key'])
      .where('organization_id', '=', organizationId)
      .where((eb) =>
        eb.or([
          eb.and([eb('state', '=', 'rejected'), eb('reason_code', '<>', 'R05')]),
          eb.and([eb('state', '=', 'received'), eb('next_attempt_at', 'is', null)]),
        ]),
      );
    if (selection.documentId) query = query.where('id', '=', selection.documentId);
    if (selection.batchId) query = query.where('batch_id', '=', selection.batchId);
    if (selection.date) query = query.where('document_date', '=', selection.date);
    if (selection.reasons) query = query.where('reason_code', 'in', selection.reasons);
    const rows = await query.orderBy('received_at').orderBy('position').forUpdate().execute();
    // A document refused before it took its place among its key's versions (format, R01, R04, R07) has nothing to post.
    const ids = rows.filter((row) => row.natural_key !== null).map((row) => row.id);
    if (ids.length === 0) return [];
    await tx
      .updateTable('dms_documents')
      // A fresh window from now, by the database's clock.
      .set({ attempts: 0, retry_until: sql<Date>`now() + interval '48 hours'` })
      .where('organization_id', '=', organizationId)
      .where('id', 'in', ids)
      .execute();
    await setFlags(tx, organizationId, ids, {
      state: 'received',
      note: 'Re-processing was asked for.',
      waitingFor: null,
      nextAttemptAt: new Date(),
    });
    // Each re-process is an action towards the DMS, and a file whose document is posted again has its flag file pending again.
    const documents = await tx
      .selectFrom('dms_documents')
      .select(['id', 'connection_id', 'document_type', 'document_number'])
      .where('organization_id', '=', organizationId)
      .where('id', 'in', ids)
      .execute();
    for (const document of documents) {
      await setAction(tx, organizationId, {
        connectionId: document.connection_id,
        kind: 'reprocess',
        subjectId: document.id,
        status: 'done',
        detail: `${document.document_type} ${document.document_number} is received again and will be posted.`,
      });
    }
    await noteFlagFiles(tx, organizationId, await fileBatchesOf(tx, organizationId, ids));
    return ids;
  });
}

/** Why a selected document cannot be re-processed (for the CLI's message), or null when it can. */
export async function whyNotReprocessable(db: Db, organizationId: string, documentId: string): Promise<string | null> {
  const row = await findFlag(db, organizationId, documentId);
  if (!row) return `There is no DMS document ${documentId} in this organisation.`;
  if (row.state === 'rejected' && row.reason_code === 'R05')
    return `${documentId} was rejected with R05 (same number, different content, same status): it cannot be re-processed. The DMS sends a status change or a new number.`;
  if (row.state === 'posted' || row.state === 'superseded')
    return `${documentId} is ${row.state}: there is nothing to re-process.`;
  if (row.state === 'received') return `${documentId} is received and still being tried (${row.note ?? 'due now'}).`;
  return `${documentId} was rejected on arrival (${row.reason_code}): its content cannot post. The DMS sends it again corrected.`;
}

/** One document: its flag, its content and what posting found. */
export async function showDocument(db: Db, organizationId: string, documentId: string) {
  const row = await db
    .selectFrom('dms_documents')
    .select([
      'id',
      'batch_id',
      'natural_key',
      'version',
      'content',
      'result',
      'waiting_for',
      'next_attempt_at',
      'retry_until',
      'attempts',
    ])
    .where('organization_id', '=', organizationId)
    .where('id', '=', documentId)
    .executeTakeFirst();
  const flag = await findFlag(db, organizationId, documentId);
  if (!row || !flag) throw new Error(`There is no DMS document ${documentId} in this organisation.`);
  return {
    flag: toFlag(flag),
    batchId: row.batch_id,
    naturalKey: row.natural_key,
    version: row.version,
    attempts: row.attempts,
    waitingFor: row.waiting_for,
    nextAttemptAt: row.next_attempt_at?.toISOString() ?? null,
    retryUntil: row.retry_until?.toISOString() ?? null,
    result: row.result,
    document: row.content,
  };
}

/**
 * Changes a connection; turning its fiscalise switch off also cancels the fiscal submissions of its documents not
 * sent yet (in the same transaction). Returns the connection and how many were cancelled.
 */
export async function changeConnection(
  tx: Tx,
  organizationId: string,
  system: string,
  settings: DmsConnectionSettings,
): Promise<{ connection: DmsConnectionRow; cancelled: number }> {
  const before = await findConnection(tx, organizationId, system);
  const connection = await updateConnection(tx, organizationId, system, settings);
  let cancelled = 0;
  if (before?.fiscalise && settings.fiscalise === false) {
    const documents = await tx
      .selectFrom('dms_documents')
      .select(['accounting_type', 'accounting_id'])
      .where('organization_id', '=', organizationId)
      .where('connection_id', '=', connection.id)
      .where('state', '<>', 'superseded')
      // Applied ones: posted, or held for their accounting posting.
      .where('mikono_id', 'is not', null)
      .where('accounting_type', 'in', ['invoice', 'credit_note'])
      .execute();
    cancelled = await cancelUnsentFiscal(
      tx,
      organizationId,
      documents.map((d) => ({ type: d.accounting_type as PostedDocumentType, id: d.accounting_id! })),
      `The DMS connection's fiscalise switch was turned off before it was submitted.`,
    );
  }
  return { connection, cancelled };
}
