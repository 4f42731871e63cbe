// References between master data records (a location's route, a route's salesperson and van, a salesperson's
// route): the referenced record must exist in the caller's organisation, else 422 business_rule naming the
// field. One helper for every such check, so that the rule and its problem read the same everywhere.
import type { Tx } from '../database/transaction.js';
import { ApiError } from '../errors/api-error.js';

export interface ReferencedTable {
  /** The table (`routes`). */
  table: string;
  /** The resource's name in problems (`route`). */
  resource: string;
}

export const ROUTES: ReferencedTable = { table: 'routes', resource: 'route' };
export const SALESPEOPLE: ReferencedTable = { table: 'salespeople', resource: 'salesperson' };
export const LOCATIONS: ReferencedTable = { table: 'locations', resource: 'location' };

/** A 422 business_rule naming `field` (a JSON pointer into the body). */
export function referenceProblem(field: string, detail: string): ApiError {
  return new ApiError('business_rule', detail, [{ field, code: 'business_rule', message: detail }]);
}

/**
 * Reads the referenced record's `columns` (null when the body clears the reference or leaves it out), and
 * refuses an id that is not a record of the organisation. The row is locked against a concurrent change.
 */
export async function referencedRow<Row extends object = { id: string }>(
  tx: Tx, organizationId: string, target: ReferencedTable, id: string | null | undefined, field: string, columns = 'id',
): Promise<Row | null> {
  if (id === null || id === undefined) return null;
  const { rows } = await tx.query<Row>(`SELECT ${columns} FROM ${target.table} WHERE organization_id = $1 AND id = $2 FOR SHARE`, [organizationId, id]);
  if (!rows[0]) throw referenceProblem(field, `There is no ${target.resource} ${id} in this organisation.`);
  return rows[0];
}
