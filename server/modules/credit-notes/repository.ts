// The credit notes module's reads: a credit note with its customer, lines, live applications and codes, and the
// list. Every statement is scoped by organization_id first.
import { sql } from 'kysely';
import type { Actor } from '../../platform/access/actor.js';
import type { Db } from '../../platform/database/transaction.js';
import { codesOf } from '../../platform/external-codes/external-codes.js';
import { requireFilterRecords } from '../../platform/lists/filter-records.js';
import { readPage, type ListQuery, type ListRequest, type Page } from '../../platform/lists/page.js';
import { equals, when } from '../../platform/resources/filters.js';
import { CREDIT_NOTE } from './documents.js';

/** At most this many lines in one credit note's JSON; the rest is said by `linesTruncated`. */
export const MAX_LINES = 500;

export interface CreditNoteRow {
  id: string;
  number: string;
  status: string;
  type: string;
  customer_id: string;
  invoice_id: string | null;
  return_id: string | null;
  trip_id: string | null;
  issue_date: string;
  reason: string | null;
  notes: string | null;
  subtotal: string;
  discount: string;
  tax: string;
  total: string;
  remaining_amount: string;
  cash_refund_amount: string | null;
  currency: string;
  fiscal_status: string | null;
  fiscal_fdn: string | null;
  fiscal_verification_code: string | null;
  fiscal_qr_code: string | null;
  fiscalised_at: Date | null;
  posting_status: string;
  accounting_ref: string | null;
  accounting_type: string | null;
  posting_reason: string | null;
  cancel_reason: string | null;
  cancelled_at: Date | null;
  created_at: Date;
  updated_at: Date;
  customer_name: string;
  customer_code: string;
  customer_phone: string | null;
  customer_tax_id: string | null;
}

export interface CreditNoteLineRow {
  credit_note_id: string;
  line_number: number;
  type: string;
  product_id: string | null;
  product_code: string | null;
  product_name: string | null;
  description: string;
  quantity: string;
  unit_price: string;
  discount: string;
  tax_rate: string;
  amount: string;
  tax: string;
}

export interface ApplicationRow {
  credit_note_id: string;
  invoice_id: string;
  invoice_number: string;
  amount: string;
  date: string;
}

/** What a credit note's JSON needs beside its row. */
export interface CreditNoteParts {
  lines: CreditNoteLineRow[];
  linesTruncated: boolean;
  applications: ApplicationRow[];
  externalCodes: Record<string, string>;
}

function selectCreditNotes(db: Db, organizationId: string) {
  return (
    db
      .selectFrom('credit_notes as t')
      .innerJoin('customers as c', (join) =>
        join.onRef('c.organization_id', '=', 't.organization_id').onRef('c.id', '=', 't.customer_id'),
      )
      .select([
        't.id',
        't.number',
        't.status',
        't.type',
        't.customer_id',
        't.invoice_id',
        't.return_id',
        't.trip_id',
        't.reason',
        't.notes',
        't.subtotal',
        't.discount',
        't.tax',
        't.total',
        't.remaining_amount',
        't.cash_refund_amount',
        't.currency',
        't.fiscal_status',
        't.fiscal_fdn',
        't.fiscal_verification_code',
        't.fiscal_qr_code',
        't.fiscalised_at',
        't.posting_status',
        't.accounting_ref',
        't.accounting_type',
        't.posting_reason',
        't.cancel_reason',
        't.cancelled_at',
        't.created_at',
        't.updated_at',
        'c.name as customer_name',
        'c.outlet_code as customer_code',
        'c.phone as customer_phone',
        'c.tax_id as customer_tax_id',
      ])
      // A date column as YYYY-MM-DD text: to_char has no builder form; the column is fixed here.
      .select(sql<string>`to_char(t.issue_date, 'YYYY-MM-DD')`.as('issue_date'))
      .where('t.organization_id', '=', organizationId)
  );
}

/** A credit note and its parts; null when the organisation has none with this id. */
export async function findCreditNote(
  db: Db,
  organizationId: string,
  id: string,
): Promise<{ row: CreditNoteRow; parts: CreditNoteParts } | null> {
  const row = await selectCreditNotes(db, organizationId).where('t.id', '=', id).executeTakeFirst();
  if (!row) return null;
  const parts = await partsOf(db, organizationId, [id]);
  return { row: row as CreditNoteRow, parts: parts.get(id)! };
}

