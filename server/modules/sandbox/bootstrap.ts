// The first start of an empty sandbox creates a demo distributor (catalogue with empties, prices, warehouses,
// routes with salespeople and vans, outlets and journey plans; see synthetic-distributor.ts) and a full-scope
// sandbox key, so a developer can make a first call at once. The key is printed once and kept in DATA_DIR.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { createApiKey } from '../../platform/access/api-keys.js';
import { actingOrganization, createOrganization } from '../../platform/access/organizations.js';
import { scopeCatalogue } from '../../platform/access/scopes.js';
import { operatorActor } from '../../platform/access/actor.js';
import { inTransaction, type Db, type Tx } from '../../platform/database/transaction.js';
import { setConnection, SIMULATOR_BASE_URL } from '../../connectors/connections.js';
import { writeDistributor } from './sandbox-writer.js';
import { sandboxDistributor } from './synthetic-distributor.js';
import { addConnection } from '../dms/connections.js';
import { setAccountsIn } from '../../platform/access/accounts.js';

export const SANDBOX_OUTLETS = 300;
export const SANDBOX_KEY_FILE = 'sandbox-key.txt';

/** The sandbox's company in the QuickBooks simulator. */
export const SANDBOX_REALM = '9341453050';

/** The distributor code of the sandbox's DMS connection: the one the spec's DMS examples carry. */
export const SANDBOX_DISTRIBUTOR_CODE = 'DIST001';

async function connectToSimulators(tx: Tx, organizationId: string): Promise<void> {
  await setConnection(tx, organizationId, 'accounting', { baseUrl: SIMULATOR_BASE_URL, account: SANDBOX_REALM }, null);
}

export async function bootstrapSandbox(
  db: Db,
  dataDir: string,
  logger: Logger,
): Promise<{ organizationId: string; secret: string } | null> {
  const created = await inTransaction(db, async (tx) => {
    // One process bootstraps, the others see it done (an advisory lock: no builder form; the key is a constant).
    await sql`SELECT pg_advisory_xact_lock(7245002)`.execute(tx);
    const any = await tx.selectFrom('organizations').select('id').limit(1).executeTakeFirst();
    if (any) return null;
    const organization = await createOrganization(tx, {
      name: 'Kampala Beverages Ltd (sandbox)',
      baseCurrency: 'UGX',
      modules: ['delivery', 'field-sales'],
    });
    const key = await createApiKey(tx, {
      organizationId: organization.id,
      environment: 'sandbox',
      scopes: Object.keys(scopeCatalogue()),
      name: 'Sandbox full access',
    });
    const distributor = sandboxDistributor(SANDBOX_OUTLETS);
    const actor = operatorActor(actingOrganization(organization), 'sandbox bootstrap');
    await writeDistributor(tx, actor, distributor);
    // Connected to the accounting simulator once its history is written: the history predates the connection (its
    // documents' postings are not_applicable); what a partner posts from now on is posted there. Fiscalisation is
    // the distributor's registration with the tax authority: off until `admin connector set --system fiscal`.
    await connectToSimulators(tx, organization.id);
    // Its accounts in QuickBooks, mapped as an operator would (admin accounts set): with an accounting connection the
    // DMS refuses money documents while they are not (R03). SUP01 is the supplier of the spec's company invoice.
    await setAccountsIn(tx, organization.id, {
      cashAccount: 'Cash on hand',
      salesAccount: 'Sales of beverages',
      promotionsExpenseAccount: 'Trade promotions',
      vendors: { SUP01: 'Nile Breweries Ltd' },
    });
    // A DMS (the canonical format) for the distributor, so that a partner can push documents with the sandbox key.
    await addConnection(tx, organization.id, 'canonical', { distributorCode: SANDBOX_DISTRIBUTOR_CODE });
    return {
      organizationId: organization.id,
      secret: key.secret,
      products: distributor.products.length,
      routes: distributor.routes.length,
    };
  });
  if (!created) return null;
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(join(dataDir, SANDBOX_KEY_FILE), created.secret + '\n', { mode: 0o600 });
  logger.info(
    {
      organizationId: created.organizationId,
      outlets: SANDBOX_OUTLETS,
      products: created.products,
      routes: created.routes,
    },
    'sandbox bootstrapped',
  );
  return { organizationId: created.organizationId, secret: created.secret };
}
