// The stock module's reads: a document with its movements, and the lists of movements, levels and empties
// movements. Every statement is scoped by organization_id first.
import { expressionBuilder, sql } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';
import type { Actor } from '../../platform/access/actor.js';
import type { Db } from '../../platform/database/transaction.js';
import { requireFilterRecords } from '../../platform/lists/filter-records.js';
import { equals, when } from '../../platform/resources/filters.js';
import { readPage, type ListQuery, type ListRequest, type Page } from '../../platform/lists/page.js';
import { STOCK_DOCUMENT } from './documents.js';
import type { DocumentRow, EmptiesRow, LevelRow, MovementRow } from './representation.js';

/** The records the stock lists' filters may name (each must be the organisation's: platform/lists/filter-records.ts). */
const FILTERS = [
  { parameter: 'productId', table: 'products', what: 'product' },
  { parameter: 'locationId', table: 'locations', what: 'location' },
  { parameter: 'customerId', table: 'customers', what: 'customer' },
  { parameter: 'tripId', table: 'trips', what: 'trip' },
  { parameter: 'documentId', table: 'stock_documents', what: 'stock document' },
] as const;

export type FilterParameter = (typeof FILTERS)[number]['parameter'];

/** 404 not_found naming the query parameter when an id filter names no record of the organisation. */
export async function requireStockFilters(
  db: Db,
  organizationId: string,
  query: Partial<Record<FilterParameter, string>>,
): Promise<void> {
  await requireFilterRecords(
    db,
    organizationId,
    FILTERS.map((filter) => ({ ...filter, id: query[filter.parameter] })),
  );
}

const movementColumns = [
  't.id',
  't.document_type',
  't.document_id',
  't.line_number',
  't.product_id',
  't.from_location_id',
  't.to_location_id',
  't.quantity',
  't.unit_cost',
  'p.is_empty',
  't.created_at',
  't.updated_at',
] as const;

/** A stock document and its movements in line order; null when the organisation has no such document. */
export async function findStockDocument(
  db: Db,
  actor: Actor,
  id: string,
): Promise<{ document: DocumentRow; movements: MovementRow[] } | null> {
  const organizationId = actor.organization.id;
  const document = await db
    .selectFrom('stock_documents')
    .select([
      'id',
      'number',
      'type',
      'reason_code',
      'note',
      'trip_id',
      'posting_status',
      'accounting_ref',
      'accounting_type',
      'posting_reason',
      'created_at',
      'updated_at',
    ])
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!document) return null;
  const movements = await db
    .selectFrom('stock_movements as t')
    .innerJoin('products as p', (join) =>
      join.onRef('p.organization_id', '=', 't.organization_id').onRef('p.id', '=', 't.product_id'),
    )
    .select(movementColumns)
    .where('t.organization_id', '=', organizationId)
    .where('t.document_type', '=', STOCK_DOCUMENT)
    .where('t.document_id', '=', id)
    .orderBy('t.line_number')
    .orderBy('t.id')
    .execute();
  return { document, movements };
}

export interface MovementFilters {
  productId?: string;
  locationId?: string;
  documentId?: string;
}

export async function listStockMovements(
  db: Db,
  actor: Actor,
  request: ListRequest,
  filters: MovementFilters,
): Promise<Page<MovementRow>> {
  const organizationId = actor.organization.id;
  const query = db
    .selectFrom('stock_movements as t')
    .innerJoin('products as p', (join) =>
      join.onRef('p.organization_id', '=', 't.organization_id').onRef('p.id', '=', 't.product_id'),
    )
    .select(movementColumns)
    .where('t.organization_id', '=', organizationId);
  const eb = expressionBuilder<DB & { t: DB['stock_movements'] }, 't'>();
  return readPage('stock-movements', query as unknown as ListQuery<MovementRow>, organizationId, request, {
    productId: equals('stock_movements', 'product_id', filters.productId),
    locationId: when(
      filters.locationId,
      eb.or([
        eb('t.from_location_id', '=', filters.locationId ?? ''),
        eb('t.to_location_id', '=', filters.locationId ?? ''),
      ]),
    ),
    documentId: when(
      filters.documentId,
      eb.and([eb('t.document_type', '=', STOCK_DOCUMENT), eb('t.document_id', '=', filters.documentId ?? '')]),
    ),
  });
}

export interface LevelFilters {
  productId?: string;
  locationId?: string;
}

/**
 * Levels have no id of their own (their key is location and product); the page machinery keys on `t.id`, so the list
 * reads them through a subquery that names the key `location_id|product_id` (ids are fixed-length ULIDs, so the
 * string orders as the pair does).
 */
export async function listStockLevels(
  db: Db,
  actor: Actor,
  request: ListRequest,
  filters: LevelFilters,
): Promise<Page<LevelRow & { id: string }>> {
  const organizationId = actor.organization.id;
  const levels = db
    .selectFrom('stock_levels as l')
    .innerJoin('products as p', (join) =>
      join.onRef('p.organization_id', '=', 'l.organization_id').onRef('p.id', '=', 'l.product_id'),
    )
    // The key as one text column: concatenation has no builder form other than a raw expression.
    .select([
      'l.location_id',
      'l.product_id',
      'l.quantity',
      'p.is_empty',
      'l.updated_at',
      sql<string>`l.location_id || '|' || l.product_id`.as('id'),
    ])
    .where('l.organization_id', '=', organizationId);
  const query = db.selectFrom(levels.as('t')).selectAll('t');
  const eb = expressionBuilder<{ t: { location_id: string; product_id: string } }, 't'>();
  return readPage('stock-levels', query as unknown as ListQuery<LevelRow & { id: string }>, organizationId, request, {
    productId: when(filters.productId, eb('t.product_id', '=', filters.productId ?? '')),
    locationId: when(filters.locationId, eb('t.location_id', '=', filters.locationId ?? '')),
  });
}

export interface EmptiesFilters {
  type?: string;
  customerId?: string;
  productId?: string;
  locationId?: string;
  tripId?: string;
}

export async function listEmptiesMovements(
  db: Db,
  actor: Actor,
  request: ListRequest,
  filters: EmptiesFilters,
): Promise<Page<EmptiesRow>> {
  const organizationId = actor.organization.id;
  const query = db.selectFrom('empties_movements as t').selectAll('t').where('t.organization_id', '=', organizationId);
  return readPage('empties-movements', query as unknown as ListQuery<EmptiesRow>, organizationId, request, {
    type: equals('empties_movements', 'type', filters.type),
    customerId: equals('empties_movements', 'customer_id', filters.customerId),
    productId: equals('empties_movements', 'product_id', filters.productId),
    locationId: equals('empties_movements', 'location_id', filters.locationId),
    tripId: equals('empties_movements', 'trip_id', filters.tripId),
  });
}
