// The prices table. Every statement is scoped by organization_id first (see docs/decisions/0005-tenancy-organization-id-first.md). A
// batch of prices is written set-based: one statement upserts every item and writes its event row.
import type pg from 'pg';
import type { Tx } from '../../platform/database/transaction.js';
import { newId } from '../../platform/ids.js';
import type { Filter } from '../../platform/lists/page.js';
import { equals, type TableDefinition } from '../../platform/resources/table.js';

export const PRICE_RESOURCE = 'price';

export interface PriceRow {
  organization_id: string;
  id: string;
  product_id: string;
  /** The product's current code, read with the row (not a column). */
  product_code: string;
  price_group: string;
  unit: string;
  amount: string;
  currency: string;
  /** YYYY-MM-DD */
  valid_from: string;
  created_at: Date;
  updated_at: Date;
}

const SELECT_COLUMNS = `t.organization_id, t.id, t.product_id,
    (SELECT p.product_code FROM products p WHERE p.organization_id = t.organization_id AND p.id = t.product_id) AS product_code,
    t.price_group, t.unit, t.amount::text AS amount, t.currency, to_char(t.valid_from, 'YYYY-MM-DD') AS valid_from, t.created_at, t.updated_at`;

/** For the shared reads (by id, list pages); prices are written only by {@link upsertPrices}. */
export const priceTable: TableDefinition<Record<string, never>> = {
  externalCodes: false,
  resource: PRICE_RESOURCE,
  table: 'prices',
  listName: 'prices',
  selectColumns: SELECT_COLUMNS,
  writable: [],
};

export function priceFilters(query: Record<string, unknown>): Record<string, Filter | undefined> {
  return {
    productId: equals('product_id', query.productId as string | undefined),
    priceGroup: equals('price_group', query.priceGroup as string | undefined),
    unit: equals('unit', query.unit as string | undefined),
  };
}

export interface PriceToWrite {
  productId: string;
  priceGroup: string;
  unit: string;
  /** Decimal string. */
  amount: string;
  validFrom: string;
}

/**
 * Upserts the prices by (product, price group, unit) and writes one price.created or price.updated event row
 * for each, in one statement; answers the rows in the order given. The items must be distinct by that key.
 */
export async function upsertPrices(tx: Tx | pg.Pool, organizationId: string, currency: string, items: readonly PriceToWrite[]): Promise<PriceRow[]> {
  const input = items.map((item, position) => ({
    position,
    id: newId('prc'),
    event_id: newId('evt'),
    product_id: item.productId,
    price_group: item.priceGroup,
    unit: item.unit,
    amount: item.amount,
    valid_from: item.validFrom,
  }));
  // Rows are written in key order, so two overlapping batches lock them in the same order and cannot deadlock.
  const { rows } = await tx.query<PriceRow>(
    `WITH input AS (
       SELECT * FROM jsonb_to_recordset($2::jsonb)
         AS i(position int, id text, event_id text, product_id text, price_group text, unit text, amount numeric, valid_from date)
     ), written AS (
       INSERT INTO prices AS t (organization_id, id, product_id, price_group, unit, amount, currency, valid_from, created_at, updated_at)
       SELECT $1, i.id, i.product_id, i.price_group, i.unit, i.amount, $3, i.valid_from, now(), now()
         FROM input i ORDER BY i.product_id, i.price_group, i.unit
       ON CONFLICT (organization_id, product_id, price_group, unit) DO UPDATE
         SET amount = EXCLUDED.amount, currency = EXCLUDED.currency, valid_from = EXCLUDED.valid_from, updated_at = now()
       RETURNING t.*, (t.xmax = 0) AS inserted
     ), recorded AS (
       INSERT INTO events (organization_id, id, type, resource, record_id)
       SELECT $1, i.event_id, CASE WHEN w.inserted THEN 'price.created' ELSE 'price.updated' END, '${PRICE_RESOURCE}', w.id
         FROM written w JOIN input i ON i.product_id = w.product_id AND i.price_group = w.price_group AND i.unit = w.unit
        ORDER BY i.position
     )
     SELECT ${SELECT_COLUMNS}
       FROM written t JOIN input i ON i.product_id = t.product_id AND i.price_group = t.price_group AND i.unit = t.unit
      ORDER BY i.position`,
    [organizationId, JSON.stringify(input), currency],
  );
  return rows;
}

/** The price groups that have at least one price: the groups a customer may be put in. */
export async function priceGroupsWithPrices(tx: Tx, organizationId: string): Promise<string[]> {
  const { rows } = await tx.query<{ price_group: string }>('SELECT DISTINCT price_group FROM prices WHERE organization_id = $1 ORDER BY price_group', [organizationId]);
  return rows.map((row) => row.price_group);
}
