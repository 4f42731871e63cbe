// What the external systems owe a document, decided inside the document's own transaction: a posting function that
// posts an invoice, a payment or a credit note calls queuePostings, which writes one external_postings row per system
// the organisation is connected to (accounting: QuickBooks Online; fiscal: EFRIS, for invoices and credit notes) and
// tells the caller how its `posting` and `fiscal` blocks start. The rows exist exactly when the document does; the
// worker turns them into jobs that call the systems (run.ts, dispatch.ts). A reversal (a void, a reverse, a cancel)
// calls planReversal in its transaction, which applies the spec's reversal rules to those rows. external_postings is
// this module's table: the document modules write it only through these two functions.
import { sql } from 'kysely';
import type { PostingStatus } from '../../connectors/subjects.js';
import type { Tx } from '../../platform/database/transaction.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { newId } from '../../platform/ids.js';
import { isFiscalised } from './registry.js';

export type { PostingStatus };

/**
 * A posted document type: one whose declaration (`documentType({...})` in its module's manifest) has a `posting`
 * subject. Checked against the composed registry when its postings are queued (subjectOf throws for any other).
 */
export type PostedDocumentType = string;

/** A document as the posting rows name it. */
export interface PostedDocumentRef {
  type: PostedDocumentType;
  id: string;
  /** Its number (INV-000001): what a person looks for in the other system. */
  number: string;
}

/** How a new document's blocks start (the columns its own row carries). */
export interface InitialBlocks {
  posting_status: PostingStatus;
  posting_reason: string | null;
  /** null: not submitted to the fiscal system. */
  fiscal_status: 'pending' | null;
}

export const NO_ACCOUNTING_CONNECTION =
  'The organisation has no accounting connection: nothing is posted to an accounting system.';

/**
 * Queues the document's postings to every enabled connection of its organisation and returns how its blocks start:
 * `pending` where a system will be called, `not_applicable` (with the reason) for accounting when none is connected.
 */
export async function queuePostings(
  tx: Tx,
  organizationId: string,
  document: PostedDocumentRef,
  options: QueueOptions = {},
): Promise<InitialBlocks> {
  return (await queuePostingsOf(tx, organizationId, [document], options))[0]!;
}

export interface QueueOptions {
  /** false: not submitted to the fiscal system even when the organisation is connected (a DMS connection's switch is off). */
  fiscal?: boolean;
}

/** queuePostings for several documents of one operation (the receipts of one collection): one read, one insert. */
export async function queuePostingsOf(
  tx: Tx,
  organizationId: string,
  documents: readonly PostedDocumentRef[],
  options: QueueOptions = {},
): Promise<InitialBlocks[]> {
  const connections = await tx
    .selectFrom('connector_connections')
    .select(['system'])
    .where('organization_id', '=', organizationId)
    .where('enabled', '=', true)
    .execute();
  // Every document type queued must be a posted one (subjectOf refuses any other), fiscalised or not by its subject.
  const fiscalised = new Map(documents.map((document) => [document.type, isFiscalised(document.type)]));
  const systemsOf = (document: PostedDocumentRef) =>
    connections
      .map((connection) => connection.system)
      .filter(
        (system) => system === 'accounting' || (fiscalised.get(document.type) === true && options.fiscal !== false),
      );
  const rows = documents.flatMap((document) =>
    systemsOf(document).map((system) => {
      const id = newId('xpo');
      return {
        organization_id: organizationId,
        id,
        document_type: document.type,
        document_id: document.id,
        document_number: document.number,
        system,
        status: 'pending',
        request_id: id,
      };
    }),
  );
  if (rows.length > 0) await tx.insertInto('external_postings').values(rows).execute();
  return documents.map((document) => {
    const systems = systemsOf(document);
    return {
      posting_status: systems.includes('accounting') ? 'pending' : 'not_applicable',
      posting_reason: systems.includes('accounting') ? null : NO_ACCOUNTING_CONNECTION,
      fiscal_status: systems.includes('fiscal') ? 'pending' : null,
    };
  });
}

/** What a reversal changes on the document's blocks (undefined: leave as it is). */
export interface ReversalOutcome {
  posting?: { status: PostingStatus; reason: string | null };
  fiscal?: { status: 'cancelled' };
}

export interface ReversalOptions {
  /**
   * true: an accounting posting not sent yet makes the reversal wait (409, reason posting_under_way) instead of being
   * cancelled. The product specification's rule for a DMS reversal of another document (a bounced cheque against a
   * collection waits, R08, while the collection's accounting posting is pending); REST cancels the posting.
   */
  waitWhilePending?: boolean;
}

/** How long the accounting system's "not held" answer, asked before a reversal, stays good for it. */
export const REVERSIBLE_FOR_SECONDS = 300;

