// The products table: its row as the representation reads it, its list filters, and the statements the rules
// need. Every statement is scoped by organization_id first (docs/decisions/0005-tenancy-organization-id-first.md);
// the shared statements live in platform/resources/table.ts.
import { sql, type Selectable } from 'kysely';
import type { Product as ProductTable } from '../../../generated/kysely/types.js';
import type { Tx } from '../../platform/database/transaction.js';
import type { Filter } from '../../platform/lists/page.js';
import { equals, hasExternalCode } from '../../platform/resources/filters.js';
import type { TableDefinition } from '../../platform/resources/table.js';

export const PRODUCT_RESOURCE = 'product';

/** One empty as stored in products.empties: by id, so that a changed product code is followed. */
export type StoredEmpty = Selectable<ProductTable>['empties'][number];

export type ProductRow = Selectable<ProductTable> & {
  /** `empties` with each empty's current product code, read with the row (not a column). */
  empties_view: (StoredEmpty & { productCode: string })[];
};

export const productTable: TableDefinition<'products', ProductRow> = {
  resource: PRODUCT_RESOURCE,
  table: 'products',
  listName: 'products',
  // The empties' codes come with the row in one statement, so a page of products costs no extra round trip. A
  // set-returning function WITH ORDINALITY over a JSON column has no builder form, hence the sql template.
  select: (query) =>
    query.selectAll('t').select(
      sql<ProductRow['empties_view']>`(
    SELECT coalesce(jsonb_agg(jsonb_build_object('productId', e.item->>'productId', 'productCode', p.product_code,
             'quantity', (e.item->>'quantity')::int, 'per', e.item->>'per') ORDER BY e.position), '[]'::jsonb)
      FROM jsonb_array_elements(t.empties) WITH ORDINALITY AS e(item, position)
      JOIN products p ON p.organization_id = t.organization_id AND p.id = e.item->>'productId')`.as('empties_view'),
    ),
  jsonColumns: ['empties'],
  uniqueFields: { products_organization_id_product_code_key: 'product_code' },
  fieldOf: { product_code: '/productCode' },
};

export function productFilters(query: Record<string, unknown>): Record<string, Filter | undefined> {
  return {
    status: equals('products', 'status', query.status as string | undefined),
    brand: equals('products', 'brand', query.brand as string | undefined),
    category: equals('products', 'category', query.category as string | undefined),
    // The validator has coerced the query value to a boolean.
    isEmpty: equals(
      'products',
      'is_empty',
      query.isEmpty === undefined ? undefined : query.isEmpty === true || query.isEmpty === 'true',
    ),
    externalCode: hasExternalCode('products', PRODUCT_RESOURCE, query.externalCode as string | undefined),
  };
}

/** The organisation's products with these codes (missing codes are simply absent). */
export async function findProductsByCode(tx: Tx, organizationId: string, codes: readonly string[]) {
  const rows = await tx
    .selectFrom('products')
    .select(['id', 'product_code', 'is_empty', 'selling_units'])
    .where('organization_id', '=', organizationId)
    .where('product_code', 'in', [...new Set(codes)])
    // FOR SHARE: a concurrent write that turns one of these into a non-empty waits for this one (and sees it).
    .forShare()
    .execute();
  return new Map(rows.map((row) => [row.product_code, row]));
}

/** Codes of the products that carry this product among their empties. */
export async function productsCarrying(tx: Tx, organizationId: string, emptyId: string): Promise<string[]> {
  const rows = await tx
    .selectFrom('products')
    .select('product_code')
    .where('organization_id', '=', organizationId)
    // JSONB containment (@>) of a one-element array: the builder has no operator for it, the value is bound.
    .where(sql<boolean>`empties @> jsonb_build_array(jsonb_build_object('productId', ${emptyId}::text))`)
    .orderBy('product_code')
    .limit(5)
    .execute();
  return rows.map((row) => row.product_code);
}
