// The salespeople table. Every statement is scoped by organization_id first; the shared statements live in
// platform/resources/table.ts.
import type { BaseRow } from '../../platform/resources/table.js';
import { masterDataFilters, masterDataTable } from '../routes/master-data.js';

export interface SalespersonRow extends BaseRow {
  salesman_code: string;
  name: string;
  phone: string | null;
  user_id: string | null;
  route_id: string | null;
  active: boolean;
}

export type SalespersonColumns = Omit<SalespersonRow, keyof BaseRow>;

/** The body fields and their columns (every field of a salesperson is stored as it is). */
export const SALESPERSON_FIELDS = { salesmanCode: 'salesman_code', name: 'name', phone: 'phone', userId: 'user_id', routeId: 'route_id', active: 'active' } as const;

export const salespersonTable = masterDataTable<SalespersonColumns>('salesperson', 'salespeople', ['salesman_code', 'name', 'phone', 'user_id', 'route_id', 'active'],
  { constraint: 'salespeople_organization_id_salesman_code_key', column: 'salesman_code', field: '/salesmanCode' });

export const salespersonFilters = masterDataFilters('salesperson', { routeId: 'route_id' });
