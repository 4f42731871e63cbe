import { sql, type QueryCreator, type RawBuilder } from 'kysely';
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

/**
 * What tokens are taken for: the rows of a CTE named `key`, one per key and class, each with the key's limit in that
 * class and how many tokens it asks for (see TokenBatch).
 */
export interface TokenSource {
  organization_id: string;
  id: string;
  class: string;
  per_minute: number;
  burst: number;
  /** Requests waiting for a token of this key and class. */
  wanted: number;
  /** How many more the statement may take for the key's next requests (see PREFETCH_MAX). */
  prefetch: number;
}

/**
 * How many tokens a statement may take beyond the requests waiting for them. A process that has several requests of
 * one key waiting at once takes tokens for them all in one statement, plus as many again (at most PREFETCH_MAX, and
 * never more than an eighth of what the bucket holds), which it spends in memory on the next requests. One request
 * at a time takes exactly one: the budget is shared as precisely as before, and only a busy key is batched.
 * Unspent tokens are dropped after HELD_FOR_MS. So across P processes a key can spend, in any window, at most
 * P x min(PREFETCH_MAX, burst / 8) tokens more than its budget allows (tokens taken before the window and spent
 * in it); the README states the rule. The budget per address of keyless requests (address-budget.ts) follows the
 * same rule with the same bound per address (decision 0056).
 */
export const PREFETCH_MAX = 32;
export const PREFETCH_DIVISOR = 8;
export const HELD_FOR_MS = 1_000;
/** Bucket statements a process has under way at once; requests arriving meanwhile wait for the next one. */
export const STATEMENTS_IN_FLIGHT = 2;

/** How many tokens a statement may take beyond `waiting` requests of one bucket: none for a lone request. */
export function prefetchFor(waiting: number): number {
  return waiting > 1 ? Math.min(PREFETCH_MAX, waiting) : 0;
}

/**
 * The tokens a statement grants a bucket, from what the bucket holds now (`available`, refilled), the requests
 * `wanted` and the `prefetch` asked for: all wanted plus the prefetch (never more than an eighth of what is there),
 * while whole tokens are there. The keys' and the addresses' statements both compute it.
 */
export function grantedTokens(available: RawBuilder<number>, wanted: RawBuilder<number>, prefetch: RawBuilder<number>) {
  // The arithmetic has no builder form (floor, LEAST over the conflicting row's own values); the fragments are
  // constant and composed as Kysely composes sql templates.
  return sql<number>`CASE WHEN ${available} >= 1 THEN LEAST(${wanted} + LEAST(${prefetch}, floor(${available} / ${sql.lit(PREFETCH_DIVISOR)})), floor(${available}))::int ELSE 0 END`;
}

interface HeldState<Tag> {
  tag: Tag;
  /**
   * Tokens taken from the shared bucket and not yet spent, each as the count the bucket was left with when it was
   * taken: what its request reports as remaining. Highest first.
   */
  held: number[];
  heldSince: number;
}

/**
 * The tokens a process took from shared buckets beyond the requests that waited for them (see PREFETCH_MAX), by
 * bucket name: spent from memory on the bucket's next requests, dropped unspent after HELD_FOR_MS. Only buckets with
 * tokens in hand are kept. `Tag` is what `forget` selects by (the keys' organisation).
 */
export class HeldTokens<Tag> {
  private readonly states = new Map<string, HeldState<Tag>>();

  /** A held token of the bucket, as the count it left the bucket with; undefined when none is held (or they are stale). */
  spend(name: string): number | undefined {
    const state = this.states.get(name);
    if (!state) return undefined;
    if (state.held.length > 0 && Date.now() - state.heldSince <= HELD_FOR_MS) {
      const remaining = state.held.shift()!;
      if (state.held.length === 0) this.states.delete(name);
      return remaining;
    }
    this.states.delete(name); // stale: dropped, not spent
    return undefined;
  }

  /**
   * Shares what one statement took from a bucket for `waiting` requests: `granted` tokens, which left the bucket at
   * `level`. Each token is the count it left the bucket with (the first request sees the most left; statements on
   * one bucket run one after another, so no two tokens carry the same count until it refills). The requests take the
   * statement's tokens in turn; tokens held from a statement that ran beside this one serve the requests this one
   * could not (a held token is never left unspent while a request of its bucket is refused); the rest are held.
   * Returns each request's count, undefined for a refused one.
   */
  share(name: string, tag: Tag, waiting: number, level: number, granted: number): (number | undefined)[] {
    const taken = Array.from({ length: granted }, (_, j) => level + granted - 1 - j);
    const direct = taken.splice(0, waiting);
    const before = this.states.get(name);
    const kept = before && Date.now() - before.heldSince <= HELD_FOR_MS ? before.held : [];
    const held = [...kept, ...taken].sort((a, b) => b - a);
    const counts = Array.from({ length: waiting }, (_, i) => (i < direct.length ? direct[i] : held.shift()));
    if (held.length > 0)
      this.states.set(name, { tag, held, heldSince: kept.length > 0 ? before!.heldSince : Date.now() });
    else this.states.delete(name); // nothing to remember: the map keeps only the buckets with tokens in hand
    return counts;
  }

