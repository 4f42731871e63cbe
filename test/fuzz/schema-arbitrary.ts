// fast-check arbitraries built from the JSON Schemas of the bundled description: values that lean towards
// valid ones (the fuzz pass mutates them afterwards). Not a complete JSON Schema generator: it follows $ref,
// allOf, oneOf/anyOf, const, enum, type lists, string bounds, patterns and formats, number ranges, arrays and
// objects (required plus a random subset of optional properties, and maps through additionalProperties); it
// ignores if/then/else, so a generated value may still be refused, which the pass allows (the answer must only
// be documented). Sizes are kept small so that a run stays within its time budget.
import fc from 'fast-check';
import { resolveRef } from '../../server/platform/openapi-ref.js';

export type Json = Record<string, unknown>;

export interface SchemaArbitraryOptions {
  document: Json;
  /**
   * An arbitrary to use instead of the schema's own for a value under this property name (ids of live
   * records, by field name); undefined to use the schema's.
   */
  override?: (name: string | undefined, schema: Json) => fc.Arbitrary<unknown> | undefined;
}

const MAX_DEPTH = 6;
const MAX_ITEMS = 3;
const MAX_FREE_STRING = 24;

/** Resolves `$ref`s and merges `allOf` into one schema (properties, required and the keywords of each part). */
export function flatten(document: Json, schema: unknown): Json {
  const resolved = resolveRef(document, schema ?? {});
  if (!Array.isArray(resolved.allOf)) return resolved;
  const { allOf, ...rest } = resolved;
  const merged: Json = { ...rest };
  for (const part of allOf as unknown[]) {
    const flat = flatten(document, part);
    for (const [key, value] of Object.entries(flat)) {
      if (key === 'properties') merged.properties = { ...(merged.properties as Json | undefined), ...(value as Json) };
      else if (key === 'required')
        merged.required = [...new Set([...((merged.required as string[] | undefined) ?? []), ...(value as string[])])];
      else if (!(key in merged)) merged[key] = value;
    }
  }
  return merged;
}

export function arbitraryFor(
  schema: unknown,
  options: SchemaArbitraryOptions,
  name?: string,
  depth = 0,
): fc.Arbitrary<unknown> {
  const flat = flatten(options.document, schema);
  const own = options.override?.(name, flat);
  if (own) return own;
  if (depth > MAX_DEPTH) return fc.constant(null);
  const alternatives = (flat.oneOf ?? flat.anyOf) as unknown[] | undefined;
  if (Array.isArray(alternatives) && alternatives.length > 0) {
    const { oneOf: _o, anyOf: _a, ...base } = flat;
    return fc.oneof(
      ...alternatives.map((alternative) =>
        arbitraryFor({ ...base, ...flatten(options.document, alternative) }, options, name, depth + 1),
      ),
    );
  }
  if ('const' in flat) return fc.constant(flat.const);
  if (Array.isArray(flat.enum)) return fc.constantFrom(...(flat.enum as unknown[]));
  const types = Array.isArray(flat.type)
    ? (flat.type as string[])
    : typeof flat.type === 'string'
      ? [flat.type]
      : [guessType(flat)];
  return fc.oneof(...types.map((type) => ofType(type, flat, options, name, depth)));
}

function guessType(schema: Json): string {
  if (schema.properties || schema.additionalProperties || schema.required) return 'object';
  if (schema.items) return 'array';
  if (schema.pattern || schema.format || schema.minLength !== undefined) return 'string';
  return 'string';
}

function ofType(
  type: string,
  schema: Json,
  options: SchemaArbitraryOptions,
  name: string | undefined,
  depth: number,
): fc.Arbitrary<unknown> {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({ min: bound(schema.minimum, -1_000_000), max: bound(schema.maximum, 1_000_000) });
    // Two decimals at most: the schemas' numbers are rates and coordinates, and a rate allows two.
    case 'number':
      return fc
        .integer({
          min: Math.ceil(bound(schema.minimum, -1_000_000) * 100),
          max: Math.floor(bound(schema.maximum, 1_000_000) * 100),
        })
        .map((n) => n / 100);
    case 'string':
      return stringFor(schema);
    case 'array':
      return arrayFor(schema, options, name, depth);
    case 'object':
      return objectFor(schema, options, depth);
    default:
      return fc.constant(null);
  }
}

function bound(value: unknown, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}

export function stringFor(schema: Json): fc.Arbitrary<string> {
  const minLength = bound(schema.minLength, 0);
  const maxLength = bound(schema.maxLength, 10_000);
  const fits = (s: string) => [...s].length >= minLength && [...s].length <= maxLength;
  switch (schema.format) {
    case 'date':
      return fc
        .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true })
        .map((d) => d.toISOString().slice(0, 10));
    case 'date-time':
      return fc
        .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true })
        .map((d) => d.toISOString());
    case 'email':
      return fc.emailAddress().filter(fits);
    case 'uri-reference':
      return fc.webUrl().filter(fits);
    default:
      break;
  }
  if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern as string)).filter(fits);
  const upTo = Math.max(minLength, Math.min(maxLength, MAX_FREE_STRING));
  return fc
    .oneof(
      fc.string({ minLength, maxLength: upTo, unit: 'grapheme-ascii' }),
      fc.string({ minLength, maxLength: upTo, unit: 'grapheme' }),
    )
    .filter(fits);
}

function arrayFor(
  schema: Json,
  options: SchemaArbitraryOptions,
  name: string | undefined,
  depth: number,
): fc.Arbitrary<unknown[]> {
  const minLength = bound(schema.minItems, 0);
  const maxLength = Math.max(minLength, Math.min(bound(schema.maxItems, MAX_ITEMS), MAX_ITEMS));
  const items = arbitraryFor(schema.items ?? {}, options, name, depth + 1);
  return schema.uniqueItems
    ? fc.uniqueArray(items, { minLength, maxLength, selector: (v) => JSON.stringify(v) })
    : fc.array(items, { minLength, maxLength });
}

function objectFor(schema: Json, options: SchemaArbitraryOptions, depth: number): fc.Arbitrary<Json> {
  const properties = (schema.properties ?? {}) as Json;
  const required = ((schema.required ?? []) as string[]).filter((key) => key in properties);
  const record = fc.record(
    Object.fromEntries(
      Object.entries(properties).map(([key, sub]) => [key, arbitraryFor(sub, options, key, depth + 1)]),
    ),
    { requiredKeys: required },
  ) as fc.Arbitrary<Json>;
  const extra = schema.additionalProperties;
  if (extra === undefined || extra === false || extra === true || Object.keys(properties).length > 0) return record;
  const names = flatten(options.document, schema.propertyNames ?? {});
  const keys =
    typeof names.pattern === 'string'
      ? fc.stringMatching(new RegExp(names.pattern as string))
      : fc.string({ minLength: 1, maxLength: 12 });
  const values = arbitraryFor(extra, options, undefined, depth + 1);
  return fc.tuple(record, fc.dictionary(keys, values, { maxKeys: 2 })).map(([own, map]) => ({ ...map, ...own }));
}
