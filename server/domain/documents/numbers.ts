// Document numbers (INV-000123, CN-000045): a gap-free sequence per organisation and document type, taken in the
// document's own transaction. The sequence row is locked until that transaction ends, so numbers are handed out in
// commit order, and a rolled-back document gives its number back.
import type { Tx } from '../../platform/database/transaction.js';

export async function nextDocumentNumber(tx: Tx, organizationId: string, documentType: string, prefix: string): Promise<string> {
  const row = await tx.insertInto('document_sequences')
    .values({ organization_id: organizationId, document_type: documentType, last_number: 1 })
    .onConflict((conflict) => conflict.columns(['organization_id', 'document_type'])
      .doUpdateSet((eb) => ({ last_number: eb('document_sequences.last_number', '+', 1) })))
    .returning('last_number')
    .executeTakeFirstOrThrow();
  return formatDocumentNumber(prefix, row.last_number);
}

/** `INV-000123`: the prefix, a hyphen and at least six digits. */
export function formatDocumentNumber(prefix: string, number: number): string {
  return `${prefix}-${String(number).padStart(6, '0')}`;
}
