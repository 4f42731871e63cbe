// The budget per client address of the requests no key pays for: every operation without a key (/health,
// /openapi.json, /docs, /errors, /xml-schemas, /photos) and every failed authentication (401). A token bucket per
// address in Postgres, shared by every process like the keys' buckets (docs/decisions/0009, 0014), announced in the
// same RateLimit-* headers and enforced with the same 429 rate_limited and Retry-After.
// See docs/decisions/0027-budget-per-address-for-keyless-requests.md.
import type { Request, RequestHandler, Response } from 'express';
import ipaddr from 'ipaddr.js';
import { sql, type QueryCreator } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';
import { preparedStatement, statementBuilder } from '../database/prepared.js';
import type { Db } from '../database/transaction.js';
import { ApiError } from '../errors/api-error.js';
import { operationOf } from '../http/known-operation.js';
import {
  grantedTokens,
  HeldTokens,
  prefetchFor,
  rateDecision,
  StatementBatches,
  type RateLimit,
  type TokenAnswer,
} from './rate-limit.js';

/** Addresses whose bucket was found empty, remembered at most this many per process (see AddressBudget.refused). */
const REFUSALS_KEPT = 10_000;
/** How often a process deletes full buckets (rows untouched for longer than a bucket takes to refill). */
const SWEEP_EVERY_MS = 60_000;

/**
 * The bucket a request is counted in: the IPv4 address, or the /64 of an IPv6 address. One IPv6 subscriber is
 * routinely given a whole /64, so counting single IPv6 addresses would hand one client 2^64 budgets.
 */
