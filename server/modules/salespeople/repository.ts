// The salespeople table. Every statement is scoped by organization_id first; the shared statements live in
// platform/resources/table.ts.
import type { Selectable } from 'kysely';
import type { Salesperson as SalespersonTable } from '../../../generated/kysely/types.js';
import { masterDataFilters, masterDataTable } from '../../platform/resources/master-data.js';

export type SalespersonRow = Selectable<SalespersonTable>;

/** The body fields and their columns (every field of a salesperson is stored as it is). */
export const SALESPERSON_FIELDS = {
  salesmanCode: 'salesman_code',
  name: 'name',
  phone: 'phone',
  userId: 'user_id',
  memberId: 'member_id',
  routeId: 'route_id',
  active: 'active',
} as const;

export const salespersonTable = masterDataTable('salesperson', 'salespeople', {
  constraint: 'salespeople_organization_id_salesman_code_key',
  column: 'salesman_code',
  field: '/salesmanCode',
});

export const salespersonFilters = masterDataFilters('salespeople', 'salesperson', { routeId: 'route_id' });
