// The service-level harness: a test file gets its own migrated database and calls posting functions, services and
// queries directly with an actor, without HTTP. Rules are proved here; HTTP tests stay for the contract.
import pg from 'pg';
import { kyselyOver } from '../../server/platform/database/database.js';
import { inTransaction, type Db, type Tx } from '../../server/platform/database/transaction.js';
import { actingOrganization, createOrganization, type Module } from '../../server/platform/access/organizations.js';
import type { ActingOrganization, ApiKeyActor, OperatorActor } from '../../server/domain/actor.js';
import { operatorActor } from '../../server/domain/actor.js';
import { createTestDatabase, type TestDatabase } from './database.js';

export interface DomainWorld {
  db: Db;
  database: TestDatabase;
  /** A new organisation of this database and an operator acting for it (every scope). */
  organization(options?: { baseCurrency?: string; modules?: Module[] }): Promise<{ organization: ActingOrganization; operator: OperatorActor }>;
  /** An actor as an API key with exactly these scopes would be. */
  keyActor(organization: ActingOrganization, scopes: readonly string[]): ApiKeyActor;
  /** Runs fn in one transaction, as a route or a DMS handler does. */
  post<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export async function domainWorld(label: string): Promise<DomainWorld> {
  const database = await createTestDatabase(label);
  const pool = new pg.Pool({ connectionString: database.url, max: 5 });
  const db = kyselyOver(pool);
  return {
    db,
    database,
    async organization(options = {}) {
      const record = await createOrganization(db, { name: `Distributor ${label}`, baseCurrency: options.baseCurrency ?? 'UGX', modules: options.modules });
      const organization = actingOrganization(record);
      return { organization, operator: operatorActor(organization, `test ${label}`) };
    },
    keyActor: (organization, scopes) => ({ kind: 'api_key', organization, scopes: new Set(scopes), apiKeyId: 'key_test', environment: 'sandbox' }),
    post: (fn) => inTransaction(db, fn),
    async close() {
      await db.destroy();
      await database.drop();
    },
  };
}