export function addressBucketOf(address: string | undefined): string {
  if (!address || !ipaddr.isValid(address)) return address || 'unknown';
  const ip = ipaddr.process(address); // IPv4-mapped IPv6 (::ffff:10.0.0.1) counts as the IPv4 address
  if (ip.kind() === 'ipv4') return ip.toString();
  const parts = (ip as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
}

/** A row of the batch the statement takes tokens for: an address, its limit, how many requests wait, and the prefetch. */
interface AddressRow {
  address: string;
  per_minute: number;
  burst: number;
  wanted: number;
  /** How many more the statement may take for the address's next requests (rate-limit.ts, PREFETCH_MAX). */
  prefetch: number;
}

/**
 * Refills each address's bucket by the time since its last statement and takes the tokens the requests waiting want,
 * plus the prefetch, while whole tokens are there: the same arithmetic as the keys' upsert (rate-limit.ts
 * takeTokenUpsert, grantedTokens), prefetch included (decision 0056). Rows are written in address order, so that
 * two processes' statements never deadlock.
 */
function takeForAddressesUpsert(query: QueryCreator<DB & { waiting: AddressRow }>) {
  // The refill arithmetic has no builder form (EXTRACT(EPOCH ...), statement_timestamp(), the conflicting row's own
  // values); the fragments are constant and composed as Kysely composes sql templates.
  // A first statement finds the bucket full.
  const first = grantedTokens(sql`waiting.burst`, sql`waiting.wanted`, sql`waiting.prefetch`);
  // On conflict only the bucket's columns and excluded.* are in scope: the batch's numbers are read back by address.
  const row = (column: 'wanted' | 'prefetch' | 'per_minute' | 'burst') =>
    sql<number>`(SELECT w.${sql.ref(column)} FROM waiting AS w WHERE w.address = address_rate_buckets.address)`;
  // as above: the refill since the row's last statement, capped at the burst
  const available = sql<number>`LEAST(${row('burst')}, address_rate_buckets.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() - address_rate_buckets.refilled_at)) * ${row('per_minute')} / 60)`;
  const taken = grantedTokens(available, row('wanted'), row('prefetch'));
  return query
    .insertInto('address_rate_buckets')
    .columns(['address', 'tokens', 'refilled_at', 'last_granted'])
    .expression((eb) =>
      eb
        .selectFrom('waiting')
        .select([
          'waiting.address',
          sql<number>`waiting.burst - ${first}`.as('tokens'), // as above
          sql<Date>`statement_timestamp()`.as('refilled_at'),
          first.as('last_granted'), // as above: one timestamp
        ])
        .orderBy('waiting.address'),
    )
    .onConflict((conflict) =>
      conflict.column('address').doUpdateSet({
        tokens: sql<number>`${available} - ${taken}`, // as above: the refill, then the tokens taken
        last_granted: taken,
        // as above: the statement's one timestamp, never moving backwards
        refilled_at: sql<Date>`GREATEST(address_rate_buckets.refilled_at, statement_timestamp())`,
      }),
    )
    .returning(['address', 'tokens', 'last_granted']);
}

/**
 * The statement for a batch of addresses, given as one JSON array: what the function take_address_tokens runs
 * (migration 20261128050000_take_address_tokens). Sent as a statement, Postgres planned it afresh each time, about
 * 0.7 ms of backend CPU a call with its run; a PL/pgSQL function keeps its plan, as take_rate_tokens does for the keys
 * (decisions 0053, 0056). The function's body is this statement as compiled here, and
 * test/access/take-rate-tokens.test.ts fails when the two differ: a change to the arithmetic needs a migration that
 * replaces the function.
 */
export function takeAddressTokensStatement(batch: string) {
  return (
    statementBuilder
      // A set of rows from one JSON parameter has no builder form (jsonb_to_recordset); the parameter is bound.
      .with(
        'waiting',
        () =>
          sql<AddressRow>`(SELECT * FROM jsonb_to_recordset(${batch}::jsonb) AS x(address text, per_minute float8, burst float8, wanted int, prefetch int))`,
      )
      .with('bucket', (q) => takeForAddressesUpsert(q as never))
      .selectFrom('bucket')
      .selectAll()
  );
}

/** A row of take_address_tokens: the bucket of one address after the statement. */
interface TakenRow {
  address: string;
  tokens: number;
  last_granted: number;
}

/** One statement for a batch of addresses: the function above, whose plan its backend keeps; compiled once (see prepared.ts). */
const takeForAddresses = preparedStatement(
  (a: { batch: string }) =>
    statementBuilder
      // A set-returning function in FROM has no builder form in Kysely; the batch is a bound parameter.
      .selectFrom(sql<TakenRow>`take_address_tokens(${a.batch}::jsonb)`.as('taken'))
      .selectAll(),
  ['batch'],
);

interface Waiter {
  resolve(answer: TokenAnswer): void;
  reject(error: unknown): void;
}

/**
 * A process's side of the shared address budgets. Requests that arrive while STATEMENTS_IN_FLIGHT statements are under
 * way wait for the next one, which takes tokens for all of them, whatever their addresses, and, for an address with
 * more than one request waiting, as many again (at most PREFETCH_MAX, never more than an eighth of what its bucket
 * holds), spent from memory on its next requests within HELD_FOR_MS: the keys' rule (RateBudget), with the same bound
 * of over-admission across processes (decision 0056). A lone request takes exactly one token. An address found empty
 * is refused from memory until its bucket can hold a token again: every process only takes from a bucket, so it
 * cannot refill sooner, and a client that keeps hammering after its 429 costs no statement.
 */
export class AddressBudget {
  private readonly batches = new StatementBatches<Waiter[]>((batch) => this.takeFor(batch));
  /** Tokens in hand by address. */
  private readonly held = new HeldTokens<null>();
  private readonly refused = new Map<string, { level: number; at: number; until: number }>();
  private lastSweep = 0;

  constructor(
    private readonly buckets: Db,
    readonly limit: RateLimit,
  ) {}

  take(address: string): Promise<TokenAnswer> {
    const count = this.held.spend(address);
    if (count !== undefined) return Promise.resolve({ allowed: true, remaining: count });
    const refusal = this.refused.get(address);
    if (refusal) {
      const now = Date.now();
      if (now < refusal.until) {
        return Promise.resolve({
          allowed: false,
          remaining: Math.min(0.999, refusal.level + ((now - refusal.at) / 60_000) * this.limit.perMinute),
        });
      }
      this.refused.delete(address);
    }
    const answer = new Promise<TokenAnswer>((resolve, reject) => {
      this.batches.entry(address, () => []).push({ resolve, reject });
    });
    this.batches.send();
    this.sweep();
    return answer;
  }

  private async takeFor(batch: Map<string, Waiter[]>): Promise<void> {
    const rows: AddressRow[] = [...batch].map(([address, waiters]) => ({
      address,
      per_minute: this.limit.perMinute,
      burst: this.limit.burst,
      wanted: waiters.length,
      prefetch: prefetchFor(waiters.length),
    }));
    let answers: Awaited<ReturnType<typeof takeForAddresses>>;
    try {
      answers = await takeForAddresses(this.buckets, { batch: JSON.stringify(rows) });
    } catch (error) {
      for (const waiters of batch.values()) for (const waiter of waiters) waiter.reject(error);
      return;
    }
    for (const row of answers) {
      const waiters = batch.get(row.address)!;
      batch.delete(row.address);
      const level = Number(row.tokens);
      const counts = this.held.share(row.address, null, waiters.length, level, row.last_granted);
      waiters.forEach((waiter, i) => {
        const count = counts[i];
        waiter.resolve(
          count === undefined ? { allowed: false, remaining: level } : { allowed: true, remaining: count },
        );
      });
      if (counts.includes(undefined)) this.remember(row.address, level);
    }
    for (const [address, waiters] of batch)
      for (const waiter of waiters) waiter.reject(new Error(`no bucket row came back for address ${address}`));
  }

  private remember(address: string, level: number): void {
    if (this.refused.size >= REFUSALS_KEPT) {
      const now = Date.now();
      for (const [name, refusal] of this.refused) if (refusal.until <= now) this.refused.delete(name);
      if (this.refused.size >= REFUSALS_KEPT) return; // a flood of addresses: each asks the database, none is lost
    }
    const now = Date.now();
    this.refused.set(address, { level, at: now, until: now + ((1 - level) * 60_000) / this.limit.perMinute });
  }

  /**
   * A bucket untouched for longer than it takes to refill is full, the same as no row: deleted, at most once a minute
   * per process, so that the table holds the addresses of the last few minutes, not every address ever seen.
   */
  private sweep(): void {
    const now = Date.now();
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    const fullAfterMs = (this.limit.burst * 60_000) / this.limit.perMinute;
    void this.buckets
      .deleteFrom('address_rate_buckets')
      .where('refilled_at', '<', new Date(now - fullAfterMs - SWEEP_EVERY_MS))
      .execute()
      .catch(() => {
        /* the next sweep tries again; a full bucket left behind is harmless */
      });
  }
}

const CHARGE = 'addressBudget';

/**
 * Counts every request to an operation without a key against its address's budget (429 rate_limited when spent),
 * and leaves on res.locals what authenticate calls for a failed authentication (chargedFailure). Mounted before
 * authenticate.
 */
export function addressBudget(options: { buckets: Db; limit: RateLimit }): RequestHandler {
  const budget = new AddressBudget(options.buckets, options.limit);
  return async (req, res, next) => {
    res.locals[CHARGE] = budget;
    // The operation knownOperation found (every request under the API base has one): null scopes, no key needed.
    if (operationOf(res)?.scopes === null) {
      const refusal = await charge(budget, req, res, true);
      if (refusal) throw refusal;
    }
    next();
  };
}

/**
 * What authentication throws for a request whose key it refused (401 unauthorized or wrong_environment): the failure
 * costs its address a token, and once the address's budget is spent the answer is 429 rate_limited instead, so a
 * client guessing keys is stopped. A 401 itself carries no RateLimit-* headers (it was counted against no key; the
 * spec's Unauthorized says so); the 429 carries the address's. A valid key's requests never reach this.
 */
export async function chargedFailure(req: Request, res: Response, error: ApiError): Promise<ApiError> {
  const budget = res.locals[CHARGE] as AddressBudget | undefined;
  if (!budget) return error;
  return (await charge(budget, req, res, false)) ?? error;
}

/** Takes the address's token; sets the RateLimit-* headers (always when `announce`, else only on a refusal). */
async function charge(budget: AddressBudget, req: Request, res: Response, announce: boolean): Promise<ApiError | null> {
  const answer = await budget.take(addressBucketOf(req.ip ?? req.socket.remoteAddress));
  const decision = rateDecision(budget.limit, answer.allowed, answer.remaining);
  if (announce || !decision.allowed)
    for (const [name, value] of Object.entries(decision.headers)) res.setHeader(name, value);
  if (decision.allowed) return null;
  return new ApiError(
    'rate_limited',
    `The budget of this address for requests without a valid key (${budget.limit.perMinute} per minute, burst ${budget.limit.burst}) is spent. Retry after ${decision.retryAfterSeconds} s.`,
    undefined,
    { 'Retry-After': String(decision.retryAfterSeconds) },
  );
}
