// The customer account: an append-only ledger (customer_account_entries; refuse_ledger_change() refuses any edit) of
// what raises or lowers what a customer owes: invoices (+), their voids (-), payment allocations and credit
// applications (-), credits left on the account (an unallocated payment, a credit note's remaining amount: -), cash
// refunds of such a credit (+), and the reversal of each. Each entry names the document (and line) that caused it and
// the invoice it concerns (none for a credit on the account or its refund). The customer's
// open balance (customer_balances, per currency) and the invoice's balance are kept here, in the entries'
// transaction, and nowhere else; the checker (audit.ts) recomputes both from the entries.
//
// It is a module of its own, below the documents that post to it (invoices, payments, credit notes, returns), so that
// none of them imports another to reach the account: a cash sale's invoice records its payment, and the payment
// posts here, not back into the invoices module. An invoice's status follows its balance here by the invoice's own
// transition table, read from the composed document registry.
import { Decimal } from 'decimal.js';
import { sql, type Transaction } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';
import { recordEvents } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';
import { lifecycleOf } from '../../domain/documents/registry.js';

/**
 * The CHECK of the table lists the same (and that exactly the last six name no invoice). Invoices post the first
 * two, payments the next four, credit notes the rest.
 */
export type AccountEntryType =
  | 'invoice'
  | 'invoice_void'
  | 'payment_allocation'
  | 'payment_allocation_reversal'
  | 'credit_application'
  | 'credit_application_reversal'
  | 'payment_unallocated'
  | 'payment_unallocated_reversal'
  | 'credit_unapplied'
  | 'credit_unapplied_reversal'
  | 'credit_refund'
  | 'credit_refund_reversal';

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
export async function lockCustomerBalance(
  tx: Transaction<DB>,
  organizationId: string,
  customerId: string,
  currency: string,
): Promise<Decimal> {
  return (await lockCustomerBalances(tx, organizationId, [{ customerId, currency }])).get(
    balanceKey(customerId, currency),
  )!;
}

export const balanceKey = (customerId: string, currency: string) => `${customerId}|${currency}`;

/** lockCustomerBalance for several customers (a set of invoices): the rows locked in (customer, currency) byte order. */
export async function lockCustomerBalances(
  tx: Transaction<DB>,
  organizationId: string,
  pairs: readonly { customerId: string; currency: string }[],
): Promise<Map<string, Decimal>> {
  const unique = [...new Map(pairs.map((p) => [balanceKey(p.customerId, p.currency), p])).values()];
  if (unique.length === 0) return new Map();
  await tx
    .insertInto('customer_balances')
    .values(
      unique.map((p) => ({
        organization_id: organizationId,
        customer_id: p.customerId,
        currency: p.currency,
        open_balance: '0',
      })),
    )
    .onConflict((conflict) => conflict.doNothing())
    .execute();
  const rows = await tx
    .selectFrom('customer_balances')
    .select(['customer_id', 'currency', 'open_balance'])
    .where('organization_id', '=', organizationId)
    .where((eb) =>
      eb.or(unique.map((p) => eb.and([eb('customer_id', '=', p.customerId), eb('currency', '=', p.currency)]))),
    )
    // Byte order whatever the database's collation: one lock order for every posting.
    .orderBy(sql`customer_id COLLATE "C"`)
    .orderBy(sql`currency COLLATE "C"`)
    .forUpdate()
    .execute();
  return new Map(rows.map((row) => [balanceKey(row.customer_id, row.currency), new Decimal(row.open_balance)]));
}

/**
 * Appends entries and moves the balances they change: each customer's open balance (whose row the caller has
 * locked with lockCustomerBalance) and each invoice's balance, by the entries' sums (one statement each, however
 * many). The invoice's status (paid when its balance reaches zero, open again when it rises) is its caller's to
 * move; the invoices table's CHECK keeps the balance within 0 and the total, so an over-allocation that slipped past
 * the caller fails the transaction.
 */
