// What the DMS mappings of documents that can be cancelled share: a later version is understood only as a cancel, and a
// cancel asks the accounting system first whether the posting it reverses may still be voided there (as REST does).
import { checkReversible } from '../../postings/reversal.js';
import { DmsRejection } from '../reasons.js';
import type { DmsContext, DmsRunner, LoadedDocument } from './types.js';

/** A version that changes a posted document's status: only a cancel is understood. */
export function refuseOtherChange(document: LoadedDocument, what: string): void {
  if (document.status !== 'cancelled') {
    throw new DmsRejection(
      'R09',
      `${what} ${document.number} was ${document.previous!.dmsStatus}; the only change of status the service takes is to cancelled. Send a new number.`,
    );
  }
}

/** Before a cancel, outside the transaction: may the earlier version's accounting posting still be voided there? */
export async function askAccountingSystem(
  runner: DmsRunner,
  context: DmsContext,
  document: LoadedDocument,
  what: string,
): Promise<void> {
  const previous = document.previous!;
  if (!previous.accounting) return;
  await checkReversible(
    runner.db,
    runner.settings,
    context.actor.organization.id,
    { type: previous.accounting.type as 'invoice', id: previous.accounting.id },
    what,
  );
}
