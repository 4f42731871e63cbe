import type pg from 'pg';

export type RateClass = 'read' | 'write' | 'ingest';

export interface RateLimit {
  perMinute: number;
  burst: number;
}

export type RateLimits = Record<RateClass, RateLimit>;

export const DEFAULT_RATE_LIMITS: RateLimits = {
  read: { perMinute: 600, burst: 100 },
  write: { perMinute: 120, burst: 30 },
  ingest: { perMinute: 60, burst: 60 },
};

export interface RateDecision {
  allowed: boolean;
  headers: Record<string, string>;
  retryAfterSeconds: number;
}

/** Takes a token from the key's bucket of this class (in Postgres, so all processes share it). */
export async function takeToken(pool: pg.Pool, organizationId: string, apiKeyId: string, rateClass: RateClass, limit: RateLimit): Promise<RateDecision> {
  const { rows } = await pool.query<{ allowed: boolean; remaining: number }>(
    'SELECT allowed, remaining FROM take_rate_limit_token($1, $2, $3, $4, $5)',
    [organizationId, apiKeyId, rateClass, limit.perMinute, limit.burst],
  );
  const { allowed, remaining } = rows[0]!;
  const secondsPerToken = 60 / limit.perMinute;
  const retryAfterSeconds = allowed ? 0 : Math.max(1, Math.ceil((1 - remaining) * secondsPerToken));
  return {
    allowed,
    retryAfterSeconds,
    headers: {
      'RateLimit-Limit': String(limit.burst),
      'RateLimit-Remaining': String(Math.floor(remaining)),
      'RateLimit-Reset': String(Math.ceil((limit.burst - remaining) * secondsPerToken)),
    },
  };
}
