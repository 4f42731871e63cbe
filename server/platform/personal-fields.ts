// Personal fields, decided in one place: the spec. A schema property marked `x-personal: true` holds personal data
// (an outlet's phone, tax ID, GPS position and contact, a salesperson's phone, a trip's GPS fixes, a photo URL).
// The spec is walked once, at start: each schema becomes a redaction (which properties to drop here, and where to
// look deeper), resolved through `$ref` and unioned over allOf/oneOf/anyOf, so a body is redacted by where a field
// is, not by its name (a product's `name` stays, a contact's goes). The API log, idempotent replays to keys without
// customers:pii and webhook objects all redact through this module. See
// docs/decisions/0025-personal-fields-marked-in-the-spec.md.
import { resolveRef } from './openapi-ref.js';
import type { Operation } from './operations.js';
import type { ApiDocument } from './spec.js';

type Json = Record<string, any>;

/** The spec's extension that marks a schema property as personal. */
export const PERSONAL_MARK = 'x-personal';

/**
 * Where personal fields sit in a value of one schema. The graph follows the schema (a recursive schema gives a
 * cycle, so nothing is copied: a place two branches describe keeps both redactions); a oneOf's branches are unioned,
 * so a property personal in any branch is dropped whichever branch the value matches: the DMS documents share
 * `body` and only some branches carry a phone.
 */
export class Redaction {
  /** Properties dropped at this level. */
  readonly personal = new Set<string>();
  /** Named properties to look into. */
  readonly properties = new Map<string, Redaction[]>();
  /** Array items. */
  readonly items: Redaction[] = [];
  /** Values of properties not named in `properties` (additionalProperties, a map's values). */
  readonly additional: Redaction[] = [];
  /** True when this level or anything below it drops a field (settled once the graph is built). */
  dropsAnything = false;

  /** A copy of `value` without its personal fields; `value` itself is not changed. */
  apply(value: unknown): unknown {
    return redact([this], value);
  }

  /** Every personal field's JSON pointer under this schema (`/contact`, `/documents/[]/body/phone`; `[]` stands for any item or map value), for the record and tests. */
  pointers(prefix = '', seen = new Set<Redaction>()): string[] {
    if (seen.has(this) || !this.dropsAnything) return [];
    seen.add(this);
    const found = [...this.personal].map((name) => `${prefix}/${name}`);
    for (const [name, below] of this.properties)
      for (const r of below) found.push(...r.pointers(`${prefix}/${name}`, seen));
    for (const r of [...this.items, ...this.additional]) found.push(...r.pointers(`${prefix}/[]`, seen));
    seen.delete(this);
    return [...new Set(found)];
  }
}

function redact(redactions: Redaction[], value: unknown): unknown {
  const active = redactions.filter((r) => r.dropsAnything);
  if (active.length === 0 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const items = active.flatMap((r) => r.items);
    return items.length === 0 ? value : value.map((item) => redact(items, item));
  }
  const kept: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (active.some((r) => r.personal.has(key))) continue;
    kept[key] = redact(
      active.flatMap((r) => r.properties.get(key) ?? r.additional),
      field,
    );
  }
  return kept;
}

/** The redaction that drops nothing (a schema without personal fields, or no schema). */
const NOTHING = new Redaction();

export interface PersonalFields {
  /** The redaction of a component schema by name (`Customer`); nothing to drop for an unknown name. */
  schema(name: string): Redaction;
  /** The personal properties at the top level of a component schema (`CustomerFields` -> phone, taxId, ...). */
  topLevel(name: string): ReadonlySet<string>;
  /** The request body's redaction of an operation (every JSON media type unioned). */
  request(operation: Operation): Redaction;
  /** The response body's redaction of an operation for a status (the status's response, its `4XX` range, or `default`). */
  response(operation: Operation, status: number): Redaction;
}

