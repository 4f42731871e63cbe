// Ids in the examples are placeholders (`cus_01JD4R7Q8S6T9V3X5Z7B9D1F3H`): no deployment has them. Each one is
// bound, the first time a request needs it, to a live record of the same kind (the same prefix): first the
// records this run's own writes returned, in the order they returned them, then the first page of that
// resource's list. Distinct placeholders get distinct records while there are enough, and a placeholder keeps its
// record for the whole run, so that "the customer of the journey plan" is the same one in every request.
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

/** The ids a response body carries: its own `id`, or the `id` of each member of `data`. */
export function idsIn(body: unknown): string[] {
  if (body === null || typeof body !== 'object') return [];
  const record = body as Record<string, unknown>;
  const members = Array.isArray(record.data) ? record.data : [record];
  return members.flatMap((member) => {
    const id = (member as Record<string, unknown> | null)?.id;
    return typeof id === 'string' && /^[a-z][a-z0-9]{1,9}_/.test(id) ? [id] : [];
  });
}

export interface Bound<T> {
  value: T;
  /** Placeholders for which the deployment has no record of that kind (sent as they are). */
  unbound: string[];
}

export class LiveRecords {
  private readonly returned = new Map<string, string[]>();
  private readonly bindings = new Map<string, string>();
  private readonly listed = new Map<string, Promise<string[]>>();

  /** `listIds(prefix)`: the ids of the first page of that resource's list (empty when there is no list). */
  constructor(private readonly listIds: (prefix: string) => Promise<string[]>) {}

  /** Remembers the records a successful write returned. */
  learn(body: unknown): void {
    for (const id of idsIn(body)) {
      const prefix = id.slice(0, id.indexOf('_'));
      const ids = this.returned.get(prefix) ?? [];
      if (!ids.includes(id)) ids.push(id);
      this.returned.set(prefix, ids);
    }
  }

  /** The live id that stands for this placeholder, binding it now if it is new. */
  async liveIdFor(placeholder: string): Promise<string | undefined> {
    const bound = this.bindings.get(placeholder);
    if (bound) return bound;
    const prefix = prefixOf(placeholder)!;
    const taken = new Set([...this.bindings.values()]);
    const own = this.returned.get(prefix) ?? [];
    let chosen = own.find((id) => !taken.has(id));
    if (!chosen) {
      if (!this.listed.has(prefix)) this.listed.set(prefix, this.listIds(prefix).catch(() => []));
      const listed = await this.listed.get(prefix)!;
      // With fewer records than placeholders, two placeholders share one rather than none being sent.
      chosen = listed.find((id) => !taken.has(id)) ?? own[0] ?? listed[0];
    }
    if (chosen) this.bindings.set(placeholder, chosen);
    return chosen;
  }

  /** The value with every placeholder replaced by its live id. */
  async bind<T>(value: T): Promise<Bound<T>> {
    const unbound: string[] = [];
    const live = new Map<string, string>();
    for (const placeholder of placeholdersIn(value)) {
      const id = await this.liveIdFor(placeholder);
      if (id) live.set(placeholder, id);
      else unbound.push(placeholder);
    }
    return { value: mapStrings(value, (s) => live.get(s) ?? s), unbound };
  }
}
