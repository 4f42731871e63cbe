// A background loop of a worker (the webhook fan-out, the postings' dispatch): one pass every pollIntervalMs, the
// next at once (after busyDelayMs) while a pass found work; a failed pass is reported and the loop goes on. stop()
// waits for the pass under way.
export interface BackgroundLoop {
  stop(): Promise<void>;
}

export function startLoop(options: {
  /** One pass; true when it found work (the next pass comes at once). */
  pass: () => Promise<boolean>;
  onError: (error: unknown) => void;
  pollIntervalMs: number;
  busyDelayMs?: number;
}): BackgroundLoop {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  const schedule = (delayMs: number): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = null;
      running = options.pass()
        .catch((error: unknown) => {
          if (!stopped) options.onError(error);
          return false;
        })
        .then((worked) => {
          running = null;
          schedule(worked ? options.busyDelayMs ?? 20 : options.pollIntervalMs);
        });
    }, delayMs);
  };
  schedule(0);
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}

/**
 * A dispatch loop (due rows -> jobs): `dispatch` sends the due jobs and says how many; while it finds some it runs
 * again at once, and `wake` tells this process's idle workers to fetch them now.
 */
export function startDispatchLoop(options: { dispatch: () => Promise<number>; onError: (error: unknown) => void; wake?: (count: number) => void; pollIntervalMs?: number }): BackgroundLoop {
  return startLoop({
    pollIntervalMs: options.pollIntervalMs ?? 250,
    async pass() {
      const count = await options.dispatch();
      if (count > 0) options.wake?.(count);
      return count > 0;
    },
    onError: options.onError,
  });
}
