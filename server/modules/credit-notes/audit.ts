// The ledger checker's credit-note part: every credit note's remaining amount recomputed from its account entries
// (the credit left on the account and the cash refunds, with their reversals) and compared with what is kept.
// auditCustomerAccount (server/modules/invoices/audit.ts) runs it, so `admin audit` and the test harnesses do.
import { sql } from 'kysely';
import type { Db } from '../../platform/database/transaction.js';
import type { LedgerDifference } from '../stock/audit.js';

/** Every credit note whose remaining amount differs from -(its credit_unapplied + credit_refund entries and their reversals). */
export async function auditCreditNotes(db: Db, organizationId: string): Promise<LedgerDifference[]> {
  // A grouped subquery joined to the credit notes has no builder form worth its length; the organisation is bound.
  const { rows } = await sql<{ id: string; number: string; from_entries: string; kept: string }>`
    SELECT c.id, c.number, (-coalesce(e.amount, 0))::text AS from_entries, c.remaining_amount::text AS kept
      FROM credit_notes AS c
      LEFT JOIN (SELECT document_id, sum(amount) AS amount FROM customer_account_entries
                  WHERE organization_id = ${organizationId} AND document_type = 'credit_note'
                    AND type IN ('credit_unapplied', 'credit_unapplied_reversal', 'credit_refund', 'credit_refund_reversal')
                  GROUP BY document_id) AS e
        ON e.document_id = c.id
     WHERE c.organization_id = ${organizationId} AND -coalesce(e.amount, 0) <> c.remaining_amount
     ORDER BY c.id`.execute(db);
  return rows.map((row) => ({ kind: 'credit_note_remaining', subject: `credit note ${row.number} (${row.id})`, expected: `${row.from_entries} from the account entries`, actual: `${row.kept} kept` }));
}
