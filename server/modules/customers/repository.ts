// The customers table. Every statement is scoped by organization_id first (see docs/decisions/0005-tenancy-organization-id-first.md);
// the shared statements live in platform/resources/table.ts.
import type { Filter } from '../../platform/lists/page.js';
import { equals, hasExternalCode, type TableDefinition } from '../../platform/resources/table.js';

export const CUSTOMER_RESOURCE = 'customer';

export interface CustomerRow {
  organization_id: string;
  id: string;
  outlet_code: string;
  name: string;
  status: string;
  channel: string;
  price_group: string | null;
  route_id: string | null;
  credit_limit_amount: string | null;
  credit_limit_currency: string | null;
  payment_terms_days: number;
  address: Record<string, unknown> | null;
  region: string | null;
  phone: string | null;
  tax_id: string | null;
  gps_latitude: string | null;
  gps_longitude: string | null;
  contact: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
}

/** The writable columns, by their column names. */
export type CustomerColumns = Omit<CustomerRow, 'organization_id' | 'id' | 'created_at' | 'updated_at'>;

export const customerTable: TableDefinition<CustomerColumns> = {
  resource: CUSTOMER_RESOURCE,
  table: 'customers',
  listName: 'customers',
  selectColumns: `t.organization_id, t.id, t.outlet_code, t.name, t.status, t.channel, t.price_group, t.route_id,
    t.credit_limit_amount::text AS credit_limit_amount, t.credit_limit_currency, t.payment_terms_days, t.address, t.region,
    t.phone, t.tax_id, t.gps_latitude::text AS gps_latitude, t.gps_longitude::text AS gps_longitude, t.contact, t.created_at, t.updated_at`,
  writable: [
    'outlet_code', 'name', 'status', 'channel', 'price_group', 'route_id', 'credit_limit_amount', 'credit_limit_currency',
    'payment_terms_days', 'address', 'region', 'phone', 'tax_id', 'gps_latitude', 'gps_longitude', 'contact',
  ],
  jsonColumns: ['address', 'contact'],
  uniqueFields: { customers_organization_id_outlet_code_key: 'outlet_code' },
  fieldOf: { outlet_code: '/outletCode' },
};

export function customerFilters(query: Record<string, string | undefined>): Record<string, Filter | undefined> {
  return {
    status: equals('status', query.status),
    channel: equals('channel', query.channel),
    routeId: equals('route_id', query.routeId),
    region: equals('region', query.region),
    externalCode: hasExternalCode(CUSTOMER_RESOURCE, query.externalCode),
  };
}
