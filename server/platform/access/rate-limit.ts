import { sql, type Expression, type QueryCreator, type RawBuilder } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';
import { preparedStatement, statementBuilder } from '../database/prepared.js';
import type { Db } from '../database/transaction.js';

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
 * How many tokens a statement may take beyond the requests waiting for them. A process that has several requests of
 * one key waiting at once takes tokens for them all in one statement, plus as many again (at most PREFETCH_MAX, and
 * never more than an eighth of what the bucket holds), which it spends in memory on the next requests. One request
 * at a time takes exactly one: the budget is shared as precisely as before, and only a busy key is batched.
 * Unspent tokens are dropped after HELD_FOR_MS. So across P processes a key can spend, in any window, at most
 * P x min(PREFETCH_MAX, burst / 8) tokens more than its budget allows (tokens leased before the window and spent
 * in it); the README states the rule.
 */
export const PREFETCH_MAX = 32;
export const PREFETCH_DIVISOR = 8;
export const HELD_FOR_MS = 1_000;

/** How many tokens a statement takes: the requests waiting, and how many more it may hold for the next ones. */
export interface TokenBatch {
  wanted: Expression<number>;
  prefetch: Expression<number>;
}

// One request, nothing held: the statement as every single request runs it. Constants, nothing bound.
const ONE: TokenBatch = { wanted: sql<number>`1`, prefetch: sql<number>`0` };

/**
 * The upsert that takes tokens from a key's bucket for the rows of the CTE `key` (see TokenSource), in `rateClass`.
 * It refills by the time since the last statement, takes what `batch` asks for while whole tokens are there
 * (never more than there are), and says how many it took, in one statement, so that the row lock that makes every
 * process share the budget is held as briefly as possible. One timestamp per statement keeps the expressions
 * consistent; refilled_at never moves backwards.
 */
export function takeTokenUpsert(query: QueryCreator<DB & { key: TokenSource }>, rateClass: string, batch: TokenBatch = ONE) {
  // The refill and batch arithmetic over excluded.* and the bucket's old row has no builder form (EXTRACT(EPOCH ...),
  // statement_timestamp(), floor); the fragments are composed as Kysely composes sql templates, and only the batch's
  // own expressions carry bound values.
  const granted = (available: RawBuilder<number>) =>
    sql<number>`CASE WHEN ${available} >= 1 THEN LEAST(${batch.wanted} + LEAST(${batch.prefetch}, floor(${available} / ${sql.lit(PREFETCH_DIVISOR)})), floor(${available}))::int ELSE 0 END`;
  const full = sql<number>`key.burst`; // a first statement finds the bucket full
  const available = sql<number>`LEAST(excluded.burst, rate_limit_buckets.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() - rate_limit_buckets.refilled_at)) * excluded.per_minute / 60)`;
  return query.insertInto('rate_limit_buckets')
    .columns(['organization_id', 'api_key_id', 'class', 'tokens', 'refilled_at', 'last_allowed', 'last_granted', 'per_minute', 'burst'])
    .expression((eb) => eb.selectFrom('key').select((k) => [
      'key.organization_id', 'key.id', k.val(rateClass).as('class'), sql<number>`${full} - ${granted(full)}`.as('tokens'), // as above
      sql<Date>`statement_timestamp()`.as('refilled_at'), // as above: the statement's one timestamp
      sql<boolean>`${granted(full)} >= 1`.as('last_allowed'), granted(full).as('last_granted'), 'key.per_minute', 'key.burst', // as above
    ]))
    .onConflict((conflict) => conflict.columns(['organization_id', 'api_key_id', 'class']).doUpdateSet({
      // as above: the refill, then the tokens taken while whole ones are there
      tokens: sql<number>`${available} - ${granted(available)}`,
      last_allowed: sql<boolean>`${granted(available)} >= 1`,
      last_granted: granted(available),
      // as above: the statement's one timestamp, never moving backwards
      refilled_at: sql<Date>`GREATEST(rate_limit_buckets.refilled_at, statement_timestamp())`,
      per_minute: (eb) => eb.ref('excluded.per_minute'),
      burst: (eb) => eb.ref('excluded.burst'),
    }))
    .returning(['last_allowed', 'last_granted', 'tokens']);
}

/** A key's budget as a statement sees it: its ids and its limit in the class taken from. */
export interface BudgetedKey {
  organizationId: string;
  id: string;
}

