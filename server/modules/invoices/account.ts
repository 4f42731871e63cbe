// The customer account: an append-only ledger (customer_account_entries; refuse_ledger_change() refuses any edit) of
// what raises or lowers what a customer owes: invoices (+), their voids (-), payment allocations and credit
// applications (-), credits left on the account (an unallocated payment, a credit note's remaining amount: -), cash
// refunds of such a credit (+), and the reversal of each. Each entry names the document (and line) that caused it and
// the invoice it concerns (none for a credit on the account or its refund). The customer's
// open balance (customer_balances, per currency) and the invoice's balance are kept here, in the entries'
// transaction, and nowhere else; the checker (audit.ts) recomputes both from the entries.
import { Decimal } from 'decimal.js';
import type { Transaction } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';
import { newId } from '../../platform/ids.js';

/**
 * The CHECK of the table lists the same (and that exactly the last six name no invoice). Invoices post the first
 * two, payments the next four, credit notes the rest.
 */
export type AccountEntryType =
  | 'invoice' | 'invoice_void'
  | 'payment_allocation' | 'payment_allocation_reversal'
  | 'credit_application' | 'credit_application_reversal'
  | 'payment_unallocated' | 'payment_unallocated_reversal'
  | 'credit_unapplied' | 'credit_unapplied_reversal'
  | 'credit_refund' | 'credit_refund_reversal';

export interface AccountEntry {
  customerId: string;
  type: AccountEntryType;
  documentType: string;
  documentId: string;
  lineNumber: number | null;
  /** The invoice whose balance moves; null for a credit on the account or its refund. */
  invoiceId: string | null;
  /** Signed decimal: + raises what the customer owes. */
  amount: string;
  currency: string;
}

/**
 * The customer's open balance in a currency, its row locked for the rest of the transaction (created at zero when
 * the customer has none yet). In the global lock order it comes after the stock and empties rows, before numbers.
 */
export async function lockCustomerBalance(tx: Transaction<DB>, organizationId: string, customerId: string, currency: string): Promise<Decimal> {
  await tx.insertInto('customer_balances')
    .values({ organization_id: organizationId, customer_id: customerId, currency, open_balance: '0' })
    .onConflict((conflict) => conflict.doNothing())
    .execute();
  const row = await tx.selectFrom('customer_balances').select('open_balance')
    .where('organization_id', '=', organizationId).where('customer_id', '=', customerId).where('currency', '=', currency)
    .forUpdate().executeTakeFirstOrThrow();
  return new Decimal(row.open_balance);
}

/**
 * Appends entries and moves the balances they change: each customer's open balance (whose row the caller has
 * locked with lockCustomerBalance) and each invoice's balance, by the entries' sums. The invoice's status (paid when
 * its balance reaches zero, open again when it rises) is its caller's to move; the invoices table's CHECK keeps
 * the balance within 0 and the total, so an over-allocation that slipped past the caller fails the transaction.
 */
export async function postAccountEntries(tx: Transaction<DB>, organizationId: string, entries: AccountEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await tx.insertInto('customer_account_entries').values(entries.map((entry) => ({
    organization_id: organizationId, id: newId('cae'), customer_id: entry.customerId, type: entry.type,
    document_type: entry.documentType, document_id: entry.documentId, line_number: entry.lineNumber, invoice_id: entry.invoiceId,
    amount: entry.amount, currency: entry.currency,
  }))).execute();
  const byCustomer = new Map<string, { customer_id: string; currency: string; change: Decimal }>();
  const byInvoice = new Map<string, Decimal>();
  for (const entry of entries) {
    const key = `${entry.customerId}|${entry.currency}`;
    const before = byCustomer.get(key);
    byCustomer.set(key, { customer_id: entry.customerId, currency: entry.currency, change: (before?.change ?? new Decimal(0)).plus(entry.amount) });
    if (entry.invoiceId !== null) byInvoice.set(entry.invoiceId, (byInvoice.get(entry.invoiceId) ?? new Decimal(0)).plus(entry.amount));
  }
  for (const { customer_id, currency, change } of byCustomer.values()) {
    await tx.updateTable('customer_balances')
      .set((eb) => ({ open_balance: eb('open_balance', '+', change.toFixed()), updated_at: eb.fn<Date>('now') }))
      .where('organization_id', '=', organizationId).where('customer_id', '=', customer_id).where('currency', '=', currency)
      .execute();
  }
  for (const [invoiceId, change] of byInvoice) {
    await tx.updateTable('invoices')
      // The balance moves by the entries' sum; the numeric addition is the database's, exact.
      .set((eb) => ({ balance: eb('balance', '+', change.toFixed()), updated_at: eb.fn<Date>('now') }))
      .where('organization_id', '=', organizationId).where('id', '=', invoiceId)
      .execute();
  }
}
