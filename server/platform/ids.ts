// Ids: ULIDs (sortable by creation time, 26 characters of Crockford base32), optionally behind a
// resource prefix (`cus_01J...`). ulidx draws one crypto random byte per character by default; on the
// request path that is 16 calls per id, so randomness is drawn in blocks from a pool instead.
import { getRandomValues } from 'node:crypto';
import { ulid } from 'ulidx';

const pool = new Uint32Array(1024);
let next = pool.length;

function pooledRandom(): number {
  if (next === pool.length) {
    getRandomValues(pool);
    next = 0;
  }
  return pool[next++]! / 0x1_0000_0000;
}

export function newUlid(): string {
  return ulid(Date.now(), pooledRandom);
}

/** A prefixed id, such as `org_01JD4QZ6T3E0W2X7Y8Z9A1B2C3`. */
export function newId(prefix: string): string {
  return `${prefix}_${newUlid()}`;
}
