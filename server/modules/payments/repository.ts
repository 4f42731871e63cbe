// The payments module's reads: a receipt, the receipts of a group (a collection), and the list. Every statement is
// scoped by organization_id first.
import { sql, type Selectable } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';
import type { Actor } from '../../platform/access/actor.js';
import type { Db } from '../../platform/database/transaction.js';
import { requireFilterRecords } from '../../platform/lists/filter-records.js';
import { readPage, type ListQuery, type ListRequest, type Page } from '../../platform/lists/page.js';
import { equals, hasExternalCode } from '../../platform/resources/filters.js';

/**
 * The resource of a payment's external codes: a code names a collection (the receipts of one POST /payments, its
 * receipt group), not a receipt, so record_id is the receipt_group_id (decision 0030).
 */
export const PAYMENT_COLLECTION = 'payment_collection';

const paymentColumns = [
  'id',
  'number',
  'receipt_group_id',
  'status',
  'customer_id',
  'method',
  'invoice_id',
  'amount',
  'currency',
  'reference',
  'trip_id',
  'salesperson_id',
  'reversal_reason',
  'reversed_at',
  'created_at',
  'updated_at',
  'posting_status',
  'accounting_ref',
  'accounting_type',
  'posting_reason',
] as const;

export type PaymentRow = Pick<Selectable<DB['payments']>, (typeof paymentColumns)[number]> & { payment_date: string };

const paymentSelection = [
  ...paymentColumns.map((c) => `t.${c}` as const),
  // A date column as YYYY-MM-DD text: to_char has no builder form; the column is fixed here.
  sql<string>`to_char(t.payment_date, 'YYYY-MM-DD')`.as('payment_date'),
];

/** One receipt; null when the organisation has none with this id. */
export async function findPayment(db: Db, organizationId: string, id: string): Promise<PaymentRow | null> {
  return (
    (await db
      .selectFrom('payments as t')
      .select(paymentSelection)
      .where('t.organization_id', '=', organizationId)
      .where('t.id', '=', id)
      .executeTakeFirst()) ?? null
  );
}

/** Receipts by id, in the order of `ids`. */
export async function findPayments(db: Db, organizationId: string, ids: readonly string[]): Promise<PaymentRow[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('payments as t')
    .select(paymentSelection)
    .where('t.organization_id', '=', organizationId)
    .where('t.id', 'in', [...ids])
    .execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => byId.get(id)!);
}

/**
 * The receipts of one collection (receipt group), in the order of their numbers (the allocations' order, then the
 * rest's, as they were taken); an empty list when the organisation has no such group. Read by the
 * (organization_id, receipt_group_id) index.
 */
export async function findCollection(db: Db, organizationId: string, receiptGroupId: string): Promise<PaymentRow[]> {
  // By length first: numbers are padded to 6 digits and grow past RCT-999999, where text order alone would not hold.
  return db
    .selectFrom('payments as t')
    .select(paymentSelection)
    .where('t.organization_id', '=', organizationId)
    .where('t.receipt_group_id', '=', receiptGroupId)
    .orderBy(sql`length(t.number)`)
    .orderBy('t.number')
    .execute();
}

export interface PaymentFilters {
  externalCode?: string;
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
export async function listPayments(
  db: Db,
  actor: Actor,
  request: ListRequest,
  filters: PaymentFilters,
): Promise<Page<PaymentRow>> {
  const organizationId = actor.organization.id;
  const query = db.selectFrom('payments as t').select(paymentSelection).where('t.organization_id', '=', organizationId);
  return readPage('payments', query as unknown as ListQuery<PaymentRow>, organizationId, request, {
    // The code gives the receipt group (external_codes' index), the group its receipts (payments' group index).
    externalCode: hasExternalCode('payments', PAYMENT_COLLECTION, filters.externalCode, 'receipt_group_id'),
    customerId: equals('payments', 'customer_id', filters.customerId),
    invoiceId: equals('payments', 'invoice_id', filters.invoiceId),
    tripId: equals('payments', 'trip_id', filters.tripId),
    status: equals('payments', 'status', filters.status),
  });
}
