// Each test file gets its own database, cloned from the template that scripts/test.ts migrated once.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

export function serverUrl(database: string): string {
  const base = process.env.TEST_POSTGRES_URL;
  if (!base)
    throw new Error('TEST_POSTGRES_URL is not set: run the tests with `npm test`, which starts their PostgreSQL');
  return Object.assign(new URL(base), { pathname: `/${database}` }).toString();
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl('postgres') });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** An empty database (no migrations), for tests of the migration machinery itself. */
export async function createEmptyDatabase(label: string): Promise<TestDatabase> {
  return create(label, 'template0');
}

/** A database with every migration and pg-boss's schema applied. */
export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const template = process.env.TEST_TEMPLATE_DATABASE;
  if (!template) throw new Error('TEST_TEMPLATE_DATABASE is not set: run the tests with `npm test`');
  return create(label, template);
}

async function create(label: string, template: string): Promise<TestDatabase> {
  const name = `t_${label
    .replace(/[^a-z0-9]+/gi, '_')
    .toLowerCase()
    .slice(0, 30)}_${randomBytes(4).toString('hex')}`;
  // FILE_COPY copies the template's files (after a checkpoint) instead of writing every page through the WAL, which
  // PostgreSQL 15 made the default: half of the test cluster's CPU went to clones (measured over test/domain/ and
  // test/admin/, 32 clones: 25.0 s of CREATE DATABASE against 13.2 s, the cluster's CPU 27.6 against 21.4 s).
  await admin(`CREATE DATABASE "${name}" TEMPLATE "${template}" STRATEGY FILE_COPY`);
  return {
    name,
    url: serverUrl(name),
    drop: () => dropWhenClosed(name),
  };
}

/**
 * Drops a file's database once the file's own connections have gone. A pool's end() resolves before its sockets have
 * closed; terminating a backend that is still closing (DROP ... WITH (FORCE)) sends its client a FATAL error after
 * the pool has let go of it, which no listener then catches and which ends the test worker. So wait (up to 5 s) for
 * the database to have no backends, then force whatever is left (a child process that did not stop).
 */
async function dropWhenClosed(name: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl('postgres') });
  await client.connect();
  try {
    for (let waited = 0; waited < 5_000; waited += 50) {
      const { rows } = await client.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1',
        [name],
      );
      if (rows[0]!.n === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
