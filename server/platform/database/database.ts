// Where the data lives: the server named by DATABASE_URL, or else an embedded PostgreSQL under DATA_DIR. Every
// query of the service goes through one Kysely<DB> over the pool (see transaction.ts); `pg` is used only here.
// DATABASE_URL may be a pooler in transaction mode (PgBouncer): each transaction may then run on another server
// connection, so nothing that goes through it may rely on a session (a session-level SET or advisory lock, a named
// prepared statement, a LISTEN). What needs a session connects to `directUrl` (docs/decisions/0043-behind-a-transaction-pooler.md).
import { join } from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { DB } from '../../../generated/kysely/types.js';
import type { Config } from '../config.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres.js';
import type { Db } from './transaction.js';

export const EMBEDDED_DATABASE_NAME = 'erp';

export interface Database {
  /** What the pools connect to: DATABASE_URL (perhaps a transaction-mode pooler), or the embedded server's URL. */
  url: string;
  /**
   * A connection that keeps its session, for what holds session state between transactions (a LISTEN: pass it to
   * listenToChannel): DATABASE_DIRECT_URL when set, or else `url`. Resolved here only, so every caller agrees.
   */
  directUrl: string;
  db: Db;
  /**
   * Connections with synchronous_commit off, for bookkeeping whose last few writes may be lost in a database crash
   * without harm (rate-limit buckets, API log batches). Waiting for the WAL flush there would serialise every
   * request of a key behind the bucket row's lock for the length of an fsync. The setting is the connection's
   * session's, so behind a pooler (DATABASE_DIRECT_URL set) it is not asked for and these commit like the others.
   */
  relaxed: Db;
  /** The pool under `db`, for tests that look at the database from outside the service. */
  pool: pg.Pool;
  /** Closes the pools, then stops the embedded server when this process started it. */
  close(): Promise<void>;
}

export async function openDatabase(config: Config, logger: Logger): Promise<Database> {
  let embedded: EmbeddedPostgres | null = null;
  let url = config.databaseUrl;
  if (url === null) {
    embedded = await startEmbeddedPostgres({
      dataDir: join(config.dataDir, 'postgres'),
      port: config.embeddedPostgresPort,
    });
    await ensureDatabase(embedded.url('postgres'), EMBEDDED_DATABASE_NAME);
    url = embedded.url(EMBEDDED_DATABASE_NAME);
    logger.info({ port: embedded.port, startedHere: embedded.ownsServer }, 'embedded PostgreSQL ready');
  }
  const directUrl = config.databaseDirectUrl ?? url;
  // A startup parameter sets the session, which a transaction-mode pooler does not keep: PgBouncer refuses `options`
  // ("unsupported startup parameter") unless told to ignore it, and could not pass it to every server connection a
  // client's transactions run on. So behind one the bookkeeping pool asks for nothing and its commits wait for the
  // WAL flush like the others; a session-level SET instead would stay on a server connection that other clients'
  // transactions (payments, invoices) run on next.
  const pooled = directUrl !== url;
  const pool = new pg.Pool({ connectionString: url, max: 20, application_name: 'erp-api' });
  const relaxedPool = new pg.Pool({
    connectionString: url,
    max: 10,
    application_name: 'erp-api-bookkeeping',
    ...(pooled ? {} : { options: '-c synchronous_commit=off' }),
  });
  for (const p of [pool, relaxedPool]) {
    p.on('error', (error) => logger.error({ err: error }, 'idle database connection failed'));
    // A checked-out connection that dies (backend terminated, failover) must fail its request with a 500, not
    // crash the process: pg emits 'error' on the client, and without a listener that is an uncaught exception.
    p.on('connect', (client) => client.on('error', (error) => logger.warn({ err: error }, 'database connection lost')));
  }
  const db = kyselyOver(pool);
  const relaxed = kyselyOver(relaxedPool);
  return {
    url,
    directUrl,
    db,
    relaxed,
    pool,
    async close() {
      await Promise.all([db.destroy(), relaxed.destroy()]); // ends the pools
      await embedded?.stop();
    },
  };
}

/** The Kysely of a pool (one per pool: operator commands and tests that hold a pool of their own). */
export function kyselyOver(pool: pg.Pool): Db {
  let db = kyselies.get(pool);
  if (!db) {
    db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    kyselies.set(pool, db);
  }
  return db;
}
const kyselies = new WeakMap<pg.Pool, Db>();

/** A pool of `max` connections to url, with the Kysely over it (operator commands, benches). */
export function openPool(url: string, max = 5): { db: Db; close(): Promise<void> } {
  const db = kyselyOver(new pg.Pool({ connectionString: url, max }));
  return { db, close: () => db.destroy() };
}

async function ensureDatabase(maintenanceUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: maintenanceUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    // An identifier cannot be a bound parameter; the name is this module's constant, quoted.
    if (rowCount === 0) await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
}

/** Connects once to url and disconnects (start checks: is DATABASE_URL reachable?); rejects with pg's error. */
export async function tryConnect(url: string, timeoutMs: number): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  try {
    await client.connect();
  } finally {
    await client.end().catch(() => {});
  }
}
