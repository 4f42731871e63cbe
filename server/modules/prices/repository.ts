// The prices table. Every statement is scoped by organization_id first (see docs/decisions/0005-tenancy-organization-id-first.md). A
// batch of prices is written set-based: one statement upserts every item and writes its event row.
import { sql, type Selectable } from 'kysely';
import type { Price as PriceTable } from '../../../generated/kysely/types.js';
import type { Db, Tx } from '../../platform/database/transaction.js';
import { newId } from '../../platform/ids.js';
import type { Filter } from '../../platform/lists/page.js';
import { equals } from '../../platform/resources/filters.js';
import type { TableDefinition } from '../../platform/resources/table.js';

export const PRICE_RESOURCE = 'price';

export type PriceRow = Omit<Selectable<PriceTable>, 'valid_from'> & {
  /** The product's current code, read with the row (not a column). */
  product_code: string;
  /** YYYY-MM-DD */
  valid_from: string;
};

/** For the shared reads (by id, list pages); prices are written only by {@link upsertPrices}. */
export const priceTable: TableDefinition<'prices', PriceRow> = {
  externalCodes: false,
  resource: PRICE_RESOURCE,
  table: 'prices',
  listName: 'prices',
  select: (query) =>
    query.select((eb) => [
      't.organization_id',
      't.id',
      't.product_id',
      eb
        .selectFrom('products as p')
        .select('p.product_code')
        .whereRef('p.organization_id', '=', 't.organization_id')
        .whereRef('p.id', '=', 't.product_id')
        .$asScalar()
        .$notNull()
        .as('product_code'),
      't.price_group',
      't.unit',
      't.amount',
      't.currency',
      // A DATE as its calendar day: pg would turn it into a Date at local midnight.
      sql<string>`to_char(t.valid_from, 'YYYY-MM-DD')`.as('valid_from'),
      't.created_at',
      't.updated_at',
    ]),
};

export function priceFilters(query: Record<string, unknown>): Record<string, Filter | undefined> {
  return {
    productId: equals('prices', 'product_id', query.productId as string | undefined),
    priceGroup: equals('prices', 'price_group', query.priceGroup as string | undefined),
    unit: equals('prices', 'unit', query.unit as string | undefined),
  };
}

export interface PriceToWrite {
  productId: string;
  /** The product's code, as read by the batch's check (answered with the price, not read back). */
  productCode: string;
  priceGroup: string;
  unit: string;
  /** Decimal string. */
  amount: string;
  /** YYYY-MM-DD, as checked by the validator (a DATE's calendar day, answered as given). */
  validFrom: string;
}

/**
 * Upserts the prices by (product, price group, unit) and writes one price.created or price.updated event row
 * for each, in one statement; answers the rows in the order given. The items must be distinct by that key.
 */
export async function upsertPrices(
  tx: Tx,
  organizationId: string,
  currency: string,
  items: readonly PriceToWrite[],
): Promise<PriceRow[]> {
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
  // One round trip for the whole batch (the bench's PUT /prices of 500 rows): the items arrive as one JSON
  // parameter read by jsonb_to_recordset, and data-modifying CTEs upsert the prices and write their events.
  // Kysely has no builder for a typed jsonb_to_recordset source nor for xmax, hence the sql template; every
  // value is a bound parameter. Rows are written in key order, so two overlapping batches lock them in the same
  // order and cannot deadlock. Only what the statement decides is read back (decision 0053): the id (an update
  // keeps the existing one), the stored amount and the times; the product, its code, the group, the unit, the
  // currency and the day are the batch's own, so pg parses 5 columns a row instead of 11 and Postgres does not
  // look each product up again.
  const { rows } = await sql<{ position: number; id: string; amount: string; created_at: Date; updated_at: Date }>`
    WITH input AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(input)}::jsonb)
        AS i(position int, id text, event_id text, product_id text, price_group text, unit text, amount numeric, valid_from date)
    ), written AS (
      INSERT INTO prices AS t (organization_id, id, product_id, price_group, unit, amount, currency, valid_from, created_at, updated_at)
      SELECT ${organizationId}, i.id, i.product_id, i.price_group, i.unit, i.amount, ${currency}, i.valid_from, now(), now()
        FROM input i ORDER BY i.product_id, i.price_group, i.unit
      ON CONFLICT (organization_id, product_id, price_group, unit) DO UPDATE
        SET amount = EXCLUDED.amount, currency = EXCLUDED.currency, valid_from = EXCLUDED.valid_from, updated_at = now()
      RETURNING t.id, t.product_id, t.price_group, t.unit, t.amount, t.created_at, t.updated_at, (t.xmax = 0) AS inserted
    ), recorded AS (
      INSERT INTO events (organization_id, id, type, resource, record_id)
      SELECT ${organizationId}, i.event_id, CASE WHEN w.inserted THEN 'price.created' ELSE 'price.updated' END, ${PRICE_RESOURCE}, w.id
        FROM written w JOIN input i ON i.product_id = w.product_id AND i.price_group = w.price_group AND i.unit = w.unit
       ORDER BY i.position
    )
    SELECT i.position, t.id, t.amount, t.created_at, t.updated_at
      FROM written t JOIN input i ON i.product_id = t.product_id AND i.price_group = t.price_group AND i.unit = t.unit
     ORDER BY i.position`.execute(tx);
  return rows.map((row) => {
    const item = items[row.position]!;
    return {
      organization_id: organizationId,
      id: row.id,
      product_id: item.productId,
      product_code: item.productCode,
      price_group: item.priceGroup,
      unit: item.unit,
      amount: row.amount,
      currency,
      valid_from: item.validFrom,
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  });
}

/** The price groups that have at least one price: the groups a customer may be put in. */
export async function priceGroupsWithPrices(db: Db, organizationId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('prices')
    .select('price_group')
    .distinct()
    .where('organization_id', '=', organizationId)
    .orderBy('price_group')
    .execute();
  return rows.map((row) => row.price_group);
}
