// The ledger checker for the customer account: every invoice's balance and every customer's open balance
// recomputed from the account entries and compared with what is kept, and every receipt's entries against its
// amount (the amount off the account while posted, nothing once reversed). Zero differences, always; the test harnesses
// run it with the stock part (server/modules/stock/audit.ts) and operators run both with `admin audit`.
import { sql } from 'kysely';
import type { Db } from '../../platform/database/transaction.js';
import type { LedgerDifference } from '../stock/audit.js';

/** Every difference between the customer account entries and the balances kept from them, for one organisation. */
export async function auditCustomerAccount(db: Db, organizationId: string): Promise<LedgerDifference[]> {
  // Each invoice's balance against the sum of the entries that concern it (an invoice with none: 0); a grouped
  // subquery joined to the invoices has no builder form worth its length; the organisation is a bound parameter.
  const { rows: invoices } = await sql<{ id: string; number: string; from_entries: string; kept: string }>`
    SELECT i.id, i.number, coalesce(e.amount, 0)::text AS from_entries, i.balance::text AS kept
      FROM invoices AS i
      LEFT JOIN (SELECT invoice_id, sum(amount) AS amount FROM customer_account_entries WHERE organization_id = ${organizationId} GROUP BY invoice_id) AS e
        ON e.invoice_id = i.id
     WHERE i.organization_id = ${organizationId}
       AND (coalesce(e.amount, 0) <> i.balance OR (i.status = 'void' AND i.balance <> 0))
     ORDER BY i.id`.execute(db);
  // As above, in full: each customer's open balance per currency against the sum of its entries.
  const { rows: customers } = await sql<{
    customer_id: string;
    currency: string;
    from_entries: string;
    kept: string | null;
  }>`
    SELECT coalesce(e.customer_id, b.customer_id) AS customer_id, coalesce(e.currency, b.currency) AS currency,
           coalesce(e.amount, 0)::text AS from_entries, b.open_balance::text AS kept
      FROM (SELECT customer_id, currency, sum(amount) AS amount FROM customer_account_entries WHERE organization_id = ${organizationId} GROUP BY customer_id, currency) AS e
      FULL JOIN (SELECT * FROM customer_balances WHERE organization_id = ${organizationId}) AS b
        ON b.customer_id = e.customer_id AND b.currency = e.currency
     WHERE coalesce(e.amount, 0) <> coalesce(b.open_balance, 0)
     ORDER BY 1, 2`.execute(db);
  // Each receipt's entries against its amount: -amount while posted, 0 once reversed (its reversal added back).
  // A grouped subquery joined to the payments, as above; the organisation is a bound parameter.
  const { rows: payments } = await sql<{ id: string; number: string; from_entries: string; expected: string }>`
    SELECT p.id, p.number, coalesce(e.amount, 0)::text AS from_entries,
           (CASE WHEN p.status = 'posted' THEN -p.amount ELSE 0 END)::text AS expected
      FROM payments AS p
      LEFT JOIN (SELECT document_id, sum(amount) AS amount FROM customer_account_entries
                  WHERE organization_id = ${organizationId} AND document_type = 'payment' GROUP BY document_id) AS e
        ON e.document_id = p.id
     WHERE p.organization_id = ${organizationId}
       AND coalesce(e.amount, 0) <> (CASE WHEN p.status = 'posted' THEN -p.amount ELSE 0 END)
     ORDER BY p.id`.execute(db);
  return [
    ...payments.map((row) => ({
      kind: 'payment_entries',
      subject: `payment ${row.number} (${row.id})`,
      expected: `${row.expected} for its status`,
      actual: `${row.from_entries} in the account entries`,
    })),
    ...invoices.map((row) => ({
      kind: 'invoice_balance',
      subject: `invoice ${row.number} (${row.id})`,
      expected: `${row.from_entries} from the account entries`,
      actual: `${row.kept} kept`,
    })),
    ...customers.map((row) => ({
      kind: 'customer_balance',
      subject: `customer ${row.customer_id}, ${row.currency}`,
      expected: `${row.from_entries} from the account entries`,
      actual: row.kept === null ? 'no balance row' : `${row.kept} kept`,
    })),
    // Each credit note's remaining amount against its entries.
    ...(await auditCreditNotes(db, organizationId)),
  ];
}

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
  return rows.map((row) => ({
    kind: 'credit_note_remaining',
    subject: `credit note ${row.number} (${row.id})`,
    expected: `${row.from_entries} from the account entries`,
    actual: `${row.kept} kept`,
  }));
}
