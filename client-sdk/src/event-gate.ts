// The two receiver duties of the spec's delivery rules: delivery is at least once, so skip event ids already
// processed (5); order is not guaranteed, so ignore a delivery whose record is older, by updatedAt, than the copy
// held (6). The gate answers both from a store the receiver owns (in memory by default).
//
// An event id is claimed (insert-if-absent) before anything else, in one step of the store: checking and then
// recording in two steps would let two deliveries of one event that arrive together both through.
import type { WebhookEvent } from './webhook-event.js';

type MaybePromise<T> = T | Promise<T>;

/** What the gate remembers. Every method may be async (a database table, Redis, ...). */
export interface EventGateStore {
  /**
   * Records the event id unless it is already recorded, in one atomic step, and says whether this call recorded
   * it. Of two calls for one id, even at the same moment, exactly one may get true. In SQL:
   * `INSERT INTO processed_events (id) VALUES ($1) ON CONFLICT DO NOTHING` and true when a row was inserted;
   * in Redis: `SET key 1 NX`.
   */
  claimEvent(eventId: string): MaybePromise<boolean>;
  /** Forgets a claimed event id (its processing failed), so that the next delivery of it is processed. */
  releaseEvent(eventId: string): MaybePromise<void>;
  /** The updatedAt of the copy held of the record, if any. */
  heldUpdatedAt(objectId: string): MaybePromise<string | null | undefined>;
  rememberUpdatedAt(objectId: string, updatedAt: string): MaybePromise<void>;
}

/** Keeps everything in process memory: it grows with every event and is lost on restart. */
export class MemoryEventGateStore implements EventGateStore {
  private readonly events = new Set<string>();
  private readonly updatedAts = new Map<string, string>();

  claimEvent(eventId: string): boolean {
    // Synchronous, so nothing runs between the check and the add.
    if (this.events.has(eventId)) return false;
    this.events.add(eventId);
    return true;
  }

  releaseEvent(eventId: string): void {
    this.events.delete(eventId);
  }

  heldUpdatedAt(objectId: string): string | undefined {
    return this.updatedAts.get(objectId);
  }

  rememberUpdatedAt(objectId: string, updatedAt: string): void {
    this.updatedAts.set(objectId, updatedAt);
  }
}

export interface EventGate {
  /**
   * True the first time an event id comes and its data.object is not older (by updatedAt) than the copy held;
   * the event is then remembered at once. A receiver whose processing can fail (and answer non-2xx so that the
   * service retries) should use `handle`, which forgets the event again when processing fails.
   */
  accept(event: WebhookEvent): Promise<boolean>;
  /**
   * Runs `process` for an event the gate would accept, at most once at a time per event id (a delivery that comes
   * while another is processed resolves false), and resolves with whether it ran. When `process` rejects, the
   * claim on the event is released and the rejection propagates, so the retried delivery is processed again.
   */
  handle(event: WebhookEvent, process: (event: WebhookEvent) => Promise<void> | void): Promise<boolean>;
}

export function createEventGate(store: EventGateStore = new MemoryEventGateStore()): EventGate {
  async function isOlder(event: WebhookEvent): Promise<boolean> {
    const { id, updatedAt } = versionOf(event);
    if (id === undefined || updatedAt === undefined) return false; // nothing to order by
    const held = await store.heldUpdatedAt(id);
    return held ? Date.parse(updatedAt) < Date.parse(held) : false;
  }

  async function rememberVersion(event: WebhookEvent): Promise<void> {
    const { id, updatedAt } = versionOf(event);
    if (id === undefined || updatedAt === undefined) return;
    const held = await store.heldUpdatedAt(id);
    if (!held || Date.parse(updatedAt) > Date.parse(held)) await store.rememberUpdatedAt(id, updatedAt);
  }

  async function handle(event: WebhookEvent, process: (event: WebhookEvent) => Promise<void> | void): Promise<boolean> {
    if (!(await store.claimEvent(event.id))) return false;
    let processed = false;
    try {
      // An older copy keeps its claim: it counts as processed, so a redelivery skips the lookup.
      if (await isOlder(event)) return false;
      await process(event);
      processed = true;
      await rememberVersion(event);
      return true;
    } catch (error) {
      // Not processed: give the event back, so that the service's next delivery of it runs `process` again.
      if (!processed) await release(event.id, error);
      throw error;
    }
  }

  async function release(eventId: string, failure: unknown): Promise<void> {
    try {
      await store.releaseEvent(eventId);
    } catch (releaseFailure) {
      // The event stays claimed and its redeliveries would be dropped: say so rather than lose it quietly.
      throw new AggregateError([failure, releaseFailure], `Processing event ${eventId} failed, and releasing its claim failed too: its redeliveries will be skipped until the store forgets it.`);
    }
  }

  return {
    // Accepting is handling with nothing to do: the event is claimed (and its version remembered) at once.
    accept: (event) => handle(event, () => {}),
    handle,
  };
}

function versionOf(event: WebhookEvent): { id: string | undefined; updatedAt: string | undefined } {
  const object = event.data.object as { id?: unknown; updatedAt?: unknown };
  const id = typeof object.id === 'string' ? object.id : undefined;
  const updatedAt = typeof object.updatedAt === 'string' && !Number.isNaN(Date.parse(object.updatedAt)) ? object.updatedAt : undefined;
  return { id, updatedAt };
}
