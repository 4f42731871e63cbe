// Where the data lives: the server named by DATABASE_URL, or else an embedded PostgreSQL under DATA_DIR.
import { join } from 'node:path';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres.js';

export const EMBEDDED_DATABASE_NAME = 'erp';

export interface Database {
  url: string;
  pool: pg.Pool;
  /**
   * Connections with synchronous_commit off, for bookkeeping whose last few writes may be lost in a database crash
   * without harm (rate-limit buckets, API log batches). Waiting for the WAL flush there would serialise every
   * request of a key behind the bucket row's lock for the length of an fsync.
   */
  relaxedPool: pg.Pool;
  /** Closes the pools, then stops the embedded server when this process started it. */
  close(): Promise<void>;
}

export async function openDatabase(config: Config, logger: Logger): Promise<Database> {
  let embedded: EmbeddedPostgres | null = null;
  let url = config.databaseUrl;
  if (url === null) {
    embedded = await startEmbeddedPostgres({ dataDir: join(config.dataDir, 'postgres'), port: config.embeddedPostgresPort });
    await ensureDatabase(embedded.url('postgres'), EMBEDDED_DATABASE_NAME);
    url = embedded.url(EMBEDDED_DATABASE_NAME);
    logger.info({ port: embedded.port, startedHere: embedded.ownsServer }, 'embedded PostgreSQL ready');
  }
  const pool = new pg.Pool({ connectionString: url, max: 20, application_name: 'erp-api' });
  const relaxedPool = new pg.Pool({ connectionString: url, max: 10, application_name: 'erp-api-bookkeeping', options: '-c synchronous_commit=off' });
  for (const p of [pool, relaxedPool]) {
    p.on('error', (error) => logger.error({ err: error }, 'idle database connection failed'));
    // A checked-out connection that dies (backend terminated, failover) must fail its request with a 500, not
    // crash the process: pg emits 'error' on the client, and without a listener that is an uncaught exception.
    p.on('connect', (client) => client.on('error', (error) => logger.warn({ err: error }, 'database connection lost')));
  }
  return {
    url,
    pool,
    relaxedPool,
    async close() {
      await Promise.all([pool.end(), relaxedPool.end()]);
      await embedded?.stop();
    },
  };
}

async function ensureDatabase(maintenanceUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: maintenanceUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount === 0) await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
}
