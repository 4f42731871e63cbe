// The keys a process has authenticated, kept in memory so that a request with a known key costs no database read.
// A cached key is only as good as the news of its changes, so the cache works only while its process hears them:
// every change to a key or its organisation is NOTIFYed on commit by a trigger (migration
// 20261124095308_rate_limit_batches_and_access_notifications), the service LISTENs (database/notifications.ts),
// and each notification drops the organisation's entries. Without a working LISTEN the cache holds nothing and
// every request reads its key, as before. Changes made through this process's own access functions
// (api-keys.ts, organizations.ts) drop the entries at once, before the notification arrives.
//
// A read that started before a change and ends after its notification must not put the old row back: a
// generation counter, moved by every notification and every loss of the LISTEN, tells the read that it is stale.

/** What a request needs of its key and organisation: read once, then served from memory. */
export interface KnownKey<Facts> {
  organizationId: string;
  secretHash: string;
  revokedAt: Date | null;
  expiresAt: Date | null;
  /** What authentication builds from the row once (the caller context, its actor). */
  facts: Facts;
}

const MAX_ENTRIES = 10_000;

/** The channel the trigger notifies (payload: the organisation's id, or '*'). */
export const ACCESS_CHANGED_CHANNEL = 'access_changed';

/** Every cache of this process: a change made here reaches them all at once. */
const caches = new Set<KeyCache<unknown>>();

/** Drops every cached key of the organisation ('*': of all) in this process; the access functions call it. */
export function accessChanged(organizationId: string): void {
  for (const cache of caches) cache.organizationChanged(organizationId);
}

export class KeyCache<Facts> {
  private readonly entries = new Map<string, KnownKey<Facts>>();
  private generation = 0;
  private listening = false;
  private readonly changeListeners: ((organizationId: string) => void)[] = [];

  constructor() {
    caches.add(this as KeyCache<unknown>);
  }

  /**
   * The key with this prefix and secret hash, usable now (not revoked, not expired), or undefined. A cached one
   * when the cache is working; otherwise `read` (the database), whose answer is kept when nothing changed meanwhile.
   */
  async find(
    prefix: string,
    secretHash: string,
    read: () => Promise<KnownKey<Facts> | undefined>,
  ): Promise<KnownKey<Facts> | undefined> {
    const cached = this.listening ? this.entries.get(prefix) : undefined;
    if (cached && cached.secretHash === secretHash) {
      if (usable(cached, Date.now())) return cached;
      this.entries.delete(prefix); // revoked or expired by the clock since it was read
      return undefined;
    }
    const generation = this.generation;
    const found = await read();
    if (found && this.listening && generation === this.generation) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!); // the oldest
      this.entries.set(prefix, found);
    }
    return found && usable(found, Date.now()) ? found : undefined;
  }

  /** Also told of every change (the rate budget drops the tokens it holds for the organisation). */
  onChange(listener: (organizationId: string) => void): void {
    this.changeListeners.push(listener);
  }

  /** The LISTEN is in place: entries read from now on can be trusted until their notification. */
  listeningStarted(): void {
    this.generation += 1; // a read that began before the LISTEN was in place may have missed a change: not kept
    this.listening = true;
  }

  /** The LISTEN is gone: changes may pass unheard, so nothing is served from memory until it is back. */
  listeningLost(): void {
    this.listening = false;
    this.organizationChanged('*');
  }

  organizationChanged(organizationId: string): void {
    this.generation += 1;
    if (organizationId === '*') this.entries.clear();
    else
      for (const [prefix, entry] of this.entries)
        if (entry.organizationId === organizationId) this.entries.delete(prefix);
    for (const listener of this.changeListeners) listener(organizationId);
  }

  close(): void {
    this.listening = false;
    this.entries.clear();
    caches.delete(this as KeyCache<unknown>);
  }
}

/** Neither revoked nor expired at `now` (a key can be revoked or expire at a time still to come: rotation). */
function usable(key: { revokedAt: Date | null; expiresAt: Date | null }, now: number): boolean {
  return (
    (key.revokedAt === null || key.revokedAt.getTime() > now) &&
    (key.expiresAt === null || key.expiresAt.getTime() > now)
  );
}