export function personalFields(document: ApiDocument): PersonalFields {
  const doc = document as Json;
  const built = new Map<object, Redaction>();
  const all: Redaction[] = [];

  /** The redaction of one schema object, built once per object (a `$ref` resolves to the same object). */
  const of = (raw: unknown): Redaction => {
    if (raw === null || typeof raw !== 'object') return NOTHING;
    const schema = resolveRef(doc, raw);
    const known = built.get(schema);
    if (known) return known;
    const redaction = new Redaction();
    built.set(schema, redaction);
    all.push(redaction);
    absorb(schema, redaction, new Set());
    return redaction;
  };

  /** Adds what `raw` says of its values to `into`: its own properties, and its combinators' (a union). */
  const absorb = (raw: unknown, into: Redaction, visiting: Set<object>): void => {
    if (raw === null || typeof raw !== 'object') return;
    const schema = resolveRef(doc, raw);
    if (visiting.has(schema)) return;
    visiting.add(schema);
    for (const [name, property] of Object.entries((schema.properties ?? {}) as Json)) {
      // The mark may sit beside a `$ref` (3.1 allows siblings) or on the schema it names.
      if (isMarked(property) || isMarked(resolveRef(doc, property))) into.personal.add(name);
      else into.properties.set(name, [...(into.properties.get(name) ?? []), of(property)]);
    }
    if (schema.items && typeof schema.items === 'object') into.items.push(of(schema.items));
    if (schema.additionalProperties && typeof schema.additionalProperties === 'object')
      into.additional.push(of(schema.additionalProperties));
    for (const keyword of ['allOf', 'oneOf', 'anyOf'] as const) {
      for (const branch of (schema[keyword] ?? []) as unknown[]) absorb(branch, into, visiting);
    }
    for (const keyword of ['if', 'then', 'else'] as const) absorb(schema[keyword], into, visiting);
    visiting.delete(schema);
  };

  const schemas = (doc.components?.schemas ?? {}) as Json;
  const named = new Map(Object.entries(schemas).map(([name, schema]) => [name, of(schema)]));
  settle(all);

  /** A body's redaction: what any of its JSON media types' schemas drops. */
  const bodyOf = (content: Json | undefined): Redaction => {
    const redaction = new Redaction();
    all.push(redaction);
    for (const [mediaType, media] of Object.entries(content ?? {})) {
      // A file (XML, multipart) reaches the log as its hash and size only (file-body.ts), never as its content.
      if (mediaType.includes('json')) absorb((media as Json).schema, redaction, new Set());
    }
    settle(all);
    return redaction;
  };
  const requests = new Map<Operation, Redaction>();
  const responses = new Map<string, Redaction>();

  return {
    schema: (name) => named.get(name) ?? NOTHING,
    topLevel: (name) => named.get(name)?.personal ?? new Set(),
    request(operation) {
      let redaction = requests.get(operation);
      if (!redaction) {
        redaction = bodyOf(resolveRef(doc, operation.spec.requestBody)?.content as Json | undefined);
        requests.set(operation, redaction);
      }
      return redaction;
    },
    response(operation, status) {
      const key = `${operation.method} ${operation.pathTemplate} ${status}`;
      let redaction = responses.get(key);
      if (!redaction) {
        const declared = (operation.spec.responses ?? {}) as Json;
        const response = declared[String(status)] ?? declared[`${String(status)[0]}XX`] ?? declared.default;
        redaction = response ? bodyOf(resolveRef(doc, response).content as Json | undefined) : NOTHING;
        responses.set(key, redaction);
      }
      return redaction;
    },
  };
}

function isMarked(schema: unknown): boolean {
  return typeof schema === 'object' && schema !== null && (schema as Json)[PERSONAL_MARK] === true;
}

/** Marks each redaction that drops something at or below it (a fixed point: the graph may have cycles). */
function settle(all: Redaction[]): void {
  let changed = true;
  while (changed) {
    changed = false;
    for (const redaction of all) {
      if (redaction.dropsAnything) continue;
      const below = [...[...redaction.properties.values()].flat(), ...redaction.items, ...redaction.additional];
      if (redaction.personal.size > 0 || below.some((r) => r.dropsAnything)) {
        redaction.dropsAnything = true;
        changed = true;
      }
    }
  }
}

let shared: PersonalFields | undefined;
let sharedDocument: ApiDocument | undefined;

/** The personal fields of `document`, built once per document (the served spec is one object for the process). */
export function personalFieldsOf(document: ApiDocument): PersonalFields {
  if (!shared || sharedDocument !== document) {
    shared = personalFields(document);
    sharedDocument = document;
  }
  return shared;
}