  /** Drops what is held for the buckets whose tag matches. */
  forget(matches: (tag: Tag) => boolean): void {
    for (const [name, state] of this.states) if (matches(state.tag)) this.states.delete(name);
  }
}

/**
 * Requests gathered by name while STATEMENTS_IN_FLIGHT statements are under way, sent as one batch by the next: what
 * the keys' and the addresses' budgets share. `entry` finds or makes the waiting entry of a name; `send` runs `take`
 * on everything waiting when a statement may start, and again whenever one ends.
 */
export class StatementBatches<T> {
  private waiting = new Map<string, T>();
  private inFlight = 0;

  constructor(private readonly take: (batch: Map<string, T>) => Promise<void>) {}

  entry(name: string, make: () => T): T {
    let entry = this.waiting.get(name);
    if (entry === undefined) {
      entry = make();
      this.waiting.set(name, entry);
    }
    return entry;
  }

  send(): void {
    if (this.inFlight >= STATEMENTS_IN_FLIGHT || this.waiting.size === 0) return;
    const batch = this.waiting;
    this.waiting = new Map();
    this.inFlight += 1;
    void this.take(batch).finally(() => {
      this.inFlight -= 1;
      this.send();
    });
  }
}

/**
 * The upsert that takes tokens from the buckets of the rows of the CTE `key` (see TokenSource): for each, it refills
 * by the time since the last statement, takes what the row asks for while whole tokens are there (never more than
 * there are), and says how many it took. One statement for many keys, so that a process's requests cost one round
 * trip between them; rows are written in key order, so two processes' statements never deadlock; the row lock that
 * makes every process share a key's budget is held for one statement. One timestamp per statement keeps the
 * expressions consistent; refilled_at never moves backwards.
 */
export function takeTokenUpsert(query: QueryCreator<DB & { key: TokenSource }>) {
  // The refill arithmetic has no builder form (EXTRACT(EPOCH ...), statement_timestamp(), the conflicting row's own
  // values); the fragments are constant and composed as Kysely composes sql templates.
  // A first statement for a bucket finds it full.
  const first = grantedTokens(sql`key.burst`, sql`key.wanted`, sql`key.prefetch`);
  // On conflict only the bucket's own columns and excluded.* are in scope; the batch's numbers are read back from
  // the CTE by the conflicting row's key and class.
  const row = (column: 'wanted' | 'prefetch') =>
    sql<number>`(SELECT b.${sql.ref(column)} FROM key AS b WHERE b.id = rate_limit_buckets.api_key_id AND b.class = rate_limit_buckets.class)`;
  const available = sql<number>`LEAST(excluded.burst, rate_limit_buckets.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() - rate_limit_buckets.refilled_at)) * excluded.per_minute / 60)`;
  const taken = grantedTokens(available, row('wanted'), row('prefetch'));
  return query
    .insertInto('rate_limit_buckets')
    .columns([
      'organization_id',
      'api_key_id',
      'class',
      'tokens',
      'refilled_at',
      'last_allowed',
      'last_granted',
      'per_minute',
      'burst',
    ])
    .expression((eb) =>
      eb
        .selectFrom('key')
        .select([
          'key.organization_id',
          'key.id',
          'key.class',
          sql<number>`key.burst - ${first}`.as('tokens'), // as above
          sql<Date>`statement_timestamp()`.as('refilled_at'), // as above: the statement's one timestamp
          sql<boolean>`${first} >= 1`.as('last_allowed'),
          first.as('last_granted'),
          'key.per_minute',
          'key.burst', // as above
        ])
        .orderBy('key.organization_id')
        .orderBy('key.id')
        .orderBy('key.class'),
    )
    .onConflict((conflict) =>
      conflict.columns(['organization_id', 'api_key_id', 'class']).doUpdateSet({
        // as above: the refill, then the tokens taken while whole ones are there
        tokens: sql<number>`${available} - ${taken}`,
        last_allowed: sql<boolean>`${taken} >= 1`,
        last_granted: taken,
        // as above: the statement's one timestamp, never moving backwards
        refilled_at: sql<Date>`GREATEST(rate_limit_buckets.refilled_at, statement_timestamp())`,
        per_minute: (eb) => eb.ref('excluded.per_minute'),
        burst: (eb) => eb.ref('excluded.burst'),
      }),
    )
    .returning(['api_key_id', 'class', 'last_allowed', 'last_granted', 'tokens']);
}

/** A key's budget as a statement sees it: its ids. */
export interface BudgetedKey {
  organizationId: string;
  id: string;
}

