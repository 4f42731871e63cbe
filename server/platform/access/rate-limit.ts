import { sql, type QueryCreator } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';

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

/** What a token is taken for: the rows of a CTE named `key`, one per key (authentication's key lookup). */
export interface TokenSource {
  organization_id: string;
  id: string;
  per_minute: number;
  burst: number;
}

/**
 * The upsert that takes a token from a key's bucket for the rows of the CTE `key` (see TokenSource), in `rateClass`.
 * It refills by the time since the last request, takes a token when there is one, and says whether it did, in one
 * statement, so that the row lock that makes every process share the budget is held as briefly as possible. One
 * timestamp per statement keeps the expressions consistent; refilled_at never moves backwards.
 */
export function takeTokenUpsert(query: QueryCreator<DB & { key: TokenSource }>, rateClass: string) {
  // The refill arithmetic over excluded.* and the bucket's old row has no builder form (EXTRACT(EPOCH ...),
  // statement_timestamp()); it is a constant fragment, composed as Kysely composes sql templates, nothing is bound.
  const available = sql<number>`LEAST(excluded.burst, rate_limit_buckets.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() - rate_limit_buckets.refilled_at)) * excluded.per_minute / 60)`;
  return query.insertInto('rate_limit_buckets')
    .columns(['organization_id', 'api_key_id', 'class', 'tokens', 'refilled_at', 'last_allowed', 'per_minute', 'burst'])
    .expression((eb) => eb.selectFrom('key').select((k) => [
      'key.organization_id', 'key.id', k.val(rateClass).as('class'), k(k.ref('key.burst'), '-', 1).as('tokens'),
      sql<Date>`statement_timestamp()`.as('refilled_at'), // as above: the statement's one timestamp
      k.lit(true).as('last_allowed'), 'key.per_minute', 'key.burst',
    ]))
    .onConflict((conflict) => conflict.columns(['organization_id', 'api_key_id', 'class']).doUpdateSet({
      // as above: the refill, then a token taken when a whole one is there
      tokens: sql<number>`${available} - CASE WHEN ${available} >= 1 THEN 1 ELSE 0 END`,
      last_allowed: sql<boolean>`${available} >= 1`,
      refilled_at: sql<Date>`GREATEST(rate_limit_buckets.refilled_at, statement_timestamp())`,
      per_minute: (eb) => eb.ref('excluded.per_minute'),
      burst: (eb) => eb.ref('excluded.burst'),
    }))
    .returning(['last_allowed', 'tokens']);
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
