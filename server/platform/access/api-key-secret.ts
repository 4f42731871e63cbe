// The shape of API key secrets: `<prefix>_test_<random>` (sandbox) or `<prefix>_live_<random>` (production),
// where the prefix (`erp_` + 10 base32 characters) is public and the random part carries 256 bits.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Environment } from '../config.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BASE32 = '0123456789abcdefghjkmnpqrstvwxyz';
const SECRET = /^(erp_[0-9a-z]{10})_(test|live)_([0-9A-Za-z]{43})$/;
/** Anything that looks like one of our keys, anywhere in a string (for the key_in_query check). */
export const KEY_LIKE = /erp_[0-9a-z]{10}_(?:test|live)_[0-9A-Za-z]{20,}/;

export interface ParsedSecret {
  prefix: string;
  environment: Environment;
}

export function environmentMarker(environment: Environment): 'test' | 'live' {
  return environment === 'sandbox' ? 'test' : 'live';
}

export function newPrefix(): string {
  return 'erp_' + [...randomBytes(10)].map((b) => BASE32[b & 31]).join('');
}

export function newSecret(prefix: string, environment: Environment): string {
  let n = BigInt('0x' + randomBytes(32).toString('hex'));
  let random = '';
  for (let i = 0; i < 43; i += 1) {
    random = BASE62[Number(n % 62n)] + random;
    n /= 62n;
  }
  return `${prefix}_${environmentMarker(environment)}_${random}`;
}

export function parseSecret(secret: string): ParsedSecret | null {
  const match = SECRET.exec(secret);
  if (!match) return null;
  return { prefix: match[1]!, environment: match[2] === 'test' ? 'sandbox' : 'production' };
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
