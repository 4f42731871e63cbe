// Operator actions on organisations (the CLI and the sandbox bootstrap use them).
import type pg from 'pg';
import { ApiError } from '../errors/api-error.js';
import { newId } from '../ids.js';

export interface OrganizationRecord {
  id: string;
  name: string;
  apiAccessEnabled: boolean;
  baseCurrency: string;
  deliveryModuleEnabled: boolean;
  fieldSalesModuleEnabled: boolean;
}

export const MODULES = ['delivery', 'field-sales'] as const;
export type Module = (typeof MODULES)[number];

type Db = pg.Pool | pg.PoolClient;

export async function createOrganization(db: Db, input: { name: string; baseCurrency?: string; apiAccessEnabled?: boolean; modules?: Module[] }): Promise<OrganizationRecord> {
  const currency = (input.baseCurrency ?? 'UGX').toUpperCase();
  if (!/^[A-Z]{3}$/.test(currency)) throw new Error(`--currency must be a three-letter ISO 4217 code, not ${input.baseCurrency}`);
  if (input.name.trim() === '') throw new Error('--name must not be empty');
  const { rows } = await db.query<OrganizationRow>(
    `INSERT INTO organizations (id, name, base_currency, api_access_enabled, delivery_module_enabled, field_sales_module_enabled, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, now()) RETURNING *`,
    [newId('org'), input.name.trim(), currency, input.apiAccessEnabled ?? true, input.modules?.includes('delivery') ?? false, input.modules?.includes('field-sales') ?? false],
  );
  return toRecord(rows[0]!);
}

export async function updateOrganization(db: Db, id: string, change: { apiAccessEnabled?: boolean; modules?: Module[] }): Promise<OrganizationRecord> {
  const { rows } = await db.query<OrganizationRow>(
    `UPDATE organizations SET
       api_access_enabled = COALESCE($2, api_access_enabled),
       delivery_module_enabled = COALESCE($3, delivery_module_enabled),
       field_sales_module_enabled = COALESCE($4, field_sales_module_enabled),
       updated_at = now()
     WHERE id = $1 RETURNING *`,
    [id, change.apiAccessEnabled ?? null, change.modules ? change.modules.includes('delivery') : null, change.modules ? change.modules.includes('field-sales') : null],
  );
  if (!rows[0]) throw new ApiError('not_found', `No organisation ${id}.`);
  return toRecord(rows[0]);
}

/** The organisation, or an error naming the id when there is none. */
export async function getOrganization(db: Db, id: string): Promise<OrganizationRecord> {
  const { rows } = await db.query<OrganizationRow>('SELECT * FROM organizations WHERE id = $1', [id]);
  if (!rows[0]) throw new Error(`no organisation ${id} (org list shows them)`);
  return toRecord(rows[0]);
}

export async function listOrganizations(db: Db): Promise<OrganizationRecord[]> {
  const { rows } = await db.query<OrganizationRow>('SELECT * FROM organizations ORDER BY created_at, id');
  return rows.map(toRecord);
}

export async function registerCodeSystem(db: Db, organizationId: string, name: string): Promise<void> {
  if (!/^[a-z][a-z0-9_-]{0,31}$/.test(name)) throw new Error('a code system name is 1 to 32 lowercase letters, digits, _ or -, starting with a letter');
  if (name === 'dms') throw new Error('dms is built in');
  await db.query('INSERT INTO code_systems (organization_id, name) VALUES ($1, $2) ON CONFLICT DO NOTHING', [organizationId, name]);
}

interface OrganizationRow {
  id: string;
  name: string;
  api_access_enabled: boolean;
  base_currency: string;
  delivery_module_enabled: boolean;
  field_sales_module_enabled: boolean;
}

function toRecord(row: OrganizationRow): OrganizationRecord {
  return {
    id: row.id,
    name: row.name,
    apiAccessEnabled: row.api_access_enabled,
    baseCurrency: row.base_currency,
    deliveryModuleEnabled: row.delivery_module_enabled,
    fieldSalesModuleEnabled: row.field_sales_module_enabled,
  };
}
