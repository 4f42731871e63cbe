// One small seeded generator for all the sandbox's synthetic data, so the sandbox is the same on every machine.

/** mulberry32: a small seeded generator. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Picks one of `items` with `random`. */
export function picker(random: () => number): <T>(items: readonly T[]) => T {
  return (items) => items[Math.floor(random() * items.length)]!;
}

/** The seed of the sandbox distributor; each kind of data draws from its own stream derived from it. */
export const SANDBOX_SEED = 20261122;
