import type pg from 'pg';

export type Tx = pg.PoolClient;

const RETRYABLE = new Set(['40P01', '40001']); // deadlock detected, serialization failure
const ATTEMPTS = 3;

/**
 * Runs fn in one transaction: every write of a request commits together or not at all. A transaction that
 * PostgreSQL aborted as a deadlock victim (two writes locking the same rows in opposite orders) is run again,
 * up to three times in all: it was rolled back whole, and fn only touches the database.
 */
export async function inTransaction<T>(pool: pg.Pool, fn: (tx: Tx) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await once(pool, fn);
    } catch (error) {
      if (attempt >= ATTEMPTS || !RETRYABLE.has((error as { code?: string }).code ?? '')) throw error;
    }
  }
}

async function once<T>(pool: pg.Pool, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // A connection whose ROLLBACK fails is not returned to the pool (release(error) destroys it).
    await client.query('ROLLBACK').catch((rollbackError: Error) => { broken = rollbackError; });
    throw error;
  } finally {
    client.release(broken);
  }
}
