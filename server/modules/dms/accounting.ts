// A DMS document's flag follows the accounting posting of what it posted: `posted` with quickbooksRef null while that
// posting is pending, then its quickbooksRef once the accounting system holds it, or `rejected` (R06 when the
// accounting system's books are closed, R09 otherwise) when it fails for good; the posting in the service stays
// applied. The postings module calls this in the transaction that records the outcome; documents waiting for that
// posting (a held version, a bounced cheque) are woken.
import type { Tx } from '../../platform/database/transaction.js';
import { recordEvents } from '../../platform/events/outbox.js';
import { DMS_DOCUMENT, DMS_DOCUMENT_FLAGGED, setFlags } from './flags.js';
import { wake } from './process.js';
import { waitKeys } from './reasons.js';

export type AccountingOutcome = { status: 'posted'; ref: string } | { status: 'failed'; reason: string; periodClosed: boolean } | { status: 'not_applicable' };

export async function accountingPostingSettled(tx: Tx, organizationId: string, document: { type: string; id: string }, outcome: AccountingOutcome): Promise<void> {
  const flagged = await tx.selectFrom('dms_documents').select('id')
    .where('organization_id', '=', organizationId).where('accounting_type', '=', document.type).where('accounting_id', '=', document.id)
    .where('state', '=', 'posted').execute();
  const ids = flagged.map((row) => row.id);
  if (ids.length > 0 && outcome.status === 'posted') {
    await tx.updateTable('dms_documents').set({ quickbooks_ref: outcome.ref, updated_at: new Date() })
      .where('organization_id', '=', organizationId).where('id', 'in', ids).execute();
    await recordEvents(tx, organizationId, DMS_DOCUMENT_FLAGGED, DMS_DOCUMENT, ids);
  } else if (ids.length > 0 && outcome.status === 'failed') {
    await setFlags(tx, organizationId, ids, outcome.periodClosed
      ? { state: 'rejected', reasonCode: 'R06', reasonText: `In the accounting system: ${outcome.reason} The posting in the service stays applied.` }
      : { state: 'rejected', reasonCode: 'R09', reasonText: `The accounting posting failed: ${outcome.reason} The posting in the service stays applied.` });
  }
  await wake(tx, organizationId, [waitKeys.posting(document.type, document.id)]);
}
