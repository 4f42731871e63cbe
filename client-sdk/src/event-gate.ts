// The two receiver duties of the spec's delivery rules: delivery is at least once, so skip event ids already
// processed (5); order is not guaranteed, so ignore a delivery whose record is older, by updatedAt, than the copy
// held (6). The gate answers both from a store the receiver owns (in memory by default).
//
// An event id is claimed with a lease before it is processed, and marked done only once processing succeeded:
// - a claim is one atomic step of the store (two deliveries of one event arriving together: one gets it);
// - a delivery that finds another's unexpired claim hears 'in_progress', not "done", so the receiver answers
//   non-2xx and the service delivers again later (should the first processing fail, nothing is lost);
// - a claim whose holder died (or could not release it) expires after its lease and is taken by a redelivery,
//   so a crash mid-processing never turns into "already processed".
//
// The record's version is checked after the claim, with the store's atomic "remember if newer", and before
// processing: a stale event is then marked done without processing (its redeliveries are duplicates), and a newer
// one holds its updatedAt before it is processed, so an older event that comes while it is processed (or after)
// is stale and never processed after it. The version is kept even when processing then fails: the failed event's
// redelivery passes again (equal is not older) and brings the record up to date.
import type { WebhookEvent } from './webhook-event.js';

type MaybePromise<T> = T | Promise<T>;

/** What a claim found: taken now by this call, held by another delivery within its lease, or done before. */
export type EventClaim = 'claimed' | 'in_progress' | 'done';

/**
 * What `handle` did with an event:
 * - `processed`: `process` ran and succeeded; the event is done. Answer 2xx.
 * - `duplicate`: the event was done before (processed, or found stale). Answer 2xx.
 * - `in_progress`: another delivery of the event holds an unexpired claim (it is being processed). Answer
 *   non-2xx (409, or 503 with Retry-After) so that the service delivers it again: if that processing fails, the
 *   redelivery is processed.
 * - `stale`: its record is older (by updatedAt) than the copy held; not processed, marked done. Answer 2xx.
 */
export type EventOutcome = 'processed' | 'duplicate' | 'in_progress' | 'stale';

/** What the gate remembers. Every method may be async (a database table, Redis, ...). */
export interface EventGateStore {
  /**
   * Claims the event id for `leaseMs` from now, in one atomic step: `claimed` when it was unknown, or its claim's
   * lease has ended (a holder that died); `in_progress` when another claim holds it within its lease; `done` when
   * it was completed. Of two calls for one id at the same moment, at most one may get `claimed`. Each claim keeps
   * its own lease (store when it ends, not when it began). See the SDK's README for the SQL.
   */
  claimEvent(eventId: string, leaseMs: number): MaybePromise<EventClaim>;
  /** Marks a claimed event done: every later claim of it answers `done`. */
  completeEvent(eventId: string): MaybePromise<void>;
  /** Drops a claim (its processing failed) unless the event is done, so that the next delivery is processed. */
  releaseEvent(eventId: string): MaybePromise<void>;
  /**
   * In one atomic step: when `updatedAt` is not older than the record's updatedAt held (or none is held), stores
   * it and answers true; otherwise answers false and keeps the held one. Compare as instants, not as strings.
   */
  rememberIfNewer(objectId: string, updatedAt: string): MaybePromise<boolean>;
}

/** Default lease of a claim: comfortably longer than a delivery's processing (the service waits 10 s for it). */
export const DEFAULT_EVENT_LEASE_MS = 60_000;

export interface EventGateOptions {
  /**
   * How long a claim holds before another delivery may take it again (a holder that died). Default 60 000: six
   * times the 10 s a delivery has to be answered, and no later than the service's first retry (1 minute after a
   * failed attempt), so a claim left by a crash is free again by then. Processing that outlives its lease may run
   * a second time, concurrently, for a redelivery.
   */
  leaseMs?: number;
}

/** Keeps everything in process memory: it grows with every event and is lost on restart. */
export class MemoryEventGateStore implements EventGateStore {
  private readonly events = new Map<string, { state: 'claimed'; expiresAt: number } | { state: 'done' }>();
  private readonly updatedAts = new Map<string, string>();

  // Every method is synchronous, so nothing runs between a check and its write.
  claimEvent(eventId: string, leaseMs: number): EventClaim {
    const held = this.events.get(eventId);
    const now = Date.now();
    if (held?.state === 'done') return 'done';
    if (held && now <= held.expiresAt) return 'in_progress'; // taken again once its lease has ended
    this.events.set(eventId, { state: 'claimed', expiresAt: now + leaseMs });
    return 'claimed';
  }

  completeEvent(eventId: string): void {
    this.events.set(eventId, { state: 'done' });
  }

  releaseEvent(eventId: string): void {
    if (this.events.get(eventId)?.state === 'claimed') this.events.delete(eventId);
  }