/**
 * The reversal rules, in the reversing document's transaction (the spec's Reversals):
 * - a posting not yet sent is cancelled: nothing reached the system (the block becomes not_applicable);
 * - a posting sent and not finished makes the reversal wait: 409 invalid_state, reason posting_under_way (retry when
 *   it ends);
 * - a posted document is reversed in the accounting system too (a `reverse` posting, queued now: QuickBooks voids an
 *   Invoice or a Payment and deletes the others) only while that system does not hold it: the REST route asks it
 *   just before this transaction (server/modules/postings/reversal.ts, which marks the posting `reversible_at`);
 *   once the system holds it (a deposited payment, closed books) the route has refused with 409 naming what to void
 *   there by hand (reason held_by_accounting). A caller that did not ask (none yet but REST) is refused the same way;
 * - a posting that failed left nothing in the system: nothing to do;
 * - a fiscal submission not yet sent is cancelled; one that reached the fiscal system is refused (409): a fiscalised
 *   document is corrected by a credit note, never withdrawn (reason fiscal_submitted).
 * The rows are locked first (FOR UPDATE), so a posting job that starts now waits for this decision, and this
 * decision sees the job's last write.
 */
export async function planReversal(
  tx: Tx,
  organizationId: string,
  document: PostedDocumentRef,
  what: string,
  options: ReversalOptions = {},
): Promise<ReversalOutcome> {
  const rows = await tx
    .selectFrom('external_postings')
    .select([
      'id',
      'system',
      'status',
      'attempts',
      'last_attempt_at',
      'external_type',
      'external_ref',
      'related_refs',
      'reason',
    ])
    // Whether the accounting system was found not holding it a moment ago (the database's clock; the seconds bound).
    .select(
      sql<boolean>`coalesce(reversible_at > now() - make_interval(secs => ${REVERSIBLE_FOR_SECONDS}), false)`.as(
        'reversible',
      ),
    )
    .where('organization_id', '=', organizationId)
    .where('document_type', '=', document.type)
    .where('document_id', '=', document.id)
    .where('operation', '=', 'post')
    .orderBy('system')
    .forUpdate()
    .execute();
  const outcome: ReversalOutcome = {};
  const cancel = (id: string, reason: string) =>
    tx
      .updateTable('external_postings')
      .set((eb) => ({ status: 'cancelled', reason, updated_at: eb.fn<Date>('now') }))
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .execute();
  for (const row of rows) {
    // Ever sent (an attempt was made, even if a retry was asked for since): the system may hold it.
    const sent = row.last_attempt_at !== null;
    if (row.system === 'fiscal') {
      if (row.status === 'pending' && !sent) {
        await cancel(row.id, `${what} before it was submitted to the fiscal system.`);
        outcome.fiscal = { status: 'cancelled' };
      } else if (row.status === 'pending' || row.status === 'posted') {
        throw new ApiError(
          'fiscal_submitted',
          `${document.number} has been submitted to the fiscal system${row.external_ref ? ` (${row.external_ref})` : ''}: it cannot be withdrawn from the service. Correct it with a credit note instead.`,
        );
      }
      continue;
    }
    if (row.status === 'pending' && !sent && options.waitWhilePending) {
      throw new ApiError(
        'posting_under_way',
        `The accounting posting of ${document.number} is pending (not sent yet); the reversal waits for it. Retry when its posting.status is posted or failed.`,
      ).about({ type: document.type, id: document.id });
    } else if (row.status === 'pending' && !sent) {
      await cancel(row.id, `${what} before it was posted.`);
      outcome.posting = {
        status: 'not_applicable',
        reason: `${what} before it was posted: nothing was sent to the accounting system.`,
      };
    } else if (row.status === 'pending') {
      throw new ApiError(
        'posting_under_way',
        `The accounting posting of ${document.number} is under way (${row.attempts} attempt(s)${row.reason ? `: ${row.reason}` : ''}); the reversal waits for it. Retry when its posting.status is posted or failed.`,
      ).about({ type: document.type, id: document.id });
    } else if (row.status === 'posted' && !row.reversible) {
      throw new ApiError('held_by_accounting', heldMessage(document, row.external_type, row.external_ref, what));
    } else if (row.status === 'posted') {
      const id = newId('xpo');
      await tx
        .insertInto('external_postings')
        .values({
          organization_id: organizationId,
          id,
          document_type: document.type,
          document_id: document.id,
          document_number: document.number,
          system: 'accounting',
          operation: 'reverse',
          status: 'pending',
          request_id: id,
          external_type: row.external_type,
          external_ref: row.external_ref,
          related_refs: row.related_refs ?? [],
        })
        .execute();
    }
  }
  return outcome;
}

/** The refusal of a reversal the accounting system holds: what to void there by hand, then here. */
export function heldMessage(
  document: PostedDocumentRef,
  type: string | null,
  ref: string | null,
  what: string,
): string {
  return `${document.number} is held by the accounting system as ${type} ${ref} (deposited, reconciled or in closed books there), so the service cannot void it there. Void ${type} ${ref} in the accounting system by hand first, then ask again here: the service checks that the accounting system no longer holds it and the document is ${what.toLowerCase()}.`;
}
