// The locations table. Every statement is scoped by organization_id first; the shared statements live in
// platform/resources/table.ts. `kind` and `stock_condition` are stored for filtering but always derived
// from the code (see codes.ts).
import type { Selectable } from 'kysely';
import type { Location as LocationTable } from '../../../generated/kysely/types.js';
import type { Tx } from '../../platform/database/transaction.js';
import { referenceProblem } from '../../platform/resources/references.js';
import { masterDataFilters, masterDataTable } from '../../platform/resources/master-data.js';

export type LocationRow = Selectable<LocationTable>;

/** The body fields stored as they are, and their columns. */
export const LOCATION_FIELDS = { code: 'code', name: 'name', active: 'active', routeId: 'route_id' } as const;

export const locationTable = masterDataTable('location', 'locations', {
  constraint: 'locations_organization_id_code_key',
  column: 'code',
  field: '/code',
});

export const locationFilters = masterDataFilters('locations', 'location', { kind: 'kind', routeId: 'route_id' });

/**
 * The location a reference names (a route's van), locked against a concurrent change; an id that is not a location
 * of the organisation is 422 naming `field`. Null when the body clears the reference or leaves it out.
 */
export async function referencedLocation(
  tx: Tx,
  organizationId: string,
  id: string | null | undefined,
  field: string,
): Promise<{ code: string; kind: string } | null> {
  if (id === null || id === undefined) return null;
  const row = await tx
    .selectFrom('locations')
    .select(['code', 'kind'])
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .forShare()
    .executeTakeFirst();
  if (!row) throw referenceProblem(field, `There is no location ${id} in this organisation.`);
  return row;
}
