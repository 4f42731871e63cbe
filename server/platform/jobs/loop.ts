// A background loop of a worker (the webhook fan-out, the postings' and the DMS's dispatch): a pass when woken (a
// NOTIFY that work is due, see wake.ts), the next at once (after busyDelayMs) while a pass found work, and otherwise
// a pass when the work it knows of falls due, or after the safety-net interval (pollIntervalMs) at the latest: an
// idle loop runs no statement between wake-ups but that rare one. A failed pass is reported and the loop goes on.
// stop() waits for the pass under way. A worker's loops share one safety net (startLoopSafetyNet, decision 0054): one
// statement reads when each one's next work falls due, and their own interval is only a backstop.
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../database/transaction.js';

export interface BackgroundLoop {
  /** Runs a pass now (or right after the one under way): new work is due. */
  wake(): void;
  /** Runs a pass at `at` at the latest (now if it is past): the safety net read when the loop's next work falls due. */
  wakeAt?(at: Date): void;
  stop(): Promise<void>;
}

/** What a pass found: work (the next pass comes at once), or none, and then perhaps when the next work is due. */
export type PassResult = boolean | { worked: false; nextDueAt: Date | null };

export function startLoop(options: {
  /** One pass; true when it found work (the next pass comes at once). */
  pass: () => Promise<PassResult>;
  onError: (error: unknown) => void;
  /** The safety net: an idle loop makes a pass at least this often (it may have missed a notification). */
  pollIntervalMs: number;
  busyDelayMs?: number;
}): BackgroundLoop {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let timerAt = Infinity; // when the timer's pass comes (ms since the epoch)
  let running: Promise<void> | null = null;
  let wokenWhileRunning = false;
  const schedule = (delayMs: number): void => {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timerAt = Date.now() + delayMs;
    timer = setTimeout(() => {
      timer = null;
      timerAt = Infinity;
      wokenWhileRunning = false;
      running = options
        .pass()
        .catch((error: unknown) => {
          if (!stopped) options.onError(error);
          return false as PassResult;
        })
        .then((result) => {
          running = null;
          if (result === true || wokenWhileRunning) return schedule(result === true ? (options.busyDelayMs ?? 20) : 0);
          const dueInMs =
            result === false || result.nextDueAt === null
              ? Infinity
              : Math.max(0, result.nextDueAt.getTime() - Date.now());
          // A few milliseconds past the due time: the database's clock decides, and it may be a little behind ours.
          schedule(Math.min(options.pollIntervalMs, dueInMs === Infinity ? Infinity : dueInMs + 5));
        });
    }, delayMs);
  };
  schedule(0);
  return {
    wake() {
      if (stopped) return;
      if (running) wokenWhileRunning = true;
      else schedule(0);
    },
    wakeAt(at) {
      // A pass under way reads its own next due time when it ends; a timer due sooner stays.
      if (stopped || running) return;
      const delayMs = Math.max(0, at.getTime() - Date.now());
      if (Date.now() + delayMs < timerAt) schedule(delayMs === 0 ? 0 : delayMs + 5);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}

/** The safety-net interval of an idle loop when its caller names none (WORK_POLL_SECONDS's default). */
export const DEFAULT_POLL_INTERVAL_MS = 30_000;

/**
 * A dispatch loop (due rows -> jobs): `dispatch` sends the due jobs and says how many; while it finds some it runs
 * again at once, and `wake` tells this process's idle workers to fetch them now. When it finds none, `nextDueAt`
 * (if given) says when the next row falls due, and the loop sleeps until then (or until woken, or the safety net).
 */
export function startDispatchLoop(options: {
  dispatch: () => Promise<number>;
  nextDueAt?: () => Promise<Date | null>;
  onError: (error: unknown) => void;
  wake?: (count: number) => void;
  pollIntervalMs?: number;
}): BackgroundLoop {
  return startLoop({
    pollIntervalMs: options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
    async pass() {
      const count = await options.dispatch();
      if (count > 0) {
        options.wake?.(count);
        return true;
      }
      return { worked: false, nextDueAt: options.nextDueAt ? await options.nextDueAt() : null };
    },
    onError: options.onError,
  });
}

/**
 * The safety net of a worker's loops in one statement (decision 0054). Each loop is watched with the SQL of when its
 * next work falls due (null: none; now or past: due now). Every `intervalMs` one SELECT reads them all, and each loop
 * with work is woken, or told when its work falls due: a lost notification, or work written for later by another
 * process, costs the worker one statement a safety-net interval instead of a pass of each loop.
 */
export interface LoopSafetyNet {
  watch(loop: BackgroundLoop, nextDueAt: RawBuilder<Date | null>): void;
  stop(): Promise<void>;
}

export function startLoopSafetyNet(options: {
  db: Db;
  intervalMs: number;
  onError: (error: unknown) => void;
}): LoopSafetyNet {
  const watched: { loop: BackgroundLoop; nextDueAt: RawBuilder<Date | null> }[] = [];
  const loop = startLoop({
    pollIntervalMs: options.intervalMs,
    async pass() {
      if (watched.length === 0) return false;
      // One SELECT without a FROM: a column per watched loop, each the loop's own scalar subquery (raw SQL only for
      // the parentheses a subquery needs as a column).
      const row: Record<string, Date | string | null> =
        (await options.db
          .selectNoFrom(watched.map(({ nextDueAt }, i) => sql<Date | null>`(${nextDueAt})`.as(`due_${i}`)))
          .executeTakeFirst()) ?? {};
      watched.forEach(({ loop }, i) => {
        const at = row[`due_${i}`];
        if (at !== null && at !== undefined) (loop.wakeAt ?? (() => loop.wake()))(new Date(at));
      });
      return false;
    },
    onError: options.onError,
  });
  return {
    watch: (watchedLoop, nextDueAt) => {
      watched.push({ loop: watchedLoop, nextDueAt });
    },
    stop: () => loop.stop(),
  };
}

/** Several loops as one: woken and stopped together. */
export function loopsTogether(loops: BackgroundLoop[]): BackgroundLoop {
  return {
    wake: () => {
      for (const loop of loops) loop.wake();
    },
    stop: async () => {
      await Promise.all(loops.map((loop) => loop.stop()));
    },
  };
}
