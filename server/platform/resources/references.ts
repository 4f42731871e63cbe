// References between master data records (a location's route, a route's salesperson and van, a salesperson's
// route): the referenced record must exist in the caller's organisation, else 422 business_rule naming the
// field. One helper for every such check, so that the rule and its problem read the same everywhere. The
// composite foreign keys refuse a dangling reference too; this check comes first so the caller learns which field.
import type { Tx } from '../database/transaction.js';
import { ApiError } from '../errors/api-error.js';

export interface ReferencedTable {
  /** The table (`routes`). */
  table: 'routes' | 'salespeople' | 'locations' | 'members';
  /** The resource's name in problems (`route`). */
  resource: string;
}

export const ROUTES: ReferencedTable = { table: 'routes', resource: 'route' };
export const SALESPEOPLE: ReferencedTable = { table: 'salespeople', resource: 'salesperson' };
export const LOCATIONS: ReferencedTable = { table: 'locations', resource: 'location' };
export const MEMBERS: ReferencedTable = { table: 'members', resource: 'member' };

/** A 422 business_rule naming `field` (a JSON pointer into the body). */
export function referenceProblem(field: string, detail: string): ApiError {
  return new ApiError('business_rule', detail, [{ field, code: 'business_rule', message: detail }]);
}

/**
 * Refuses an id that is not a record of the organisation (nothing to check when the body clears the reference
 * or leaves it out). The row is locked against a concurrent change.
 */
export async function requireReference(
  tx: Tx,
  organizationId: string,
  target: ReferencedTable,
  id: string | null | undefined,
  field: string,
): Promise<void> {
  if (id === null || id === undefined) return;
  const row = await tx
    .selectFrom(target.table)
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .forShare()
    .executeTakeFirst();
  if (!row) throw referenceProblem(field, `There is no ${target.resource} ${id} in this organisation.`);
}
