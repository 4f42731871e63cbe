// Before a reversal's transaction (a void, a reverse, a cancel): when the document is posted in the accounting
// system, ask that system whether it still holds it. Held: 409 invalid_state naming what to void there by hand (the
// service never voids there itself). No longer held (a person voided it there): the posting is marked released, and
// the reversal's own transaction (planReversal) then goes ahead. The question is asked outside any transaction: an
// HTTP call never runs inside one.
import type { PostedDocumentRef } from '../../domain/postings.js';
import { heldMessage } from '../../domain/postings.js';
import type { Db } from '../../platform/database/transaction.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { accountingConnectorOf, readConnection, type ConnectorSettings } from '../../connectors/connections.js';
import type { AccountingType } from '../../connectors/types.js';

export async function releaseIfNoLongerHeld(db: Db, settings: ConnectorSettings, organizationId: string, document: Omit<PostedDocumentRef, 'number'>, what: string): Promise<void> {
  const rows = await db.selectFrom('external_postings').select(['id', 'system', 'status', 'last_attempt_at', 'released_at', 'external_type', 'external_ref', 'document_number'])
    .where('organization_id', '=', organizationId).where('document_type', '=', document.type).where('document_id', '=', document.id).execute();
  // Submitted to the fiscal system: the reversal is refused for that in its transaction, whatever the accounting says.
  if (rows.some((r) => r.system === 'fiscal' && r.last_attempt_at !== null && (r.status === 'pending' || r.status === 'posted'))) return;
  const row = rows.find((r) => r.system === 'accounting');
  if (!row || row.status !== 'posted' || row.released_at !== null || row.external_ref === null) return;
  const ref = { document: { ...document, number: row.document_number }, type: row.external_type, id: row.external_ref };
  const connection = await readConnection(db, organizationId, 'accounting');
  if (!connection) throw new ApiError('invalid_state', heldMessage(ref.document, ref.type, ref.id, what));
  const held = await accountingConnectorOf(connection, settings).holds({ type: row.external_type as AccountingType, id: row.external_ref });
  if (!held.ok) {
    throw new ApiError('invalid_state', `${row.document_number} is posted in the accounting system as ${ref.type} ${ref.id}, and the service could not ask whether it still holds it (${held.failure.message}). Retry in a minute.`);
  }
  if (held.value) throw new ApiError('invalid_state', heldMessage(ref.document, ref.type, ref.id, what));
  await db.updateTable('external_postings').set((eb) => ({ released_at: eb.fn<Date>('now'), updated_at: eb.fn<Date>('now') }))
    .where('organization_id', '=', organizationId).where('id', '=', row.id).execute();
}