export async function postAccountEntries(
  tx: Transaction<DB>,
  organizationId: string,
  entries: AccountEntry[],
): Promise<void> {
  if (entries.length === 0) return;
  await tx
    .insertInto('customer_account_entries')
    .values(
      entries.map((entry) => ({
        organization_id: organizationId,
        id: newId('cae'),
        customer_id: entry.customerId,
        type: entry.type,
        document_type: entry.documentType,
        document_id: entry.documentId,
        line_number: entry.lineNumber,
        invoice_id: entry.invoiceId,
        amount: entry.amount,
        currency: entry.currency,
      })),
    )
    .execute();
  const byCustomer = new Map<string, { customer_id: string; currency: string; change: Decimal }>();
  const byInvoice = new Map<string, Decimal>();
  for (const entry of entries) {
    const key = balanceKey(entry.customerId, entry.currency);
    const before = byCustomer.get(key);
    byCustomer.set(key, {
      customer_id: entry.customerId,
      currency: entry.currency,
      change: (before?.change ?? new Decimal(0)).plus(entry.amount),
    });
    if (entry.invoiceId !== null)
      byInvoice.set(entry.invoiceId, (byInvoice.get(entry.invoiceId) ?? new Decimal(0)).plus(entry.amount));
  }
  const customers = [...byCustomer.values()].map(({ customer_id, currency, change }) => ({
    customer_id,
    currency,
    change: change.toFixed(),
  }));
  // A set of rows from one JSON parameter has no builder form (jsonb_to_recordset); the numeric addition is the
  // database's, exact (the change travels as a decimal string).
  await sql`
    UPDATE customer_balances AS b SET open_balance = b.open_balance + x.change, updated_at = now()
      FROM jsonb_to_recordset(${JSON.stringify(customers)}::jsonb) AS x(customer_id text, currency text, change numeric)
     WHERE b.organization_id = ${organizationId} AND b.customer_id = x.customer_id AND b.currency = x.currency`.execute(
    tx,
  );
  if (byInvoice.size > 0) {
    const invoices = [...byInvoice].map(([id, change]) => ({ id, change: change.toFixed() }));
    // As above: one statement for the set, the JSON bound.
    await sql`
      UPDATE invoices AS i SET balance = i.balance + x.change, updated_at = now()
        FROM jsonb_to_recordset(${JSON.stringify(invoices)}::jsonb) AS x(id text, change numeric)
       WHERE i.organization_id = ${organizationId} AND i.id = x.id`.execute(tx);
  }
}

/** An invoice's row as a payment, credit note, return or void needs it, read under its row lock. */
export interface LockedInvoice {
  id: string;
  number: string;
  status: 'open' | 'paid' | 'void';
  customer_id: string;
  currency: string;
  total: string;
  balance: string;
  trip_id: string | null;
  location_id: string;
  /** YYYY-MM-DD. */
  issue_day: string;
}

/**
 * Locks the organisation's invoices among `ids` (FOR UPDATE, in id order: the first locks of any operation that
 * changes an invoice's balance, before stock, empties, the customer's balance and the number) and returns them by
 * id; an id that is not the organisation's invoice is absent from the map, for the caller to name in its error.
 * Two operations on one invoice (20 payments, a void and a payment) thus run one after the other on fresh rows.
 */
export async function lockInvoices(
  tx: Transaction<DB>,
  organizationId: string,
  ids: readonly string[],
): Promise<Map<string, LockedInvoice>> {
  if (ids.length === 0) return new Map();
  const rows = await tx
    .selectFrom('invoices')
    .select(['id', 'number', 'status', 'customer_id', 'currency', 'total', 'balance', 'trip_id', 'location_id'])
    // The issue date as its calendar string: pg would make a DATE a Date at local midnight, which can shift the day.
    .select(sql<string>`to_char(issue_date, 'YYYY-MM-DD')`.as('issue_day'))
    .where('organization_id', '=', organizationId)
    .where('id', 'in', [...new Set(ids)])
    .orderBy('id')
    .forUpdate()
    .execute();
  return new Map(
    rows.map((row) => [
      row.id,
      { ...row, status: row.status as LockedInvoice['status'], total: String(row.total), balance: String(row.balance) },
    ]),
  );
}

/**
 * After account entries moved the balances of `invoiceIds` (locked by lockInvoices): each reaching zero becomes
 * paid, each rising from zero open again (the lifecycle's settle and reopen, guarded UPDATEs), and every one of them
 * gets an `invoice.updated` event (its balance changed even when its status did not). Void invoices are left alone.
 */
export async function settleInvoiceStatuses(
  tx: Transaction<DB>,
  organizationId: string,
  invoiceIds: readonly string[],
): Promise<void> {
  const ids = [...new Set(invoiceIds)];
  if (ids.length === 0) return;
  const rows = await tx
    .selectFrom('invoices')
    .select(['id', 'status', 'balance'])
    .where('organization_id', '=', organizationId)
    .where('id', 'in', ids)
    .orderBy('id')
    .execute();
  // The invoices module declares the table (its manifest's documentTypes); settle and reopen are moves of it.
  const invoiceLifecycle = lifecycleOf('invoice');
  const changed: string[] = [];
  for (const row of rows) {
    const status = row.status as LockedInvoice['status'];
    if (status === 'void') continue;
    const zero = new Decimal(row.balance).isZero();
    const command = status === 'open' && zero ? 'settle' : status === 'paid' && !zero ? 'reopen' : null;
    if (command !== null) {
      const { to } = invoiceLifecycle.next(status, command, row.id);
      await tx
        .updateTable('invoices')
        .set({ status: to })
        .where('organization_id', '=', organizationId)
        .where('id', '=', row.id)
        .where('status', '=', status)
        .execute();
    }
    changed.push(row.id);
  }
  await recordEvents(tx, organizationId, 'invoice.updated', 'invoice', changed);
}
