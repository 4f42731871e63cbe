// The locations table. Every statement is scoped by organization_id first; the shared statements live in
// platform/resources/table.ts. `kind` and `stock_condition` are stored for filtering but always derived
// from the code (see codes.ts).
import type { BaseRow } from '../../platform/resources/table.js';
import { masterDataFilters, masterDataTable } from '../routes/master-data.js';

export interface LocationRow extends BaseRow {
  code: string;
  kind: string;
  stock_condition: string | null;
  name: string;
  active: boolean;
  route_id: string | null;
}

export type LocationColumns = Omit<LocationRow, keyof BaseRow>;

/** The body fields stored as they are, and their columns. */
export const LOCATION_FIELDS = { code: 'code', name: 'name', active: 'active', routeId: 'route_id' } as const;

export const locationTable = masterDataTable<LocationColumns>('location', 'locations', ['code', 'kind', 'stock_condition', 'name', 'active', 'route_id'],
  { constraint: 'locations_organization_id_code_key', column: 'code', field: '/code' });

export const locationFilters = masterDataFilters('location', { kind: 'kind', routeId: 'route_id' });
