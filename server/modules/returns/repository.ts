// The returns module's reads: a return with its lines, credit note and codes, and the list. Every statement is
// scoped by organization_id first.
import { sql } from 'kysely';
import type { Actor } from '../../platform/access/actor.js';
import type { Db } from '../../platform/database/transaction.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { codesOf } from '../../platform/external-codes/external-codes.js';
import { requireFilterRecords } from '../../platform/lists/filter-records.js';
import { readPage, type ListQuery, type ListRequest, type Page } from '../../platform/lists/page.js';
import { equals, when } from '../../platform/resources/filters.js';
import { RETURN } from './documents.js';

/** At most this many lines in one return's JSON; the rest is said by `linesTruncated`. */
export const MAX_LINES = 500;

export interface ReturnRow {
  id: string;
  number: string;
  status: string;
  customer_id: string;
  invoice_id: string;
  location_id: string;
  bad_stock_location_id: string | null;
  trip_id: string | null;
  return_date: string;
  reason: string | null;
  currency: string;
  subtotal: string;
  discount: string;
  tax: string;
  total: string;
  created_at: Date;
  updated_at: Date;
}

export interface ReturnLineRow {
  return_id: string;
  line_number: number;
  invoice_line_number: number;
  product_id: string;
  unit: string;
  quantity: number;
  condition: string;
  unit_price: string;
  discount: string;
  tax_rate: string;
  amount: string;
  tax: string;
}

export interface ReturnParts {
  lines: ReturnLineRow[];
  linesTruncated: boolean;
  creditNoteId: string | null;
  externalCodes: Record<string, string>;
}

function selectReturns(db: Db, organizationId: string) {
  return (
    db
      .selectFrom('returns as t')
      .select([
        't.id',
        't.number',
        't.status',
        't.customer_id',
        't.invoice_id',
        't.location_id',
        't.bad_stock_location_id',
        't.trip_id',
        't.reason',
        't.currency',
        't.subtotal',
        't.discount',
        't.tax',
        't.total',
        't.created_at',
        't.updated_at',
      ])
      // A date column as YYYY-MM-DD text: to_char has no builder form; the column is fixed here.
      .select(sql<string>`to_char(t.return_date, 'YYYY-MM-DD')`.as('return_date'))
      .where('t.organization_id', '=', organizationId)
  );
}

export async function findReturn(
  db: Db,
  organizationId: string,
  id: string,
): Promise<{ row: ReturnRow; parts: ReturnParts } | null> {
  const row = await selectReturns(db, organizationId).where('t.id', '=', id).executeTakeFirst();
  if (!row) return null;
  return { row, parts: (await partsOf(db, organizationId, [id])).get(id)! };
}

export interface ReturnFilters {
  customerId?: string;
  invoiceId?: string;
  externalCode?: string;
}

/** 404 naming the parameter for a filter id of no record of the organisation; externalCode with updatedSince is 400. */
export async function requireReturnFilters(
  db: Db,
  organizationId: string,
  query: ReturnFilters,
  request: ListRequest,
): Promise<void> {
  if (query.externalCode !== undefined && request.updatedSince !== undefined) {
    throw new ApiError(
      'invalid_field',
      'externalCode finds one return; it cannot be combined with the updatedSince feed.',
      [{ field: '/query/externalCode', code: 'invalid_field', message: 'not together with updatedSince' }],
    );
  }
  await requireFilterRecords(db, organizationId, [
    { parameter: 'customerId', table: 'customers', what: 'customer', id: query.customerId },
    { parameter: 'invoiceId', table: 'invoices', what: 'invoice', id: query.invoiceId },
  ]);
}

export async function listReturns(
  db: Db,
  actor: Actor,
  request: ListRequest,
  filters: ReturnFilters,
): Promise<Page<ReturnRow>> {
  const organizationId = actor.organization.id;
  const code = filters.externalCode?.trim();
  return readPage(
    'returns',
    selectReturns(db, organizationId) as unknown as ListQuery<ReturnRow>,
    organizationId,
    request,
    {
      customerId: equals('returns', 'customer_id', filters.customerId),
      invoiceId: equals('returns', 'invoice_id', filters.invoiceId),
      // The returns carrying this code in any code system, from the external_codes index.
      externalCode:
        code === undefined
          ? undefined
          : when(
              code,
              sql<boolean>`t.id IN (SELECT e.record_id FROM external_codes AS e WHERE e.organization_id = t.organization_id AND e.resource = ${RETURN} AND e.code = ${code})`,
            ),
    },
  );
}

/** Lines (each return's first MAX_LINES), credit notes and codes of several returns, a statement each. */
export async function partsOf(db: Db, organizationId: string, ids: string[]): Promise<Map<string, ReturnParts>> {
  const parts = new Map<string, ReturnParts>(
    ids.map((id) => [id, { lines: [], linesTruncated: false, creditNoteId: null, externalCodes: {} }]),
  );
  if (ids.length === 0) return parts;
  const lines = await db
    .selectFrom('return_lines')
    .select([
      'return_id',
      'line_number',
      'invoice_line_number',
      'product_id',
      'unit',
      'quantity',
      'condition',
      'unit_price',
      'discount',
      'tax_rate',
      'amount',
      'tax',
    ])
    .where('organization_id', '=', organizationId)
    .where('return_id', 'in', ids)
    .orderBy('return_id')
    .orderBy('line_number')
    .execute();
  for (const line of lines) {
    const entry = parts.get(line.return_id)!;
    if (entry.lines.length < MAX_LINES) entry.lines.push(line);
    else entry.linesTruncated = true;
  }
  const notes = await db
    .selectFrom('credit_notes')
    .select(['id', 'return_id'])
    .where('organization_id', '=', organizationId)
    .where('return_id', 'in', ids)
    .execute();
  for (const note of notes) parts.get(note.return_id!)!.creditNoteId = note.id;
  for (const [id, codes] of await codesOf(db, organizationId, RETURN, ids)) parts.get(id)!.externalCodes = codes;
  return parts;
}
