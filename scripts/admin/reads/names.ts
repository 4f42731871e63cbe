// Names for the ids a sheet carries (products, salespeople, routes, locations), so that an operator reads
// "Nile Special 500ml" where the API gives prd_01J... One query per kind for the whole sheet.
import type { Db } from '../../../server/platform/database/transaction.js';

export interface Named {
  code: string;
  name: string;
}

export async function productNames(
  db: Db,
  organizationId: string,
  ids: readonly string[],
): Promise<Map<string, Named>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('products')
    .select(['id', 'product_code', 'name'])
    .where('organization_id', '=', organizationId)
    .where('id', 'in', [...new Set(ids)])
    .execute();
  return new Map(rows.map((row) => [row.id, { code: row.product_code, name: row.name }]));
}

export async function salespersonNames(
  db: Db,
  organizationId: string,
  ids: readonly (string | null)[],
): Promise<Map<string, Named>> {
  const wanted = [...new Set(ids.filter((id): id is string => id !== null))];
  if (wanted.length === 0) return new Map();
  const rows = await db
    .selectFrom('salespeople')
    .select(['id', 'salesman_code', 'name'])
    .where('organization_id', '=', organizationId)
    .where('id', 'in', wanted)
    .execute();
  return new Map(rows.map((row) => [row.id, { code: row.salesman_code, name: row.name }]));
}

/** `name (code)`, or the id itself when the record is not found. */
export function label(named: Named | undefined, id: string | null): string {
  if (id === null) return '';
  return named ? `${named.name} (${named.code})` : id;
}