/** One statement for a batch: the key's values and the batch are bound; compiled once (see prepared.ts). */
const takeBatch = preparedStatement(
  (a: { organizationId: string; keyId: string; rateClass: string; perMinute: string; burst: string; wanted: string; prefetch: string }) =>
    statementBuilder
      .with('key', (q) => q.selectNoFrom((eb) => [
        eb.val(a.organizationId).as('organization_id'), eb.val(a.keyId).as('id'),
        eb.cast<number>(eb.val(a.perMinute), 'float8').as('per_minute'), eb.cast<number>(eb.val(a.burst), 'float8').as('burst'),
      ]))
      .with('bucket', (q) => takeTokenUpsert(q as never, a.rateClass, {
        wanted: sql<number>`CAST(${a.wanted} AS integer)`, // a bound parameter, typed for the arithmetic
        prefetch: sql<number>`CAST(${a.prefetch} AS integer)`, // as above
      }))
      .selectFrom('bucket').select(['last_allowed', 'last_granted', 'tokens']),
  ['organizationId', 'keyId', 'rateClass', 'perMinute', 'burst', 'wanted', 'prefetch'],
);

export interface TokenAnswer {
  allowed: boolean;
  /** Tokens left for the key in this class after this request, as this process knows them. */
  remaining: number;
}

interface Waiter {
  resolve(answer: TokenAnswer): void;
  reject(error: unknown): void;
}

interface BucketState {
  organizationId: string;
  /** Tokens taken from the shared bucket and not yet spent (see PREFETCH_MAX). */
  held: number;
  heldSince: number;
  /** What the shared bucket held after this process's last statement. */
  level: number;
  waiting: Waiter[];
  taking: boolean;
}

/**
 * A process's side of the shared budgets: requests of one key and class that arrive while a statement for them is
 * under way wait for the next one, which takes tokens for all of them at once; a key's concurrent requests in one
 * process therefore cost one row write per round trip, not one each, and never queue on the row lock among
 * themselves. `buckets` runs with synchronous_commit off (see Database.relaxed).
 */
export class RateBudget {
  private readonly states = new Map<string, BucketState>();

  constructor(private readonly buckets: Db) {}

  take(key: BudgetedKey, rateClass: RateClass, limit: RateLimit): Promise<TokenAnswer> {
    const name = `${key.id}:${rateClass}`;
    let state = this.states.get(name);
    if (!state) {
      state = { organizationId: key.organizationId, held: 0, heldSince: 0, level: 0, waiting: [], taking: false };
      this.states.set(name, state);
    }
    if (state.held >= 1 && Date.now() - state.heldSince > HELD_FOR_MS) state.held = 0; // stale: dropped, not spent
    if (state.held >= 1) {
      state.held -= 1;
      return Promise.resolve({ allowed: true, remaining: state.level + state.held });
    }
    const answer = new Promise<TokenAnswer>((resolve, reject) => state.waiting.push({ resolve, reject }));
    if (!state.taking) void this.takeFor(name, state, key, rateClass, limit);
    return answer;
  }

  /** Drops what is held for the organisation's keys ('*': every organisation's), whose limits or access changed. */
  forgetOrganization(organizationId: string): void {
    for (const state of this.states.values()) {
      if (organizationId === '*' || state.organizationId === organizationId) state.held = 0;
    }
  }

  private async takeFor(name: string, state: BucketState, key: BudgetedKey, rateClass: RateClass, limit: RateLimit): Promise<void> {
    state.taking = true;
    try {
      while (state.waiting.length > 0) {
        const batch = state.waiting.splice(0);
        const prefetch = batch.length > 1 ? Math.min(PREFETCH_MAX, batch.length) : 0;
        try {
          const [row] = await takeBatch(this.buckets, {
            organizationId: key.organizationId, keyId: key.id, rateClass, perMinute: String(limit.perMinute), burst: String(limit.burst),
            wanted: String(batch.length), prefetch: String(prefetch),
          });
          const level = Number(row!.tokens);
          const allowed = Math.min(row!.last_granted, batch.length);
          state.level = level;
          state.held = row!.last_granted - allowed;
          state.heldSince = Date.now();
          // Each allowed request took its own token: the first of the batch sees the most left.
          batch.forEach((waiter, i) => waiter.resolve(i < allowed ? { allowed: true, remaining: level + state.held + (allowed - 1 - i) } : { allowed: false, remaining: level }));
        } catch (error) {
          for (const waiter of batch) waiter.reject(error);
        }
      }
    } finally {
      state.taking = false;
      if (state.held < 1) this.states.delete(name); // nothing to remember; keeps the map to the busy keys
    }
  }
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
