// The simulators of the external systems for a whole test file: a database of its own (the service's migrations
// applied, the simulators' applied at start) and their HTTP server on a free port.
import pg from 'pg';
import { kyselyOver } from '../../server/platform/database/database.js';
import type { Db } from '../../server/platform/database/transaction.js';
import { startSimulatorServer, type SimulatorServer } from '../../server/connectors/simulators/server.js';
import { createTestDatabase, type TestDatabase } from './database.js';

export interface SimulatorWorld {
  db: Db;
  /** The simulators' base URL: QuickBooks under /quickbooks, EFRIS under /efris. */
  url: string;
}

export function useSimulators(
  test: { before: (fn: () => Promise<void>) => void; after: { always: (fn: () => Promise<void>) => void } },
  label: string,
): () => SimulatorWorld {
  let database: TestDatabase | undefined;
  let pool: pg.Pool | undefined;
  let server: SimulatorServer | undefined;
  let world: SimulatorWorld | undefined;
  test.before(async () => {
    database = await createTestDatabase(label);
    pool = new pg.Pool({ connectionString: database.url, max: 4 });
    const db = kyselyOver(pool);
    server = await startSimulatorServer(db);
    world = { db, url: server.url };
  });
  test.after.always(async () => {
    await server?.stop();
    await pool?.end();
    await database?.drop();
  });
  return () => {
    if (!world) throw new Error('the simulators did not start');
    return world;
  };
}
