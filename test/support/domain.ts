// The service-level harness: a test file gets its own migrated database and calls posting functions, services and
// queries directly with an actor, without HTTP. Rules are proved here; HTTP tests stay for the contract.
import pg from 'pg';
import { kyselyOver } from '../../server/platform/database/database.js';
import { inTransaction, type Db, type Tx } from '../../server/platform/database/transaction.js';
import { actingOrganization, createOrganization, type Module } from '../../server/platform/access/organizations.js';
import type { ActingOrganization, ApiKeyActor, OperatorActor } from '../../server/platform/access/actor.js';
import { operatorActor } from '../../server/platform/access/actor.js';
import { auditStock } from '../../server/modules/stock/audit.js';
import { auditCustomerAccount } from '../../server/modules/customer-account/audit.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { setClockOffsetDays } from '../../server/platform/clock.js';
// The composed registry the posting jobs read (subjects and listeners from the modules' manifests), installed as the
// modules' list loads, as in the service.
import '../../server/composition/modules.js';

export interface DomainWorld {
  db: Db;
  database: TestDatabase;
  /** A new organisation of this database and an operator acting for it (every scope). */
  organization(options?: {
    baseCurrency?: string;
    modules?: Module[];
  }): Promise<{ organization: ActingOrganization; operator: OperatorActor }>;
  /** An actor as an API key with exactly these scopes would be. */
  keyActor(organization: ActingOrganization, scopes: readonly string[]): ApiKeyActor;
  /**
   * Runs fn in one transaction, as a route or a DMS handler does. close() runs the ledger checker on every
   * organisation the file made and fails the file when a balance disagrees with its ledger (unless the test that
   * tampered with one marked it with `tampered`).
   */
  post<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** A test that changes a balance behind the ledger's back on purpose (to prove the checker) marks the organisation. */
  tampered(organizationId: string): void;
}

/** The ledger checker over each organisation: a difference fails the test file that caused it. */
export async function assertLedgersAgree(db: Db, organizations: string[]): Promise<void> {
  const found: string[] = [];
  for (const organizationId of organizations) {
    for (const d of [...(await auditStock(db, organizationId)), ...(await auditCustomerAccount(db, organizationId))])
      found.push(`${organizationId}: ${d.kind} ${d.subject}: the ledger says ${d.expected}, ${d.actual}`);
  }
  if (found.length > 0)
    throw new Error(`the ledger checker found ${found.length} difference(s) after this file:\n${found.join('\n')}`);
}

export async function domainWorld(label: string): Promise<DomainWorld> {
  // The run's business clock (`TEST_CLOCK_OFFSET_DAYS=60 npm test`), as a service started with it would set it.
  setClockOffsetDays(Number(process.env.TEST_CLOCK_OFFSET_DAYS ?? 0));
  const database = await createTestDatabase(label);
  const pool = new pg.Pool({ connectionString: database.url, max: 5 });
  const db = kyselyOver(pool);
  const organizations: string[] = [];
  return {
    db,
    database,
    async organization(options = {}) {
      const record = await createOrganization(db, {
        name: `Distributor ${label}`,
        baseCurrency: options.baseCurrency ?? 'UGX',
        modules: options.modules,
      });
      organizations.push(record.id);
      const organization = actingOrganization(record);
      return { organization, operator: operatorActor(organization, `test ${label}`) };
    },
    keyActor: (organization, scopes) => ({
      kind: 'api_key',
      organization,
      scopes: new Set(scopes),
      apiKeyId: 'key_test',
      environment: 'sandbox',
    }),
    post: (fn) => inTransaction(db, fn),
    tampered(organizationId) {
      const i = organizations.indexOf(organizationId);
      if (i >= 0) organizations.splice(i, 1);
    },
    async close() {
      try {
        await assertLedgersAgree(db, organizations);
      } finally {
        await db.destroy();
        await database.drop();
      }
    },
  };
}
