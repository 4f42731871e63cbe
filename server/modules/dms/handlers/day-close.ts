// What the DMS keeps of a salesman's day close: what a route settlement found (cash, credit and stock against what was
// posted; the settlements module's mapping, settlements/dms.ts, posts it and keeps it here with keepResult) for the
// daily reconciliation, and the first listed document not applied yet, which the settlement waits for. A daily totals
// document writes nothing: the reconciliation reads it.
import type { DocumentHandler } from './types.js';
import type { Tx } from '../../../platform/database/transaction.js';

/** What a posted route settlement found, kept in its document's `result` (read by reconciliation.ts). */
export interface DayCloseResult {
  tripId: string;
  settlementId: string;
  currency: string;
  cash: { expected: string; handedIn: string; difference: string };
  /**
   * `stated` is the document's credit (null when it gives none): what the day's sales still owe at the close; `posted`
   * the same figure in the service, the balance left on the trip's invoices (the sheet's sales.credit), not the gross
   * credit sales.
   */
  credit: { stated: string | null; posted: string };
  /** Per product on the van or in the closing stock: the books before the count, the count, count - books. */
  stock: { productCode: string; book: number; counted: number; difference: number }[];
}

/**
 * The first listed number with no applied current version (a document never received, waiting, or rejected before it
 * applied). Applied is what the day close needs: a document held for its accounting posting (or rejected when that
 * failed) is on the day's trip already, and the settlement counts it; QuickBooks' pace never holds the day.
 */
export async function firstUnposted(
  tx: Tx,
  organizationId: string,
  connectionId: string,
  numbers: readonly string[],
): Promise<{ number: string; state: string | null } | null> {
  const unique = [...new Set(numbers)];
  if (unique.length === 0) return null;
  const rows = await tx
    .selectFrom('dms_documents')
    .select(['document_number', 'state', 'mikono_id'])
    .where('organization_id', '=', organizationId)
    .where('connection_id', '=', connectionId)
    .where('document_number', 'in', unique)
    .where('state', '<>', 'superseded')
    .execute();
  const posted = new Set(
    rows.filter((row) => row.state === 'posted' || row.mikono_id !== null).map((row) => row.document_number),
  );
  const stateOf = new Map(rows.map((row) => [row.document_number, row.state]));
  const number = unique.find((n) => !posted.has(n));
  return number === undefined ? null : { number, state: stateOf.get(number) ?? null };
}

/** Keeps what a day close found with its document (its `result`, read by reconciliation.ts). */
export async function keepResult(
  tx: Tx,
  organizationId: string,
  documentId: string,
  result: DayCloseResult,
): Promise<void> {
  await tx
    .updateTable('dms_documents')
    .set({ result: JSON.stringify(result) })
    .where('organization_id', '=', organizationId)
    .where('id', '=', documentId)
    .execute();
}

export const dailyTotals: DocumentHandler = {
  async apply(_tx, _context, document) {
    return { table: 'dms_documents', id: document.id };
  },
};
