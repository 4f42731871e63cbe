// Ids in the examples are placeholders (`cus_01JD4R7Q8S6T9V3X5Z7B9D1F3H`): no deployment has them. Each one is
// bound, the first time a request needs it, to a live record of the same kind (the same prefix): first the
// records this run wrote (ids its successful writes returned or referred to), in that order, then, for a read
// only, the first page of that resource's list. A write (any method but GET, HEAD, OPTIONS, TRACE) is bound only
// to records this run wrote, so that it never changes a record that was there before (a sandbox's demo data):
// when its own create failed, the write is not sent. Distinct placeholders never share a record, and a
// placeholder keeps its record for the whole run, so that "the customer of the journey plan" is the same one in
// every request.
const PLACEHOLDER = /^([a-z][a-z0-9]{1,9})_[0-9A-HJKMNP-TV-Z]{26}$/;

/** The prefix of an id placeholder (`cus`), or undefined for any other value. */
export function prefixOf(value: unknown): string | undefined {
  return typeof value === 'string' ? PLACEHOLDER.exec(value)?.[1] : undefined;
}

/** Every placeholder in a value, at any depth, in order of first appearance. */
export function placeholdersIn(value: unknown): string[] {
  const found = new Set<string>();
  mapStrings(value, (s) => {
    if (prefixOf(s)) found.add(s);
    return s;
  });
  return [...found];
}

/** A copy of the value with each string replaced by `replace(string)`. */
export function mapStrings<T>(value: T, replace: (s: string) => string): T {
  if (typeof value === 'string') return replace(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => mapStrings(item, replace)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, replace)])) as T;
  }
  return value;
}

/**
 * The ids a response body carries: its own `id`, the `id` of each member of `data`, or, for a body that wraps the
 * records it wrote under a name (`{ payments: [...] }`), the `id` of each member of its arrays; and a batch's
 * `batchId` (a DMS file's batch is read back by it).
 */
export function idsIn(body: unknown): string[] {
  if (body === null || typeof body !== 'object') return [];
  const record = body as Record<string, unknown>;
  if (typeof record.batchId === 'string' && /^[a-z][a-z0-9]{1,9}_/.test(record.batchId))
    return [record.batchId, ...idsIn({ ...record, batchId: undefined })];
  const members = Array.isArray(record.data)
    ? record.data
    : 'id' in record
      ? [record]
      : Object.values(record)
          .filter((value): value is unknown[] => Array.isArray(value))
          .flat();
  return members.flatMap((member) => {
    const id = (member as Record<string, unknown> | null)?.id;
    return typeof id === 'string' && /^[a-z][a-z0-9]{1,9}_/.test(id) ? [id] : [];
  });
}

export interface Bound<T> {
  value: T;
  /** Placeholders that got no record (a read sends them as they are; a write is not sent). */
  unbound: string[];
}

export class LiveRecords {
  /** Ids of records this run wrote, by prefix, in the order the writes returned or referenced them. */
  private readonly written = new Map<string, string[]>();
  private readonly bindings = new Map<string, string>();
  private readonly listed = new Map<string, Promise<string[]>>();

  /** `listIds(prefix)`: the ids of the first page of that resource's list (empty when there is no list). */
  constructor(private readonly listIds: (prefix: string) => Promise<string[]>) {}

  /**
   * Remembers the records a successful write touched: the ids its answer returned, and the ids it referred to
   * in its path or body (`referenced`, live ids).
   */
  learn(body: unknown, referenced: string[] = []): void {
    for (const id of [...idsIn(body), ...referenced]) {
      if (!/^[a-z][a-z0-9]{1,9}_/.test(id)) continue;
      const prefix = id.slice(0, id.indexOf('_'));
      const ids = this.written.get(prefix) ?? [];
      if (!ids.includes(id)) ids.push(id);
      this.written.set(prefix, ids);
    }
  }

  /** Whether this run wrote the record with this id. */
  wrote(id: string): boolean {
    return this.written.get(id.slice(0, id.indexOf('_')))?.includes(id) ?? false;
  }

  /** The live id a placeholder is bound to, if it is. */
  boundTo(placeholder: string): string | undefined {
    return this.bindings.get(placeholder);
  }

  /** The records this run wrote (created, or changed by a write that named them), by kind, in order. */
  writtenByKind(): [string, string[]][] {
    return [...this.written].map(([prefix, ids]) => [prefix, [...ids]]);
  }

  /** How many records of this kind this run wrote. */
  writtenCount(prefix: string): number {
    return this.written.get(prefix)?.length ?? 0;
  }

  /**
   * The live id that stands for this placeholder, binding it now if it is new: to a record this run wrote that
   * no other placeholder stands for, else (only when `ownOnly` is false) to the first such record of the list.
   * Undefined when there is none; with `ownOnly`, also when the placeholder is already bound to a record this
   * run did not write (a read bound it while this run had none of that kind).
   */
  async liveIdFor(placeholder: string, ownOnly = false): Promise<string | undefined> {
    const bound = this.bindings.get(placeholder);
    if (bound) return !ownOnly || this.wrote(bound) ? bound : undefined;
    const prefix = prefixOf(placeholder)!;
    const taken = new Set([...this.bindings.values()]);
    let chosen = (this.written.get(prefix) ?? []).find((id) => !taken.has(id));
    if (!chosen && !ownOnly) {
      if (!this.listed.has(prefix))
        this.listed.set(
          prefix,
          this.listIds(prefix).catch(() => []),
        );
      chosen = (await this.listed.get(prefix)!).find((id) => !taken.has(id));
    }
    if (chosen) this.bindings.set(placeholder, chosen);
    return chosen;
  }

  /**
   * The value with every placeholder replaced by its live id. `ownOnly` (for a write): only records this run
   * wrote, so that a write never changes a record that was there before the run.
   */
  async bind<T>(value: T, ownOnly = false): Promise<Bound<T>> {
    const unbound: string[] = [];
    const live = new Map<string, string>();
    for (const placeholder of placeholdersIn(value)) {
      const id = await this.liveIdFor(placeholder, ownOnly);
      if (id) live.set(placeholder, id);
      else unbound.push(placeholder);
    }
    return { value: mapStrings(value, (s) => live.get(s) ?? s), unbound };
  }
}
