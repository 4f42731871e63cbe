// The first start of an empty sandbox creates a demo distributor with synthetic outlets and a full-scope sandbox
// key, so a developer can make a first call at once. The key is printed once and kept in DATA_DIR for them.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import type { Logger } from 'pino';
import { createApiKey } from '../../platform/access/api-keys.js';
import { createOrganization } from '../../platform/access/organizations.js';
import { scopeCatalogue } from '../../platform/access/scopes.js';
import { inTransaction } from '../../platform/database/transaction.js';
import { newId } from '../../platform/ids.js';
import { CUSTOMER_RESOURCE } from '../customers/repository.js';
import { syntheticOutlets } from './synthetic-outlets.js';

export const SANDBOX_OUTLETS = 300;
export const SANDBOX_KEY_FILE = 'sandbox-key.txt';

export async function bootstrapSandbox(pool: pg.Pool, dataDir: string, logger: Logger): Promise<{ organizationId: string; secret: string } | null> {
  const created = await inTransaction(pool, async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(7245002)'); // one process bootstraps, the others see it done
    const { rows } = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM organizations');
    if (rows[0]!.n > 0) return null;
    const organization = await createOrganization(tx, { name: 'Kampala Beverages Ltd (sandbox)', baseCurrency: 'UGX', modules: ['delivery', 'field-sales'] });
    const key = await createApiKey(tx, { organizationId: organization.id, environment: 'sandbox', scopes: Object.keys(scopeCatalogue()), name: 'Sandbox full access' });
    const outlets = syntheticOutlets(SANDBOX_OUTLETS).map((outlet) => ({ ...outlet, id: newId('cus') }));
    await tx.query(
      `INSERT INTO customers (organization_id, id, outlet_code, name, status, channel, price_group, route_id, credit_limit_amount, credit_limit_currency,
         payment_terms_days, address, region, phone, tax_id, gps_latitude, gps_longitude, contact)
       SELECT $1, id, outlet_code, name, status, channel, price_group, route_id, credit_limit_amount, credit_limit_currency,
         payment_terms_days, address, region, phone, tax_id, gps_latitude, gps_longitude, contact
         FROM jsonb_to_recordset($2::jsonb) AS x(id text, outlet_code text, name text, status text, channel text, price_group text, route_id text,
           credit_limit_amount numeric, credit_limit_currency text, payment_terms_days int, address jsonb, region text, phone text, tax_id text,
           gps_latitude numeric, gps_longitude numeric, contact jsonb)`,
      [organization.id, JSON.stringify(outlets)],
    );
    await tx.query(
      `INSERT INTO external_codes (organization_id, resource, code_system, code, record_id)
       SELECT $1, $2, 'dms', outlet_code, id FROM jsonb_to_recordset($3::jsonb) AS x(id text, outlet_code text)`,
      [organization.id, CUSTOMER_RESOURCE, JSON.stringify(outlets)],
    );
    return { organizationId: organization.id, secret: key.secret };
  });
  if (!created) return null;
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(join(dataDir, SANDBOX_KEY_FILE), created.secret + '\n', { mode: 0o600 });
  logger.info({ organizationId: created.organizationId, outlets: SANDBOX_OUTLETS }, 'sandbox bootstrapped');
  return created;
}
