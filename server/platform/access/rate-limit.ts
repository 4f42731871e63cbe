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
  // Refill by the time since the last request, take a token when there is one, and say whether it did: one
  // statement, so the row lock that makes every process share the budget is held as briefly as possible. One
  // timestamp per statement keeps the three expressions consistent; refilled_at never moves backwards.
  const { rows } = await pool.query<{ allowed: boolean; remaining: number }>(
    `INSERT INTO rate_limit_buckets AS b (organization_id, api_key_id, class, tokens, refilled_at, last_allowed)
     VALUES ($1, $2, $3, $5::float8 - 1, statement_timestamp(), true)
     ON CONFLICT (organization_id, api_key_id, class) DO UPDATE SET
       tokens = LEAST($5::float8, b.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() - b.refilled_at)) * $4::float8 / 60)
              - CASE WHEN LEAST($5::float8, b.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() - b.refilled_at)) * $4::float8 / 60) >= 1 THEN 1 ELSE 0 END,
       last_allowed = LEAST($5::float8, b.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() - b.refilled_at)) * $4::float8 / 60) >= 1,
       refilled_at = GREATEST(b.refilled_at, statement_timestamp())
     RETURNING last_allowed AS allowed, tokens AS remaining`,
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
