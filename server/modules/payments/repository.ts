// The payments module's reads: a receipt, the receipts of a group, and the list. Every statement is scoped by
// organization_id first.
import { sql, type Selectable } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';
import type { Actor } from '../../domain/actor.js';
import type { Db } from '../../platform/database/transaction.js';
import { requireFilterRecords } from '../../platform/lists/filter-records.js';
import { readPage, type ListQuery, type ListRequest, type Page } from '../../platform/lists/page.js';
import { equals } from '../../platform/resources/filters.js';

const paymentColumns = ['id', 'number', 'receipt_group_id', 'status', 'customer_id', 'method', 'invoice_id', 'amount', 'currency', 'reference',
  'trip_id', 'salesperson_id', 'reversal_reason', 'reversed_at', 'created_at', 'updated_at',
  'posting_status', 'accounting_ref', 'accounting_type', 'posting_reason'] as const;

export type PaymentRow = Pick<Selectable<DB['payments']>, (typeof paymentColumns)[number]> & { payment_date: string };

const paymentSelection = [
  ...paymentColumns.map((c) => `t.${c}` as const),
  // A date column as YYYY-MM-DD text: to_char has no builder form; the column is fixed here.
  sql<string>`to_char(t.payment_date, 'YYYY-MM-DD')`.as('payment_date'),
];

/** One receipt; null when the organisation has none with this id. */
export async function findPayment(db: Db, organizationId: string, id: string): Promise<PaymentRow | null> {
  return (await db.selectFrom('payments as t').select(paymentSelection).where('t.organization_id', '=', organizationId).where('t.id', '=', id).executeTakeFirst()) ?? null;
}

/** Receipts by id, in the order of `ids`. */
export async function findPayments(db: Db, organizationId: string, ids: readonly string[]): Promise<PaymentRow[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('payments as t').select(paymentSelection).where('t.organization_id', '=', organizationId).where('t.id', 'in', [...ids]).execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => byId.get(id)!);
}

export interface PaymentFilters {
  customerId?: string;
  invoiceId?: string;
  tripId?: string;
  status?: string;
}

/** 404 not_found naming the parameter when a filter id names no record of the organisation. */
export async function requirePaymentFilters(db: Db, organizationId: string, query: PaymentFilters): Promise<void> {
  await requireFilterRecords(db, organizationId, [
    { parameter: 'customerId', table: 'customers', what: 'customer', id: query.customerId },
    { parameter: 'invoiceId', table: 'invoices', what: 'invoice', id: query.invoiceId },
    { parameter: 'tripId', table: 'trips', what: 'trip', id: query.tripId },
  ]);
}

/** A page of receipts, newest first, or oldest change first with updatedSince. */
export async function listPayments(db: Db, actor: Actor, request: ListRequest, filters: PaymentFilters): Promise<Page<PaymentRow>> {
  const organizationId = actor.organization.id;
  const query = db.selectFrom('payments as t').select(paymentSelection).where('t.organization_id', '=', organizationId);
  return readPage('payments', query as unknown as ListQuery<PaymentRow>, organizationId, request, {
    customerId: equals('payments', 'customer_id', filters.customerId),
    invoiceId: equals('payments', 'invoice_id', filters.invoiceId),
    tripId: equals('payments', 'trip_id', filters.tripId),
    status: equals('payments', 'status', filters.status),
  });
}
