// The products table. Every statement is scoped by organization_id first (see docs/decisions/0005-tenancy-organization-id-first.md);
// the shared statements live in platform/resources/table.ts.
import type { Tx } from '../../platform/database/transaction.js';
import type { Filter } from '../../platform/lists/page.js';
import { equals, hasExternalCode, type TableDefinition } from '../../platform/resources/table.js';

export const PRODUCT_RESOURCE = 'product';

/** One empty as stored in products.empties: by id, so that a changed product code is followed. */
export interface StoredEmpty {
  productId: string;
  quantity: number;
  per: 'case' | 'bottle';
}

export interface ProductRow {
  organization_id: string;
  id: string;
  product_code: string;
  name: string;
  brand: string | null;
  category: string | null;
  status: string;
  pack_size: number;
  selling_units: string[];
  tracks_stock: boolean;
  tax_rate: string;
  is_empty: boolean;
  deposit_amount: string | null;
  deposit_currency: string | null;
  empties: StoredEmpty[];
  /** `empties` with each empty's current product code, read with the row (not a column). */
  empties_view: (StoredEmpty & { productCode: string })[];
  created_at: Date;
  updated_at: Date;
}

/** The writable columns, by their column names. */
export type ProductColumns = Omit<ProductRow, 'organization_id' | 'id' | 'created_at' | 'updated_at' | 'empties_view'>;

export const productTable: TableDefinition<ProductColumns> = {
  resource: PRODUCT_RESOURCE,
  table: 'products',
  listName: 'products',
  // The empties' codes come with the row in one statement, so a page of products costs no extra round trip.
  selectColumns: `t.organization_id, t.id, t.product_code, t.name, t.brand, t.category, t.status, t.pack_size, t.selling_units,
    t.tracks_stock, t.tax_rate::text AS tax_rate, t.is_empty, t.deposit_amount::text AS deposit_amount, t.deposit_currency, t.empties,
    (SELECT coalesce(jsonb_agg(jsonb_build_object('productId', e.item->>'productId', 'productCode', p.product_code,
              'quantity', (e.item->>'quantity')::int, 'per', e.item->>'per') ORDER BY e.position), '[]'::jsonb)
       FROM jsonb_array_elements(t.empties) WITH ORDINALITY AS e(item, position)
       JOIN products p ON p.organization_id = t.organization_id AND p.id = e.item->>'productId') AS empties_view,
    t.created_at, t.updated_at`,
  writable: [
    'product_code', 'name', 'brand', 'category', 'status', 'pack_size', 'selling_units', 'tracks_stock', 'tax_rate', 'is_empty',
    'deposit_amount', 'deposit_currency', 'empties',
  ],
  jsonColumns: ['empties'],
  uniqueFields: { products_organization_id_product_code_key: 'product_code' },
  fieldOf: { product_code: '/productCode' },
};

export function productFilters(query: Record<string, unknown>): Record<string, Filter | undefined> {
  return {
    status: equals('status', query.status as string | undefined),
    brand: equals('brand', query.brand as string | undefined),
    category: equals('category', query.category as string | undefined),
    // The validator has coerced the query value to a boolean.
    isEmpty: query.isEmpty === undefined ? undefined : { sql: 't.is_empty = $?', value: query.isEmpty === true || query.isEmpty === 'true' },
    externalCode: hasExternalCode(PRODUCT_RESOURCE, query.externalCode as string | undefined),
  };
}

export interface ProductByCode {
  id: string;
  product_code: string;
  is_empty: boolean;
  selling_units: string[];
}

/** The organisation's products with these codes (missing codes are simply absent). */
export async function findProductsByCode(tx: Tx, organizationId: string, codes: readonly string[]): Promise<Map<string, ProductByCode>> {
  const { rows } = await tx.query<ProductByCode>(
    // FOR SHARE: a concurrent write that turns one of these into a non-empty waits for this one (and sees it).
    'SELECT id, product_code, is_empty, selling_units FROM products WHERE organization_id = $1 AND product_code = ANY($2::text[]) FOR SHARE',
    [organizationId, [...new Set(codes)]],
  );
  return new Map(rows.map((row) => [row.product_code, row]));
}

/** Codes of the products that carry this product among their empties. */
export async function productsCarrying(tx: Tx, organizationId: string, emptyId: string): Promise<string[]> {
  const { rows } = await tx.query<{ product_code: string }>(
    `SELECT product_code FROM products WHERE organization_id = $1 AND empties @> jsonb_build_array(jsonb_build_object('productId', $2::text))
      ORDER BY product_code LIMIT 5`,
    [organizationId, emptyId],
  );
  return rows.map((row) => row.product_code);
}