  rememberIfNewer(objectId: string, updatedAt: string): boolean {
    const held = this.updatedAts.get(objectId);
    if (held !== undefined && Date.parse(updatedAt) < Date.parse(held)) return false;
    this.updatedAts.set(objectId, updatedAt);
    return true;
  }
}

export interface EventGate {
  /**
   * Claims the event and marks it done at once: true the first time an event id comes (and no other delivery of
   * it holds a claim) when its data.object is not older (by updatedAt) than the copy held; false otherwise. For
   * receivers that process synchronously after accepting and answer 2xx whatever happens: a processing that
   * fails (or a crash) after `accept` is not redone, since the redelivery is a duplicate. A receiver whose
   * processing can fail, and that answers non-2xx so that the service retries, should use `handle`.
   */
  accept(event: WebhookEvent): Promise<boolean>;
  /**
   * Claims the event (with a lease), checks its record's version, runs `process` and marks the event done; see
   * `EventOutcome` for what to answer. When `process` rejects, the claim is released and the rejection
   * propagates (answer non-2xx): the service's redelivery is processed again. Any failure of the store rejects
   * too; answer non-2xx then as well (at worst the event is processed once more after its lease).
   */
  handle(
    event: WebhookEvent,
    process: (event: WebhookEvent) => Promise<void> | void,
    options?: EventGateOptions,
  ): Promise<EventOutcome>;
}

export function createEventGate(
  store: EventGateStore = new MemoryEventGateStore(),
  options: EventGateOptions = {},
): EventGate {
  const defaultLeaseMs = checkedLease(options.leaseMs ?? DEFAULT_EVENT_LEASE_MS);

  /** Claims the event and, once claimed, records its version: 'claimed' when it is to be processed. */
  async function admit(
    event: WebhookEvent,
    leaseMs: number,
  ): Promise<'claimed' | 'duplicate' | 'in_progress' | 'stale'> {
    const claim = await store.claimEvent(event.id, leaseMs);
    if (claim === 'done') return 'duplicate';
    if (claim === 'in_progress') return 'in_progress';
    let newer: boolean;
    try {
      newer = await isNotOlder(event);
    } catch (error) {
      await release(event.id, error);
      throw error;
    }
    if (newer) return 'claimed';
    // Stale: done without processing, so its redeliveries are duplicates. Should marking it fail, the claim
    // expires and a redelivery finds it stale again.
    await store.completeEvent(event.id);
    return 'stale';
  }

  async function isNotOlder(event: WebhookEvent): Promise<boolean> {
    const { id, updatedAt } = versionOf(event);
    if (id === undefined || updatedAt === undefined) return true; // nothing to order by
    return await store.rememberIfNewer(id, updatedAt);
  }

  async function release(eventId: string, failure: unknown): Promise<void> {
    try {
      await store.releaseEvent(eventId);
    } catch (releaseFailure) {
      throw new AggregateError(
        [failure, releaseFailure],
        `Processing event ${eventId} failed, and releasing its claim failed too: its redeliveries are answered 'in_progress' until the claim's lease ends, then processed.`,
      );
    }
  }

  return {
    async accept(event) {
      // Done at once: nothing is released later, whatever happens to the processing that follows.
      const admitted = await admit(event, defaultLeaseMs);
      if (admitted !== 'claimed') return false;
      await store.completeEvent(event.id);
      return true;
    },

    async handle(event, process, handleOptions = {}) {
      const leaseMs = handleOptions.leaseMs === undefined ? defaultLeaseMs : checkedLease(handleOptions.leaseMs);
      const admitted = await admit(event, leaseMs);
      if (admitted !== 'claimed') return admitted;
      try {
        await process(event);
      } catch (error) {
        // Not processed: give the event back, so that the service's next delivery of it runs `process` again.
        await release(event.id, error);
        throw error;
      }
      try {
        await store.completeEvent(event.id);
      } catch (error) {
        // Processed but not marked done: the claim expires after its lease, and a redelivery processes it again.
        throw new Error(
          `Event ${event.id} was processed, but marking it done failed: a redelivery after the claim's lease (${leaseMs} ms) processes it again.`,
          { cause: error },
        );
      }
      return 'processed';
    },
  };
}

function checkedLease(leaseMs: number): number {
  if (!(Number.isFinite(leaseMs) && leaseMs > 0))
    throw new TypeError(`leaseMs must be a finite number of milliseconds > 0 (got ${leaseMs}).`);
  return leaseMs;
}

function versionOf(event: WebhookEvent): { id: string | undefined; updatedAt: string | undefined } {
  const object = event.data.object as { id?: unknown; updatedAt?: unknown };
  const id = typeof object.id === 'string' ? object.id : undefined;
  const updatedAt =
    typeof object.updatedAt === 'string' && !Number.isNaN(Date.parse(object.updatedAt)) ? object.updatedAt : undefined;
  return { id, updatedAt };
}
