// SQL for customers. Every statement is scoped by organization_id first (see ../shared/design.md, Tenancy).
import type pg from 'pg';
import type { Tx } from '../../platform/database/transaction.js';
import { readPage, type Filter, type ListRequest, type Page } from '../../platform/lists/page.js';

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

const COLUMNS = `t.organization_id, t.id, t.outlet_code, t.name, t.status, t.channel, t.price_group, t.route_id,
  t.credit_limit_amount::text AS credit_limit_amount, t.credit_limit_currency, t.payment_terms_days, t.address, t.region,
  t.phone, t.tax_id, t.gps_latitude::text AS gps_latitude, t.gps_longitude::text AS gps_longitude, t.contact, t.created_at, t.updated_at`;
const WRITABLE: (keyof CustomerColumns)[] = [
  'outlet_code', 'name', 'status', 'channel', 'price_group', 'route_id', 'credit_limit_amount', 'credit_limit_currency',
  'payment_terms_days', 'address', 'region', 'phone', 'tax_id', 'gps_latitude', 'gps_longitude', 'contact',
];
const JSON_COLUMNS = new Set<string>(['address', 'contact']);

type Db = pg.Pool | Tx;

export async function findCustomer(db: Db, organizationId: string, id: string, forUpdate = false): Promise<CustomerRow | null> {
  const { rows } = await db.query<CustomerRow>(
    `SELECT ${COLUMNS} FROM customers t WHERE t.organization_id = $1 AND t.id = $2${forUpdate ? ' FOR UPDATE' : ''}`,
    [organizationId, id],
  );
  return rows[0] ?? null;
}

export async function insertCustomer(tx: Tx, organizationId: string, id: string, values: CustomerColumns): Promise<CustomerRow> {
  const params = WRITABLE.map((column) => encode(column, values[column]));
  const { rows } = await tx.query<CustomerRow>(
    `WITH t AS (INSERT INTO customers (organization_id, id, ${WRITABLE.join(', ')}, created_at, updated_at)
       VALUES ($1, $2, ${WRITABLE.map((_, i) => `$${i + 3}`).join(', ')}, now(), now()) RETURNING *)
     SELECT ${COLUMNS} FROM t`,
    [organizationId, id, ...params],
  );
  return rows[0]!;
}

export async function updateCustomer(tx: Tx, organizationId: string, id: string, values: Partial<CustomerColumns>): Promise<CustomerRow> {
  const columns = WRITABLE.filter((column) => column in values);
  const assignments = columns.map((column, i) => `${column} = $${i + 3}`);
  const { rows } = await tx.query<CustomerRow>(
    `WITH t AS (UPDATE customers SET ${[...assignments, 'updated_at = now()'].join(', ')}
       WHERE organization_id = $1 AND id = $2 RETURNING *)
     SELECT ${COLUMNS} FROM t`,
    [organizationId, id, ...columns.map((column) => encode(column, values[column]))],
  );
  return rows[0]!;
}

export interface CustomerFilters {
  status?: string;
  channel?: string;
  routeId?: string;
  region?: string;
  externalCode?: string;
}

export function listCustomers(db: Db, organizationId: string, request: ListRequest, filters: CustomerFilters): Promise<Page<CustomerRow>> {
  const filter = (sql: string, value: string | undefined): Filter | undefined => (value === undefined ? undefined : { sql, value });
  return readPage<CustomerRow>(db, { name: 'customers', table: 'customers', columns: COLUMNS }, organizationId, request, {
    status: filter('t.status = $?', filters.status),
    channel: filter('t.channel = $?', filters.channel),
    routeId: filter('t.route_id = $?', filters.routeId),
    region: filter('t.region = $?', filters.region),
    externalCode: filter(
      "t.id IN (SELECT e.record_id FROM external_codes e WHERE e.organization_id = t.organization_id AND e.resource = 'customer' AND e.code = $?)",
      filters.externalCode,
    ),
  });
}

function encode(column: string, value: unknown): unknown {
  return JSON_COLUMNS.has(column) && value !== null && value !== undefined ? JSON.stringify(value) : value;
}