/**
 * The statement for a batch of keys, given as one JSON array: what the function take_rate_tokens runs (migration
 * 20261128000500_take_rate_tokens). Postgres spent about 0.45 ms planning this statement each time it was sent
 * (its refill arithmetic is repeated in every SET column, with a subquery of the batch in each), more than it spent
 * running it; in a PL/pgSQL function its plan is kept by the connection's backend and reused (decision 0053). The
 * function's body is this statement as compiled here, and test/access/take-rate-tokens.test.ts fails when the two
 * differ: a change to takeTokenUpsert needs a migration that replaces the function.
 */
export function takeTokensStatement(batch: string) {
  return (
    statementBuilder
      // A set of rows from one JSON parameter has no builder form (jsonb_to_recordset); the parameter is bound.
      .with(
        'key',
        () =>
          sql<TokenSource>`(SELECT * FROM jsonb_to_recordset(${batch}::jsonb) AS x(organization_id text, id text, class text, per_minute float8, burst float8, wanted int, prefetch int))`,
      )
      .with('bucket', (q) => takeTokenUpsert(q as never))
      .selectFrom('bucket')
      .selectAll()
  );
}

/** One statement for a batch of keys: the function above, whose plan its backend keeps; compiled once (see prepared.ts). */
const takeBatch = preparedStatement(
  (a: { batch: string }) =>
    statementBuilder
      // A set-returning function in FROM has no builder form in Kysely; the batch is a bound parameter.
      .selectFrom(sql<TakenRow>`take_rate_tokens(${a.batch}::jsonb)`.as('taken'))
      .selectAll(),
  ['batch'],
);

/** A row of take_rate_tokens: the bucket of one key and class after the statement. */
interface TakenRow {
  api_key_id: string;
  class: string;
  last_allowed: boolean;
  last_granted: number;
  tokens: number;
}

export interface TokenAnswer {
  allowed: boolean;
  /** Tokens left for the key in this class after this request, as this process knows them. */
  remaining: number;
}

interface Waiter {
  resolve(answer: TokenAnswer): void;
  reject(error: unknown): void;
}

interface Waiting {
  key: BudgetedKey;
  rateClass: RateClass;
  limit: RateLimit;
  waiters: Waiter[];
}

/**
 * A process's side of the shared budgets. Requests that arrive while STATEMENTS_IN_FLIGHT bucket statements are
 * under way wait for the next one, which takes tokens for all of them, whatever their keys: a process's concurrent
 * requests cost one row write per key per round trip, not one statement each, and never queue on a row lock among
 * themselves. `buckets` runs with synchronous_commit off (see Database.relaxed).
 */
export class RateBudget {
  /** Tokens in hand by bucket (`key id:class`), tagged with the key's organisation. */
  private readonly held = new HeldTokens<string>();
  /** Sends what is waiting as one statement, unless STATEMENTS_IN_FLIGHT are under way (each sends again when done). */
  private readonly batches = new StatementBatches<Waiting>((batch) => this.takeFor(batch));

  constructor(private readonly buckets: Db) {}

  take(key: BudgetedKey, rateClass: RateClass, limit: RateLimit): Promise<TokenAnswer> {
    const name = `${key.id}:${rateClass}`;
    const remaining = this.held.spend(name);
    if (remaining !== undefined) return Promise.resolve({ allowed: true, remaining });
    const answer = new Promise<TokenAnswer>((resolve, reject) => {
      this.batches.entry(name, () => ({ key, rateClass, limit, waiters: [] })).waiters.push({ resolve, reject });
    });
    this.batches.send();
    return answer;
  }

  /** Drops what is held for the organisation's keys ('*': every organisation's), whose limits or access changed. */
  forgetOrganization(organizationId: string): void {
    this.held.forget((tag) => organizationId === '*' || tag === organizationId);
  }

  private async takeFor(batch: Map<string, Waiting>): Promise<void> {
    const rows = [...batch.values()].map(({ key, rateClass, limit, waiters }) => ({
      organization_id: key.organizationId,
      id: key.id,
      class: rateClass,
      per_minute: limit.perMinute,
      burst: limit.burst,
      wanted: waiters.length,
      prefetch: prefetchFor(waiters.length),
    }));
    let answers: Awaited<ReturnType<typeof takeBatch>>;
    try {
      answers = await takeBatch(this.buckets, { batch: JSON.stringify(rows) });
    } catch (error) {
      for (const entry of batch.values()) for (const waiter of entry.waiters) waiter.reject(error);
      return;
    }
    for (const row of answers) {
      const name = `${row.api_key_id}:${row.class}`;
      const entry = batch.get(name)!;
      batch.delete(name);
      const level = Number(row.tokens);
      const counts = this.held.share(name, entry.key.organizationId, entry.waiters.length, level, row.last_granted);
      entry.waiters.forEach((waiter, i) => {
        const count = counts[i];
        waiter.resolve(
          count === undefined ? { allowed: false, remaining: level } : { allowed: true, remaining: count },
        );
      });
    }
    // Every row asked for is answered by the upsert; should one not be, its requests fail rather than hang.
    for (const entry of batch.values())
      for (const waiter of entry.waiters) waiter.reject(new Error(`no bucket row came back for key ${entry.key.id}`));
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
