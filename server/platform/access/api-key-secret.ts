// The shape of API key secrets (product spec, Authentication: a key begins with a fixed prefix ending in `test_` or
// `live_`): `erp_test_<lookup id>_<random>` (sandbox) or `erp_live_<lookup id>_<random>` (production). The public
// part, `erp_test_<lookup id>`, is the key's `prefix` (shown in logs, how authentication finds the key); the lookup
// id is 10 base32 characters and the random part carries 256 bits. Keys issued before that rule,
// `erp_<lookup id>_test_<random>`, keep working: their stored prefix is `erp_<lookup id>`, which no key of the new
// form can have (a lookup id has no `_`), so either form finds only its own key.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Environment } from '../config.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BASE32 = '0123456789abcdefghjkmnpqrstvwxyz';
const SECRET = /^(erp_(test|live)_[0-9a-z]{10})_([0-9A-Za-z]{43})$/;
/** The form of keys issued before the fixed `erp_test_`/`erp_live_` beginning; still accepted. */
const EARLIER_SECRET = /^(erp_[0-9a-z]{10})_(test|live)_([0-9A-Za-z]{43})$/;
/** Anything that looks like one of our keys, of either form, anywhere in a string (for the key_in_query check and the log's redaction). */
export const KEY_LIKE = /erp_(?:(?:test|live)_[0-9a-z]{10}|[0-9a-z]{10}_(?:test|live))_[0-9A-Za-z]{20,}/;

export interface ParsedSecret {
  prefix: string;
  environment: Environment;
}

export function environmentMarker(environment: Environment): 'test' | 'live' {
  return environment === 'sandbox' ? 'test' : 'live';
}

/** The public part of a new key: the fixed beginning of its environment and a random lookup id. */
export function newPrefix(environment: Environment): string {
  return `erp_${environmentMarker(environment)}_` + [...randomBytes(10)].map((b) => BASE32[b & 31]).join('');
}

/** A new key's secret: its prefix (from newPrefix, which carries the environment) and 256 random bits. */
export function newSecret(prefix: string): string {
  let n = BigInt('0x' + randomBytes(32).toString('hex'));
  let random = '';
  for (let i = 0; i < 43; i += 1) {
    random = BASE62[Number(n % 62n)] + random;
    n /= 62n;
  }
  return `${prefix}_${random}`;
}

export function parseSecret(secret: string): ParsedSecret | null {
  const match = SECRET.exec(secret);
  if (match) return { prefix: match[1]!, environment: match[2] === 'test' ? 'sandbox' : 'production' };
  const earlier = EARLIER_SECRET.exec(secret);
  if (earlier) return { prefix: earlier[1]!, environment: earlier[2] === 'test' ? 'sandbox' : 'production' };
  return null;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Constant-time comparison of a presented secret with a stored hash. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
