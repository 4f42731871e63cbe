// The routes table. Every statement is scoped by organization_id first; the shared statements live in
// platform/resources/table.ts, the outlets of a route in outlets.ts.
import type { Selectable } from 'kysely';
import type { Route as RouteTable } from '../../../generated/kysely/types.js';
import { masterDataFilters, masterDataTable } from '../../platform/resources/master-data.js';

export type RouteRow = Selectable<RouteTable>;

/** The body fields and their columns (every field of a route is stored as it is). */
export const ROUTE_FIELDS = {
  routeCode: 'route_code',
  name: 'name',
  salespersonId: 'salesperson_id',
  vanLocationId: 'van_location_id',
  active: 'active',
} as const;

export const routeTable = masterDataTable('route', 'routes', {
  constraint: 'routes_organization_id_route_code_key',
  column: 'route_code',
  field: '/routeCode',
});

export const routeFilters = masterDataFilters('routes', 'route', { salespersonId: 'salesperson_id' });
