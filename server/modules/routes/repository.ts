// The routes table. Every statement is scoped by organization_id first; the shared statements live in
// platform/resources/table.ts, the outlets of a route in outlets.ts.
import type { BaseRow } from '../../platform/resources/table.js';
import { masterDataFilters, masterDataTable } from './master-data.js';

export interface RouteRow extends BaseRow {
  route_code: string;
  name: string;
  salesperson_id: string | null;
  van_location_id: string | null;
  active: boolean;
}

export type RouteColumns = Omit<RouteRow, keyof BaseRow>;

/** The body fields and their columns (every field of a route is stored as it is). */
export const ROUTE_FIELDS = { routeCode: 'route_code', name: 'name', salespersonId: 'salesperson_id', vanLocationId: 'van_location_id', active: 'active' } as const;

export const routeTable = masterDataTable<RouteColumns>('route', 'routes', ['route_code', 'name', 'salesperson_id', 'van_location_id', 'active'],
  { constraint: 'routes_organization_id_route_code_key', column: 'route_code', field: '/routeCode' });

export const routeFilters = masterDataFilters('route', { salespersonId: 'salesperson_id' });
