// Before a reversal's transaction (a void, a reverse, a cancel): when the document is posted in the accounting
// system, ask that system whether it holds it (it would refuse to void it: a deposited payment, closed books). Held:
// 409 invalid_state naming what to void there by hand. Not held: the posting is marked reversible, and the reversal's
// own transaction (planReversal) queues the void there. The question is asked outside any transaction: an HTTP call
// never runs inside one.
import type { PostedDocumentRef } from './queue.js';
import { heldMessage } from './queue.js';
import type { Db } from '../../platform/database/transaction.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { accountingConnectorOf, readConnection, type ConnectorSettings } from '../../connectors/connections.js';
import type { AccountingType } from '../../connectors/types.js';

export async function checkReversible(
  db: Db,
  settings: ConnectorSettings,
  organizationId: string,
  document: Omit<PostedDocumentRef, 'number'>,
  what: string,
): Promise<void> {
  const rows = await db
    .selectFrom('external_postings')
    .select(['id', 'system', 'status', 'last_attempt_at', 'external_type', 'external_ref', 'document_number'])
    .where('organization_id', '=', organizationId)
    .where('document_type', '=', document.type)
    .where('document_id', '=', document.id)
    .where('operation', '=', 'post')
    .execute();
  // Submitted to the fiscal system: the reversal is refused for that in its transaction, whatever the accounting says.
  if (
    rows.some(
      (r) => r.system === 'fiscal' && r.last_attempt_at !== null && (r.status === 'pending' || r.status === 'posted'),
    )
  )
    return;
  const row = rows.find((r) => r.system === 'accounting');
  if (row?.status !== 'posted' || row.external_ref === null) return;
  const ref = { document: { ...document, number: row.document_number }, type: row.external_type, id: row.external_ref };
  const connection = await readConnection(db, organizationId, 'accounting');
  if (!connection) throw new ApiError('invalid_state', heldMessage(ref.document, ref.type, ref.id, what));
  const held = await accountingConnectorOf(connection, settings).holds({
    type: row.external_type as AccountingType,
    id: row.external_ref,
  });
  if (!held.ok) {
    throw new ApiError(
      'invalid_state',
      `${row.document_number} is posted in the accounting system as ${ref.type} ${ref.id}, and the service could not ask whether it may still be voided there (${held.failure.message}). Retry in a minute.`,
    );
  }
  if (held.value) throw new ApiError('invalid_state', heldMessage(ref.document, ref.type, ref.id, what));
  await db
    .updateTable('external_postings')
    .set((eb) => ({ reversible_at: eb.fn<Date>('now'), updated_at: eb.fn<Date>('now') }))
    .where('organization_id', '=', organizationId)
    .where('id', '=', row.id)
    .execute();
}
