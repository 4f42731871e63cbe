// A DMS document's flag follows the accounting posting of what it applied: `posted` means posted, the accounting
// posting included (the spec's "received -> posted: succeeds, including the accounting posting"). So a document the
// service applied is held `received` (ACCOUNTING_NOTE) while that posting is pending, and when it settles:
// - posted there: `posted` with its quickbooksRef; this also issues a new `posted` flag for a document that was
//   rejected when the posting failed and has since been fixed (`admin postings retry`), since the service never
//   applies it again;
// - failed for good: `rejected` (R06 when the accounting system's books are closed, R09 otherwise); the posting in
//   the service stays applied, and a flag already `posted` (before this rule, or any later failure) is rejected too;
// - nothing to send (not_applicable): `posted`, quickbooksRef null.
// The DMS declares this as its posting listener (its manifest's postingListeners); the postings module calls it,
// through the composed registry, in the transaction that records the outcome, so the DMS flag writes stay in this
// module. Documents waiting for that posting (a held version, a bounced cheque) are woken.
import { sql } from 'kysely';
import type { AccountingOutcome, PostingListener } from '../../connectors/subjects.js';
import { recordEvents } from '../../platform/events/outbox.js';
import { fileBatchesOf, noteFlagFiles } from './actions.js';
import { DMS_DOCUMENT, DMS_DOCUMENT_FLAGGED, setFlags } from './flags.js';
import { wake } from './process.js';
import { waitKeys } from './reasons.js';

export type { AccountingOutcome };

export const followAccountingPosting: PostingListener = async (tx, organizationId, document, outcome) => {
  // The documents that applied this one (mikono set): held, already posted, or rejected by an earlier failure.
  const flagged = await tx
    .selectFrom('dms_documents')
    .select(['id', 'state'])
    .where('organization_id', '=', organizationId)
    .where('accounting_type', '=', document.type)
    .where('accounting_id', '=', document.id)
    .where('mikono_id', 'is not', null)
    .where('state', 'in', ['received', 'posted', 'rejected'])
    .execute();
  const changing = flagged
    .filter((row) => (outcome.status === 'failed' ? row.state !== 'rejected' : true))
    .map((row) => row.id);
  if (changing.length > 0) {
    if (outcome.status === 'failed') {
      await setFlags(
        tx,
        organizationId,
        changing,
        outcome.periodClosed
          ? {
              state: 'rejected',
              reasonCode: 'R06',
              reasonText: `In the accounting system: ${outcome.reason} The posting in the service stays applied.`,
            }
          : {
              state: 'rejected',
              reasonCode: 'R09',
              reasonText: `The accounting posting failed: ${outcome.reason} The posting in the service stays applied.`,
            },
      );
    } else {
      const ref = outcome.status === 'posted' ? outcome.ref : null;
      await tx
        .updateTable('dms_documents')
        .set((eb) => ({
          state: 'posted',
          quickbooks_ref: ref,
          note: null,
          reason_code: null,
          reason_text: null,
          waiting_for: null,
          next_attempt_at: null,
          updated_at: eb.fn<Date>('now'),
          // A flag that turns posted now is posted now; one posted already keeps its time.
          posted_at: sql<Date>`CASE WHEN state = 'posted' THEN posted_at ELSE now() END`,
        }))
        .where('organization_id', '=', organizationId)
        .where('id', 'in', changing)
        .execute();
      await recordEvents(tx, organizationId, DMS_DOCUMENT_FLAGGED, DMS_DOCUMENT, changing);
    }
    // A file's flag file is written once every flag of it is final: these just became final.
    await noteFlagFiles(tx, organizationId, await fileBatchesOf(tx, organizationId, changing));
  }
  await wake(tx, organizationId, [waitKeys.posting(document.type, document.id)]);
};
