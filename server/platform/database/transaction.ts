import type pg from 'pg';

export type Tx = pg.PoolClient;

/** Runs fn in one transaction: every write of a request commits together or not at all. */
export async function inTransaction<T>(pool: pg.Pool, fn: (tx: Tx) => Promise<T>): Promise<T> {
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
