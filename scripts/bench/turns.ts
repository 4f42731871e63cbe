// The closed loops of the bench's extra parts (stock.ts, money.ts): each target's operation run by N concurrent
// loops for a warm-up, then for a few short rounds in which the targets take turns, so that a slow moment of the
// machine falls on all of them alike. A target's figure is the median of its rounds; its noise the spread of them.
import type pg from 'pg';

export interface RoundOptions {
  /** Seconds of one round of a target. */
  roundSeconds: number;
  /** Seconds of warm-up of each target before its first round. */
  warmup: number;
  rounds: number;
}

/** One target's rounds: per second each, failures over all of them, and how long each success of the rounds took (ms). */
export interface Rounds {
  perSecond: number[];
  failed: number;
  latencies: number[];
}

export interface Hooks<T> {
  before?: (target: T) => Promise<void>;
  after?: (target: T, ok: number) => Promise<void>;
}

/** Empty rounds of each target. */
export function noRounds<T extends string>(targets: readonly T[]): Record<T, Rounds> {
  return Object.fromEntries(
    targets.map((t) => [t, { perSecond: [] as number[], failed: 0, latencies: [] as number[] }]),
  ) as Record<T, Rounds>;
}

/**
 * Each target's operation run by `workers` concurrent loops for a warm-up, then for a round per round, the targets
 * taking turns. `part` names the bench part in the first error of a period ("stock bench, raw pg: ...").
 */
export async function takeTurns<T extends string>(
  options: RoundOptions,
  workers: number,
  operations: Record<T, () => Promise<unknown>>,
  hooks: Hooks<T> = {},
  part = 'bench',
): Promise<Record<T, Rounds>> {
  const targets = Object.keys(operations) as T[];
  const result = noRounds(targets);
  const period = async (target: T, seconds: number) => {
    await hooks.before?.(target);
    const outcome = await forSeconds(workers, seconds, operations[target], `${part}, ${target}`);
    await hooks.after?.(target, outcome.ok);
    result[target].failed += outcome.failed;
    return outcome;
  };
  if (options.warmup > 0) for (const target of targets) await period(target, options.warmup);
  for (let round = 0; round < options.rounds; round += 1) {
    for (const target of targets) {
      const outcome = await period(target, options.roundSeconds);
      result[target].perSecond.push(outcome.perSecond);
      for (const ms of outcome.latencies) result[target].latencies.push(ms);
    }
  }
  return result;
}

/** `workers` loops running `operation` one after the other until `seconds` have passed; per second = successes / time until the last ends. */
export async function forSeconds(
  workers: number,
  seconds: number,
  operation: () => Promise<unknown>,
  name: string,
): Promise<{ ok: number; failed: number; perSecond: number; latencies: number[] }> {
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let ok = 0;
  let failed = 0;
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (performance.now() < deadline) {
        const begun = performance.now();
        try {
          await operation();
          latencies.push(performance.now() - begun);
          ok += 1;
        } catch (error) {
          if (failed === 0) process.stderr.write(`${name}: ${(error as Error).message}\n`);
          failed += 1;
        }
      }
    }),
  );
  return { ok, failed, perSecond: ok / ((performance.now() - started) / 1000), latencies };
}

/** BEGIN, the work, COMMIT on one connection of the pool (ROLLBACK when it throws). */
export async function rawInTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

export const median = (list: number[]) =>
  list.length === 0 ? NaN : [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;
/** (max - min) / median of the rounds. */
export const noise = (list: number[]) =>
  list.length < 2 ? NaN : (Math.max(...list) - Math.min(...list)) / median(list);
export const percent = (fraction: number) => (Number.isNaN(fraction) ? '-' : `${(fraction * 100).toFixed(0)}%`);
/** The ratio of the two targets' medians, or why it means nothing. */
export const ratio = (a: Rounds, b: Rounds) =>
  a.failed + b.failed > 0
    ? `invalid (${a.failed + b.failed} failed)`
    : (median(a.perSecond) / median(b.perSecond)).toFixed(2);
export const figure = (r: Rounds) => `${median(r.perSecond).toFixed(0)}${r.failed > 0 ? ` (${r.failed} failed)` : ''}`;

/** The q-quantile (0.5, 0.99) of the latencies in ms, nearest rank; '-' when there are none. */
export function quantile(latencies: number[], q: number): string {
  if (latencies.length === 0) return '-';
  const sorted = Float64Array.from(latencies).sort();
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!.toFixed(1);
}
