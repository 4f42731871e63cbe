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

/**
 * The upsert that takes a token from a key's bucket, for a CTE whose rows (`source`) carry organization_id, id
 * (the key), per_minute and burst; `$class` is the parameter holding the class. It refills by the time since the
 * last request, takes a token when there is one, and says whether it did, in one statement, so that the row
 * lock that makes every process share the budget is held as briefly as possible. One timestamp per statement
 * keeps the expressions consistent; refilled_at never moves backwards.
 */
export function takeTokenUpsert(source: string, classParameter: string): string {
  const available = 'LEAST(EXCLUDED.burst, b.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() - b.refilled_at)) * EXCLUDED.per_minute / 60)';
  return `INSERT INTO rate_limit_buckets AS b (organization_id, api_key_id, class, tokens, refilled_at, last_allowed, per_minute, burst)
    SELECT organization_id, id, ${classParameter}, burst - 1, statement_timestamp(), true, per_minute, burst FROM ${source}
    ON CONFLICT (organization_id, api_key_id, class) DO UPDATE SET
      tokens = ${available} - CASE WHEN ${available} >= 1 THEN 1 ELSE 0 END,
      last_allowed = ${available} >= 1,
      refilled_at = GREATEST(b.refilled_at, statement_timestamp()),
      per_minute = EXCLUDED.per_minute,
      burst = EXCLUDED.burst
    RETURNING last_allowed, tokens`;
}

/** The headers and verdict of a bucket's answer. */
export function rateDecision(limit: RateLimit, allowed: boolean, remaining: number): RateDecision {
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