export interface CreditNoteFilters {
  status?: string;
  customerId?: string;
  invoiceId?: string;
  externalCode?: string;
}

/** 404 not_found naming the parameter when customerId or invoiceId names no record of the organisation. */
export async function requireCreditNoteFilters(
  db: Db,
  organizationId: string,
  query: CreditNoteFilters,
): Promise<void> {
  await requireFilterRecords(db, organizationId, [
    { parameter: 'customerId', table: 'customers', what: 'customer', id: query.customerId },
    { parameter: 'invoiceId', table: 'invoices', what: 'invoice', id: query.invoiceId },
  ]);
}

/** A page of credit notes, newest first, or oldest change first with updatedSince. */
export async function listCreditNotes(
  db: Db,
  actor: Actor,
  request: ListRequest,
  filters: CreditNoteFilters,
): Promise<Page<CreditNoteRow>> {
  const organizationId = actor.organization.id;
  const query = selectCreditNotes(db, organizationId);
  const code = filters.externalCode?.trim();
  return readPage('credit-notes', query as unknown as ListQuery<CreditNoteRow>, organizationId, request, {
    status: equals('credit_notes', 'status', filters.status),
    customerId: equals('credit_notes', 'customer_id', filters.customerId),
    invoiceId: equals('credit_notes', 'invoice_id', filters.invoiceId),
    // The credit notes carrying this code in any code system, from the external_codes index.
    externalCode:
      code === undefined
        ? undefined
        : when(
            code,
            sql<boolean>`t.id IN (SELECT e.record_id FROM external_codes AS e WHERE e.organization_id = t.organization_id AND e.resource = ${CREDIT_NOTE} AND e.code = ${code})`,
          ),
  });
}

/** Lines (each credit note's first MAX_LINES), live applications and codes of several credit notes, a statement each. */
export async function partsOf(db: Db, organizationId: string, ids: string[]): Promise<Map<string, CreditNoteParts>> {
  const parts = new Map<string, CreditNoteParts>(
    ids.map((id) => [id, { lines: [], linesTruncated: false, applications: [], externalCodes: {} }]),
  );
  if (ids.length === 0) return parts;
  const lines = await db
    .selectFrom('credit_note_lines as l')
    .leftJoin('products as p', (join) =>
      join.onRef('p.organization_id', '=', 'l.organization_id').onRef('p.id', '=', 'l.product_id'),
    )
    .select([
      'l.credit_note_id',
      'l.line_number',
      'l.type',
      'l.product_id',
      'p.product_code as product_code',
      'p.name as product_name',
      'l.description',
      'l.quantity',
      'l.unit_price',
      'l.discount',
      'l.tax_rate',
      'l.amount',
      'l.tax',
    ])
    .where('l.organization_id', '=', organizationId)
    .where('l.credit_note_id', 'in', ids)
    .orderBy('l.credit_note_id')
    .orderBy('l.line_number')
    .execute();
  for (const line of lines) {
    const entry = parts.get(line.credit_note_id)!;
    if (entry.lines.length < MAX_LINES) entry.lines.push(line);
    else entry.linesTruncated = true;
  }
  // The live applications: each invoice's credit_application entries net of their reversals, when not 0; a
  // grouped sum with a HAVING and a date formatted by to_char has no builder form worth its length; values are bound.
  const { rows: applications } = await sql<ApplicationRow>`
    SELECT e.document_id AS credit_note_id, e.invoice_id, i.number AS invoice_number, sum(e.amount)::text AS amount,
           to_char(min(e.created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date
      FROM customer_account_entries AS e
      JOIN invoices AS i ON i.organization_id = e.organization_id AND i.id = e.invoice_id
     WHERE e.organization_id = ${organizationId} AND e.document_type = ${CREDIT_NOTE} AND e.document_id = ANY(${ids})
       AND e.type IN ('credit_application', 'credit_application_reversal')
     GROUP BY e.document_id, e.invoice_id, i.number
    HAVING sum(e.amount) <> 0
     ORDER BY e.invoice_id`.execute(db);
  for (const application of applications) parts.get(application.credit_note_id)!.applications.push(application);
  const codes = await codesOf(db, organizationId, CREDIT_NOTE, ids);
  for (const [id, found] of codes) parts.get(id)!.externalCodes = found;
  return parts;
}
