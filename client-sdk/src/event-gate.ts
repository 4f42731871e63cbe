// The two receiver duties of the spec's delivery rules: delivery is at least once, so skip event ids already
// processed (5); order is not guaranteed, so ignore a delivery whose record is older, by updatedAt, than the copy
// held (6). The gate answers both from a store the receiver owns (in memory by default).
import type { WebhookEvent } from './webhook-event.js';

type MaybePromise<T> = T | Promise<T>;

/** What the gate remembers. Every method may be async (a database table, Redis, ...). */
export interface EventGateStore {
  hasEvent(eventId: string): MaybePromise<boolean>;
  rememberEvent(eventId: string): MaybePromise<void>;
  /** The updatedAt of the copy held of the record, if any. */
  heldUpdatedAt(objectId: string): MaybePromise<string | null | undefined>;
  rememberUpdatedAt(objectId: string, updatedAt: string): MaybePromise<void>;
}

/** Keeps everything in process memory: it grows with every event and is lost on restart. */
export class MemoryEventGateStore implements EventGateStore {
  private readonly events = new Set<string>();
  private readonly updatedAts = new Map<string, string>();

  hasEvent(eventId: string): boolean {
    return this.events.has(eventId);
  }

  rememberEvent(eventId: string): void {
    this.events.add(eventId);
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
   * service retries) should use `handle`, which remembers only after success.
   */
  accept(event: WebhookEvent): Promise<boolean>;
  /**
   * Runs `process` for an event the gate would accept and remembers it only when `process` resolves; resolves
   * with whether it ran. A rejection propagates, and the retried delivery is let through again.
   */
  handle(event: WebhookEvent, process: (event: WebhookEvent) => Promise<void> | void): Promise<boolean>;
}

export function createEventGate(store: EventGateStore = new MemoryEventGateStore()): EventGate {
  async function verdict(event: WebhookEvent): Promise<'repeated' | 'older' | 'new'> {
    if (await store.hasEvent(event.id)) return 'repeated';
    const { id, updatedAt } = versionOf(event);
    if (id === undefined || updatedAt === undefined) return 'new'; // nothing to order by
    const held = await store.heldUpdatedAt(id);
    return held && Date.parse(updatedAt) < Date.parse(held) ? 'older' : 'new';
  }

  async function remember(event: WebhookEvent): Promise<void> {
    await store.rememberEvent(event.id);
    const { id, updatedAt } = versionOf(event);
    if (id === undefined || updatedAt === undefined) return;
    const held = await store.heldUpdatedAt(id);
    if (!held || Date.parse(updatedAt) > Date.parse(held)) await store.rememberUpdatedAt(id, updatedAt);
  }

  /** True when the event is to be processed; an older copy counts as processed (a redelivery skips the lookup). */
  async function admit(event: WebhookEvent): Promise<boolean> {
    const seen = await verdict(event);
    if (seen === 'older') await store.rememberEvent(event.id);
    return seen === 'new';
  }

  return {
    async accept(event) {
      if (!(await admit(event))) return false;
      await remember(event);
      return true;
    },
    async handle(event, process) {
      if (!(await admit(event))) return false;
      await process(event);
      await remember(event);
      return true;
    },
  };
}

function versionOf(event: WebhookEvent): { id: string | undefined; updatedAt: string | undefined } {
  const object = event.data.object as { id?: unknown; updatedAt?: unknown };
  const id = typeof object.id === 'string' ? object.id : undefined;
  const updatedAt = typeof object.updatedAt === 'string' && !Number.isNaN(Date.parse(object.updatedAt)) ? object.updatedAt : undefined;
  return { id, updatedAt };
}
