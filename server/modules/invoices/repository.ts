// The invoices module's reads: an invoice with its lines, and the list. Every statement is scoped by organization_id
// first.
import { sql, type Selectable } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';
import type { Actor } from '../../platform/access/actor.js';
import type { Db } from '../../platform/database/transaction.js';
import { codesOf } from '../../platform/external-codes/external-codes.js';
import { equals, hasExternalCode } from '../../platform/resources/filters.js';
import { requireFilterRecords } from '../../platform/lists/filter-records.js';
import { readPage, type ListQuery, type ListRequest, type Page } from '../../platform/lists/page.js';

/** The resource name of invoices in external codes (and events, and ledger rows: documents.ts INVOICE). */
export const INVOICE_RESOURCE = 'invoice';

/** At most this many lines in one invoice's JSON; the rest is said by `linesTruncated`. */
export const MAX_LINES = 500;

const invoiceColumns = [
  'id',
  'number',
  'customer_id',
  'status',
  'currency',
  'location_id',
  'trip_id',
  'salesperson_id',
  'order_id',
  'subtotal',
  'discount',
  'tax',
  'total',
  'balance',
  'void_reason',
  'voided_at',
  'created_at',
  'updated_at',
  'posting_status',
  'accounting_ref',
  'accounting_type',
  'posting_reason',
  'fiscal_status',
  'fiscal_fdn',
  'fiscal_verification_code',
  'fiscal_qr_code',
  'fiscalised_at',
] as const;
const lineColumns = [
  'invoice_id',
  'line_number',
  'kind',
  'product_id',
  'unit',
  'quantity',
  'unit_price',
  'discount',
  'tax_rate',
  'amount',
  'tax',
] as const;

export type InvoiceRow = Pick<Selectable<DB['invoices']>, (typeof invoiceColumns)[number]> & {
  issue_date: string;
  due_date: string;
};

/** The invoice's columns, its dates as the calendar dates they are (pg would answer a local-midnight Date). */
const invoiceSelection = [
  ...invoiceColumns.map((c) => `t.${c}` as const),
  // A date column as YYYY-MM-DD text: to_char has no builder form; the column is fixed here.
  sql<string>`to_char(t.issue_date, 'YYYY-MM-DD')`.as('issue_date'),
  // As above.
  sql<string>`to_char(t.due_date, 'YYYY-MM-DD')`.as('due_date'),
];
export type InvoiceLineRow = Pick<Selectable<DB['invoice_lines']>, (typeof lineColumns)[number]>;

/** An invoice and its first MAX_LINES lines (one more is read to know whether there are more); null when not there. */
export async function findInvoice(
  db: Db,
  organizationId: string,
  id: string,
): Promise<{
  invoice: InvoiceRow;
  lines: InvoiceLineRow[];
  linesTruncated: boolean;
  externalCodes: Record<string, string>;
} | null> {
  const invoice = await db
    .selectFrom('invoices as t')
    .select(invoiceSelection)
    .where('t.organization_id', '=', organizationId)
    .where('t.id', '=', id)
    .executeTakeFirst();
  if (!invoice) return null;
  const lines = await db
    .selectFrom('invoice_lines')
    .select(lineColumns)
    .where('organization_id', '=', organizationId)
    .where('invoice_id', '=', id)
    .orderBy('line_number')
    .limit(MAX_LINES + 1)
    .execute();
  const codes = await codesOf(db, organizationId, INVOICE_RESOURCE, [id]);
  return {
    invoice,
    lines: lines.slice(0, MAX_LINES),
    linesTruncated: lines.length > MAX_LINES,
    externalCodes: codes.get(id) ?? {},
  };
}

export interface InvoiceFilters {
  customerId?: string;
  status?: string;
  externalCode?: string;
}

/** 404 not_found naming the parameter when customerId names no customer of the organisation. */
export async function requireInvoiceFilters(db: Db, organizationId: string, query: InvoiceFilters): Promise<void> {
  await requireFilterRecords(db, organizationId, [
    { parameter: 'customerId', table: 'customers', what: 'customer', id: query.customerId },
  ]);
}

/** A page of invoices (without lines), newest first, or oldest change first with updatedSince. */
export async function listInvoices(
  db: Db,
  actor: Actor,
  request: ListRequest,
  filters: InvoiceFilters,
): Promise<Page<InvoiceRow>> {
  const organizationId = actor.organization.id;
  const query = db.selectFrom('invoices as t').select(invoiceSelection).where('t.organization_id', '=', organizationId);
  return readPage('invoices', query as unknown as ListQuery<InvoiceRow>, organizationId, request, {
    customerId: equals('invoices', 'customer_id', filters.customerId),
    status: equals('invoices', 'status', filters.status),
    externalCode: hasExternalCode('invoices', INVOICE_RESOURCE, filters.externalCode),
  });
}

/** The lines of several invoices (a list's page), each cut at MAX_LINES, in one statement. */
export async function linesOf(
  db: Db,
  organizationId: string,
  invoiceIds: string[],
): Promise<Map<string, { lines: InvoiceLineRow[]; truncated: boolean }>> {
  const found = new Map<string, { lines: InvoiceLineRow[]; truncated: boolean }>();
  if (invoiceIds.length === 0) return found;
  const rows = await db
    .selectFrom('invoice_lines')
    .select(lineColumns)
    .where('organization_id', '=', organizationId)
    .where('invoice_id', 'in', invoiceIds)
    .orderBy('invoice_id')
    .orderBy('line_number')
    .execute();
  for (const row of rows) {
    const entry = found.get(row.invoice_id) ?? { lines: [], truncated: false };
    if (entry.lines.length < MAX_LINES) entry.lines.push(row);
    else entry.truncated = true;
    found.set(row.invoice_id, entry);
  }
  return found;
}
