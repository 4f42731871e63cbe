// Operator actions on API keys. The secret is returned once, at creation or rotation; only its hash is kept.
import type pg from 'pg';
import ipaddr from 'ipaddr.js';
import type { Environment } from '../config.js';
import { newId } from '../ids.js';
import { hashSecret, newPrefix, newSecret } from './api-key-secret.js';
import { DEFAULT_RATE_LIMITS, type RateLimits } from './rate-limit.js';
import { scopeCatalogue } from './scopes.js';

export interface NewKey {
  organizationId: string;
  environment: Environment;
  scopes: string[];
  name?: string;
  ipAllowlist?: string[];
  expiresAt?: Date | null;
  rateLimits?: Partial<RateLimits>;
}

export interface IssuedKey {
  id: string;
  prefix: string;
  /** Shown once; never stored. */
  secret: string;
}

export interface KeySummary {
  id: string;
  name: string;
  prefix: string;
  environment: Environment;
  scopes: string[];
  rateLimits: RateLimits;
  ipAllowlist: string[];
  expiresAt: string | null;
  revokedAt: string | null;
  rotatedFromId: string | null;
  createdAt: string;
}

type Db = pg.Pool | pg.PoolClient;

export async function createApiKey(db: Db, input: NewKey): Promise<IssuedKey> {
  const known = scopeCatalogue();
  const unknown = input.scopes.filter((scope) => !(scope in known));
  if (unknown.length > 0) throw new Error(`unknown scope ${unknown.join(', ')}; the scopes are ${Object.keys(known).join(', ')}`);
  for (const cidr of input.ipAllowlist ?? []) {
    if (!ipaddr.isValidCIDR(cidr)) throw new Error(`${cidr} is not a CIDR (for example 203.0.113.0/24 or 2001:db8::/32)`);
  }
  const organization = await db.query('SELECT 1 FROM organizations WHERE id = $1', [input.organizationId]);
  if (organization.rowCount !== 1) throw new Error(`no organisation ${input.organizationId}`);
  const id = newId('key');
  const prefix = newPrefix();
  const secret = newSecret(prefix, input.environment);
  await db.query(
    `INSERT INTO api_keys (organization_id, id, name, prefix, environment, secret_hash, scopes, rate_limits, ip_allowlist, expires_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now())`,
    [input.organizationId, id, input.name ?? 'API key', prefix, input.environment, hashSecret(secret), [...new Set(input.scopes)].sort(),
      JSON.stringify({ ...DEFAULT_RATE_LIMITS, ...input.rateLimits }), input.ipAllowlist ?? [], input.expiresAt ?? null],
  );
  return { id, prefix, secret };
}

/**
 * Issues a replacement with the same organisation, environment, scopes, limits and allowlist. The old key keeps
 * working for `overlapHours` (0: it stops now), then stops.
 */
export async function rotateApiKey(db: pg.Pool, keyId: string, overlapHours: number): Promise<IssuedKey & { oldKeyExpiresAt: string }> {
  if (!Number.isFinite(overlapHours) || overlapHours < 0) throw new Error('--overlap-hours must be a number of hours, 0 or more');
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<KeyRow>('SELECT * FROM api_keys WHERE id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now()) FOR UPDATE', [keyId]);
    const old = rows[0];
    // An expired key is not rotated: its replacement would inherit the past expiry and never work.
    if (!old) throw new Error(`no active key ${keyId} (unknown, revoked or expired)`);
    const issued = await createApiKey(client, {
      organizationId: old.organization_id, environment: old.environment, scopes: old.scopes, name: old.name,
      ipAllowlist: old.ip_allowlist, expiresAt: old.expires_at, rateLimits: old.rate_limits,
    });
    await client.query('UPDATE api_keys SET rotated_from_id = $2 WHERE organization_id = $3 AND id = $1', [issued.id, old.id, old.organization_id]);
    const { rows: expired } = await client.query<{ expires_at: Date }>(
      `UPDATE api_keys SET expires_at = LEAST(COALESCE(expires_at, 'infinity'), now() + make_interval(secs => $3)), updated_at = now()
        WHERE organization_id = $1 AND id = $2 RETURNING expires_at`,
      [old.organization_id, old.id, overlapHours * 3600],
    );
    await client.query('COMMIT');
    return { ...issued, oldKeyExpiresAt: expired[0]!.expires_at.toISOString() };
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

export async function revokeApiKey(db: Db, keyId: string): Promise<void> {
  const { rowCount } = await db.query('UPDATE api_keys SET revoked_at = now(), updated_at = now() WHERE id = $1 AND revoked_at IS NULL', [keyId]);
  if (rowCount !== 1) throw new Error(`no active key ${keyId}`);
}

export async function listApiKeys(db: Db, organizationId: string): Promise<KeySummary[]> {
  const { rows } = await db.query<KeyRow>('SELECT * FROM api_keys WHERE organization_id = $1 ORDER BY created_at, id', [organizationId]);
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    environment: row.environment,
    scopes: row.scopes,
    rateLimits: row.rate_limits,
    ipAllowlist: row.ip_allowlist,
    expiresAt: row.expires_at?.toISOString() ?? null,
    revokedAt: row.revoked_at?.toISOString() ?? null,
    rotatedFromId: row.rotated_from_id,
    createdAt: row.created_at.toISOString(),
  }));
}

interface KeyRow {
  organization_id: string;
  id: string;
  name: string;
  prefix: string;
  environment: Environment;
  scopes: string[];
  rate_limits: RateLimits;
  ip_allowlist: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
  rotated_from_id: string | null;
  created_at: Date;
}
