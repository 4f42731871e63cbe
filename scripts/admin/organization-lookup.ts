// Reading organisations for the CLI (the shared module only creates and changes them).
import type pg from 'pg';
import type { OrganizationRecord } from '../../server/platform/access/organizations.js';

interface Row {
  id: string;
  name: string;
  api_access_enabled: boolean;
  base_currency: string;
  delivery_module_enabled: boolean;
  field_sales_module_enabled: boolean;
}

const COLUMNS = 'id, name, api_access_enabled, base_currency, delivery_module_enabled, field_sales_module_enabled';

function toRecord(row: Row): OrganizationRecord {
  return {
    id: row.id,
    name: row.name,
    apiAccessEnabled: row.api_access_enabled,
    baseCurrency: row.base_currency,
    deliveryModuleEnabled: row.delivery_module_enabled,
    fieldSalesModuleEnabled: row.field_sales_module_enabled,
  };
}

/** The organisation, or an error naming the id when there is none. */
export async function getOrganization(db: pg.Pool, id: string): Promise<OrganizationRecord> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM organizations WHERE id = $1`, [id]);
  if (!rows[0]) throw new Error(`no organisation ${id} (org list shows them)`);
  return toRecord(rows[0]);
}

export async function listOrganizations(db: pg.Pool): Promise<OrganizationRecord[]> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM organizations ORDER BY created_at, id`);
  return rows.map(toRecord);
}
