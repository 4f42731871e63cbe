// Operator actions on API keys. The secret is returned once, at creation or rotation; only its hash is kept.
import { sql } from 'kysely';
import ipaddr from 'ipaddr.js';
import type { Environment } from '../config.js';
import { inTransaction, type Db } from '../database/transaction.js';
import { newId } from '../ids.js';
import { hashSecret, newPrefix, newSecret } from './api-key-secret.js';
import { DEFAULT_RATE_LIMITS, type RateLimits } from './rate-limit.js';
import { scopeCatalogue } from './scopes.js';
import { accessChanged } from './key-cache.js';

export interface NewKey {
  organizationId: string;
  environment: Environment;
  scopes: string[];
  name?: string;
  ipAllowlist?: string[];
  expiresAt?: Date | null;
  rateLimits?: Partial<RateLimits>;
  /** The organisation member who had the key made (`admin key create --member`); it must be one of its members. */
  createdByMemberId?: string | null;
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
  createdByMemberId: string | null;
  createdAt: string;
}

export async function createApiKey(db: Db, input: NewKey): Promise<IssuedKey> {
  const known = scopeCatalogue();
  const unknown = input.scopes.filter((scope) => !(scope in known));
  if (unknown.length > 0)
    throw new Error(`unknown scope ${unknown.join(', ')}; the scopes are ${Object.keys(known).join(', ')}`);
  for (const cidr of input.ipAllowlist ?? []) {
    if (!ipaddr.isValidCIDR(cidr))
      throw new Error(`${cidr} is not a CIDR (for example 203.0.113.0/24 or 2001:db8::/32)`);
  }
  const organization = await db
    .selectFrom('organizations')
    .select('id')
    .where('id', '=', input.organizationId)
    .executeTakeFirst();
  if (!organization) throw new Error(`no organisation ${input.organizationId}`);
  if (input.createdByMemberId) {
    const member = await db
      .selectFrom('members')
      .select('id')
      .where('organization_id', '=', input.organizationId)
      .where('id', '=', input.createdByMemberId)
      .executeTakeFirst();
    if (!member)
      throw new Error(`no member ${input.createdByMemberId} in ${input.organizationId} (member list --org shows them)`);
  }
  const id = newId('key');
  const prefix = newPrefix(input.environment);
  const secret = newSecret(prefix);
  await db
    .insertInto('api_keys')
    .values((eb) => ({
      organization_id: input.organizationId,
      id,
      name: input.name ?? 'API key',
      prefix,
      environment: input.environment,
      secret_hash: hashSecret(secret),
      scopes: [...new Set(input.scopes)].sort(),
      rate_limits: { ...DEFAULT_RATE_LIMITS, ...input.rateLimits },
      ip_allowlist: input.ipAllowlist ?? [],
      expires_at: input.expiresAt ?? null,
      created_by_member_id: input.createdByMemberId ?? null,
      updated_at: eb.fn('now'),
    }))
    .execute();
  return { id, prefix, secret };
}

/**
 * Issues a replacement with the same organisation, environment, scopes, limits and allowlist. The old key keeps
 * working for `overlapHours` (0: it stops now), then stops.
 */
export async function rotateApiKey(
  db: Db,
  keyId: string,
  overlapHours: number,
): Promise<IssuedKey & { oldKeyExpiresAt: string }> {
  if (!Number.isFinite(overlapHours) || overlapHours < 0)
    throw new Error('--overlap-hours must be a number of hours, 0 or more');
  return inTransaction(db, async (tx) => {
    const old = await tx
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', keyId)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', eb.fn<Date>('now'))]))
      .forUpdate()
      .executeTakeFirst();
    // An expired key is not rotated: its replacement would inherit the past expiry and never work.
    if (!old) throw new Error(`no active key ${keyId} (unknown, revoked or expired)`);
    const issued = await createApiKey(tx, {
      organizationId: old.organization_id,
      environment: old.environment as Environment,
      scopes: old.scopes,
      name: old.name,
      ipAllowlist: old.ip_allowlist,
      expiresAt: old.expires_at,
      rateLimits: old.rate_limits,
      createdByMemberId: old.created_by_member_id,
    });
    await tx
      .updateTable('api_keys')
      .set({ rotated_from_id: old.id })
      .where('organization_id', '=', old.organization_id)
      .where('id', '=', issued.id)
      .execute();
    const expired = await tx
      .updateTable('api_keys')
      // LEAST over an interval from now: date arithmetic has no builder form; the hours are a bound parameter.
      .set({
        expires_at: sql<Date>`LEAST(COALESCE(expires_at, 'infinity'), now() + make_interval(secs => ${overlapHours * 3600}))`,
        updated_at: sql<Date>`now()`,
      })
      .where('organization_id', '=', old.organization_id)
      .where('id', '=', old.id)
      .returning('expires_at')
      .executeTakeFirstOrThrow();
    return { ...issued, oldKeyExpiresAt: expired.expires_at!.toISOString(), organizationId: old.organization_id };
  }).then(({ organizationId, ...rotated }) => {
    accessChanged(organizationId); // this process at once; the others by the trigger's notification
    return rotated;
  });
}

/** Stops the key at once; returns when (ISO 8601). */
export async function revokeApiKey(db: Db, keyId: string): Promise<string> {
  const revoked = await db
    .updateTable('api_keys')
    .set((eb) => ({ revoked_at: eb.fn('now'), updated_at: eb.fn('now') }))
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .returning(['revoked_at', 'organization_id'])
    .executeTakeFirst();
  if (!revoked) throw new Error(`no active key ${keyId}`);
  accessChanged(revoked.organization_id); // as in rotateApiKey
  return revoked.revoked_at!.toISOString();
}

export async function listApiKeys(db: Db, organizationId: string): Promise<KeySummary[]> {
  const rows = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    environment: row.environment as Environment,
    scopes: row.scopes,
    rateLimits: row.rate_limits,
    ipAllowlist: row.ip_allowlist,
    expiresAt: row.expires_at?.toISOString() ?? null,
    revokedAt: row.revoked_at?.toISOString() ?? null,
    rotatedFromId: row.rotated_from_id,
    createdByMemberId: row.created_by_member_id,
    createdAt: row.created_at.toISOString(),
  }));
}
