// Organisations and keys for tests, made with the same functions as the operator CLI.
import type pg from 'pg';
import { createApiKey } from '../../server/platform/access/api-keys.js';
import { createOrganization, type Module } from '../../server/platform/access/organizations.js';
import { scopeCatalogue } from '../../server/platform/access/scopes.js';
import type { RateLimits } from '../../server/platform/access/rate-limit.js';
import type { Environment } from '../../server/platform/config.js';
import { kyselyOver } from '../../server/platform/database/database.js';

export interface TestCaller {
  organizationId: string;
  keyId: string;
  prefix: string;
  secret: string;
  /** `{ Authorization: 'Bearer <secret>' }` */
  auth: Record<string, string>;
}

export const ALL_SCOPES = Object.keys(scopeCatalogue());

const made: string[] = [];
/** The organisations createCaller made in this test file's process: the ones a file on the shared service checks. */
export const organizationsMadeHere = (): string[] => [...made];

export async function createCaller(
  pool: pg.Pool,
  options: {
    scopes?: string[];
    environment?: Environment;
    organizationId?: string;
    apiAccessEnabled?: boolean;
    baseCurrency?: string;
    modules?: Module[];
    ipAllowlist?: string[];
    expiresAt?: Date;
    rateLimits?: Partial<RateLimits>;
  } = {},
): Promise<TestCaller> {
  const organizationId =
    options.organizationId ??
    (
      await createOrganization(kyselyOver(pool), {
        name: 'Test Distributor',
        baseCurrency: options.baseCurrency ?? 'UGX',
        apiAccessEnabled: options.apiAccessEnabled ?? true,
        modules: options.modules,
      })
    ).id;
  if (!options.organizationId) made.push(organizationId);
  const key = await createApiKey(kyselyOver(pool), {
    organizationId,
    environment: options.environment ?? 'sandbox',
    scopes: options.scopes ?? ALL_SCOPES,
    ipAllowlist: options.ipAllowlist,
    expiresAt: options.expiresAt,
    rateLimits: options.rateLimits,
    name: 'test key',
  });
  return {
    organizationId,
    keyId: key.id,
    prefix: key.prefix,
    secret: key.secret,
    auth: { Authorization: `Bearer ${key.secret}` },
  };
}
