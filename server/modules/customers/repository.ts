// The customers table: its row as the representation reads it, its list filters, and the statements other
// modules may call. Every statement is scoped by organization_id first (docs/decisions/0005-tenancy-organization-id-first.md);
// the shared statements live in platform/resources/table.ts.
import type { Selectable } from 'kysely';
import type { Customer as CustomerTable } from '../../../generated/kysely/types.js';
import type { Filter } from '../../platform/lists/page.js';
import { equals, hasExternalCode } from '../../platform/resources/filters.js';
import type { TableDefinition } from '../../platform/resources/table.js';

export const CUSTOMER_RESOURCE = 'customer';

export type CustomerRow = Selectable<CustomerTable>;

export const customerTable: TableDefinition<'customers', CustomerRow> = {
  resource: CUSTOMER_RESOURCE,
  table: 'customers',
  listName: 'customers',
  select: (query) => query.selectAll('t'),
  uniqueFields: { customers_organization_id_outlet_code_key: 'outlet_code' },
  fieldOf: { outlet_code: '/outletCode' },
};

export function customerFilters(query: Record<string, string | undefined>): Record<string, Filter | undefined> {
  return {
    status: equals('customers', 'status', query.status),
    channel: equals('customers', 'channel', query.channel),
    routeId: equals('customers', 'route_id', query.routeId),
    region: equals('customers', 'region', query.region),
    externalCode: hasExternalCode('customers', CUSTOMER_RESOURCE, query.externalCode),
  };
}
