// Document numbers (INV-000123, CN-000045): a gap-free sequence per organisation and document type, taken in the
// document's own transaction by one statement on document_sequences. The first number of a type inserts its row
// (1); each later one increments it. The row stays locked until the transaction ends, so concurrent documents of a
// type wait for each other and get consecutive numbers, and a rolled-back document gives its number back: no gap
// and no duplicate, which a PostgreSQL SEQUENCE cannot promise (it never gives a number back).
import type { Transaction } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';

/** The next number of `documentType` in the organisation, as `${prefix}-000001`. Runs in the caller's transaction. */
export async function nextDocumentNumber(
  tx: Transaction<DB>,
  organizationId: string,
  documentType: string,
  prefix: string,
): Promise<string> {
  return (await nextDocumentNumbers(tx, organizationId, documentType, prefix, 1))[0]!;
}

/** The next `count` consecutive numbers of `documentType` (a set of documents posted together), in one statement. */
export async function nextDocumentNumbers(
  tx: Transaction<DB>,
  organizationId: string,
  documentType: string,
  prefix: string,
  count: number,
): Promise<string[]> {
  if (count === 0) return [];
  const { last_number: last } = await tx
    .insertInto('document_sequences')
    .values({ organization_id: organizationId, document_type: documentType, last_number: count })
    .onConflict((conflict) =>
      conflict
        .columns(['organization_id', 'document_type'])
        .doUpdateSet((eb) => ({ last_number: eb('document_sequences.last_number', '+', count) })),
    )
    .returning('last_number')
    .executeTakeFirstOrThrow();
  return Array.from({ length: count }, (_, i) => formatDocumentNumber(prefix, last - count + 1 + i));
}

/** `INV-000123`: the prefix, a hyphen and the number in at least six digits (`INV-1234567` past a million). */
export function formatDocumentNumber(prefix: string, number: number): string {
  return `${prefix}-${String(number).padStart(6, '0')}`;
}
