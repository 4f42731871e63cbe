// Finds the changes between two bundled API descriptions that would break a client working against the older
// one (product spec, Versioning 3-4: within /api/v1 only additions are allowed). The two directions differ:
// - what the client SENDS (parameters, request bodies) may only get more permissive: a new required field,
//   a removed field, a narrowed type, enum, length, range or pattern breaks a request that used to work;
// - what the client RECEIVES (response bodies) may only get more specific: a removed or no-longer-required
//   field, a value of a new type (say, null), a changed pattern or format, or an enum value that is gone (removed
//   or renamed: a client that compares with it never matches again) breaks a client that read it. New enum values
//   in responses are allowed, as 1.13.0 did for empties movement types: clients must tolerate them.
// Operations, parameters, media types and documented statuses may be added, never removed.

import { resolveRef } from '../../server/platform/openapi-ref.js';

type Json = Record<string, any>;

/** Follows a local `$ref` in a bundled document (undefined stays undefined). */
const resolve = (document: Json, node: Json | undefined): Json | undefined =>
  resolveRef(document, node) as Json | undefined;

export interface BreakingChange {
  /** Where, e.g. `GET /customers response 200 application/json: data[].name`. */
  where: string;
  /** What changed, in a client's words. */
  what: string;
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options'] as const;
type Direction = 'request' | 'response';

export function findBreakingChanges(base: Json, current: Json): BreakingChange[] {
  const changes: BreakingChange[] = [];
  const report = (where: string, what: string) => changes.push({ where, what });

  compareServers(base, current, report);
  for (const [path, baseItem] of Object.entries((base.paths ?? {}) as Json)) {
    const currentItem = resolve(current, current.paths?.[path]) as Json | undefined;
    for (const method of METHODS) {
      const baseOperation = resolve(base, resolve(base, baseItem)?.[method]);
      if (!baseOperation) continue;
      const where = `${method.toUpperCase()} ${path}`;
      const currentOperation = resolve(current, currentItem?.[method]);
      if (!currentOperation) {
        report(where, 'operation removed');
        continue;
      }
      compareSecurity(
        where,
        effectiveSecurity(base, baseOperation),
        effectiveSecurity(current, currentOperation),
        report,
      );
      compareParameters(where, { base, current }, [baseItem, baseOperation], [currentItem!, currentOperation], report);
      compareRequestBody(where, { base, current }, baseOperation, currentOperation, report);
      compareResponses(where, { base, current }, baseOperation, currentOperation, report);
    }
  }
  return changes;
}

interface Documents {
  base: Json;
  current: Json;
}
type Report = (where: string, what: string) => void;

/** An operation's own `security`, else the document's: an operation without one inherits the global rule. */
function effectiveSecurity(document: Json, operation: Json): Json[] {
  return (operation.security ?? document.security ?? []) as Json[];
}

function compareSecurity(where: string, base: Json[], current: Json[], report: Report): void {
  const scopes = (requirements: Json[]) => new Set(requirements.flatMap((r) => Object.values(r).flat() as string[]));
  const before = scopes(base);
  const added = [...scopes(current)].filter((scope) => !before.has(scope));
  if (added.length > 0) report(where, `now requires scope ${added.join(', ')}`);
  // [] or [{}] is public; anything else needs credentials.
  const isPublic = (requirements: Json[]) =>
    requirements.length === 0 || requirements.some((r) => Object.keys(r).length === 0);
  if (isPublic(base) && !isPublic(current)) report(where, 'now requires an API key');
}

/** Every base path of the servers (`/api/v1`) must still be served: moving them moves every operation. */
function compareServers(base: Json, current: Json, report: Report): void {
  const paths = (document: Json) =>
    new Set(
      ((document.servers ?? []) as Json[]).map((server) =>
        new URL(String(server.url), 'http://placeholder').pathname.replace(/\/$/, ''),
      ),
    );
  const now = paths(current);
  for (const path of paths(base)) if (!now.has(path)) report('servers', `base path ${path || '/'} no longer served`);
}

function compareParameters(
  where: string,
  docs: Documents,
  baseOwners: Json[],
  currentOwners: Json[],
  report: Report,
): void {
  const parameters = (document: Json, owners: Json[]) => {
    const byKey = new Map<string, Json>();
    for (const owner of owners)
      for (const p of (owner?.parameters ?? []) as Json[]) {
        const parameter = resolve(document, p) as Json;
        // Header names are case-insensitive; query, path and cookie names are not.
        const name = parameter.in === 'header' ? String(parameter.name).toLowerCase() : String(parameter.name);
        byKey.set(`${parameter.in} ${name}`, parameter);
      }
    return byKey;
  };
  const before = parameters(docs.base, baseOwners);
  const after = parameters(docs.current, currentOwners);
  for (const [key, parameter] of before) {
    const at = `${where} ${parameter.in} parameter ${parameter.name}`;
    const now = after.get(key);
    if (!now) {
      report(at, 'parameter removed');
      continue;
    }
    if (!parameter.required && now.required) report(at, 'parameter became required');
    compareSchemas(at, docs, parameter.schema ?? {}, now.schema ?? {}, 'request', report);
  }
  for (const [key, parameter] of after) {
    if (!before.has(key) && parameter.required)
      report(`${where} ${parameter.in} parameter ${parameter.name}`, 'new required parameter');
  }
}

function compareRequestBody(where: string, docs: Documents, base: Json, current: Json, report: Report): void {
  const before = resolve(docs.base, base.requestBody) as Json | undefined;
  const after = resolve(docs.current, current.requestBody) as Json | undefined;
  if (!before) {
    if (after?.required) report(`${where} request body`, 'a request body became required');
    return;
  }
  if (!after) {
    report(`${where} request body`, 'request body removed');
    return;
  }
  if (!before.required && after.required) report(`${where} request body`, 'request body became required');
  for (const [mediaType, media] of Object.entries((before.content ?? {}) as Json)) {
    const at = `${where} request ${mediaType}`;
    const now = after.content?.[mediaType];
    if (!now) {
      report(at, 'request media type no longer accepted');
      continue;
    }
    compareSchemas(at, docs, (media as Json).schema ?? {}, now.schema ?? {}, 'request', report);
  }
}

function compareResponses(where: string, docs: Documents, base: Json, current: Json, report: Report): void {
  const before = (base.responses ?? {}) as Json;
  const after = (current.responses ?? {}) as Json;
  for (const [status, response] of Object.entries(before)) {
    const at = `${where} response ${status}`;
    const now = resolve(docs.current, after[status]) as Json | undefined;
    if (!now) {
      report(at, 'status code no longer returned (changed status code)');
      continue;
    }
    compareResponseHeaders(at, docs, resolve(docs.base, response) ?? {}, now, report);
    for (const [mediaType, media] of Object.entries((resolve(docs.base, response)?.content ?? {}) as Json)) {
      const nowMedia = now.content?.[mediaType];
      if (!nowMedia) {
        report(`${at} ${mediaType}`, 'response media type removed');
        continue;
      }
      compareSchemas(
        `${at} ${mediaType}`,
        docs,
        (media as Json).schema ?? {},
        nowMedia.schema ?? {},
        'response',
        report,
      );
    }
  }
  for (const status of Object.keys(after)) {
    if (!(status in before) && /^[23]/.test(status))
      report(`${where} response ${status}`, 'new success status code (clients expect the documented ones)');
  }
}

function compareResponseHeaders(where: string, docs: Documents, base: Json, current: Json, report: Report): void {
  const headers = (document: Json, response: Json) =>
    new Map(
      Object.entries((response.headers ?? {}) as Json).map(
        ([name, header]) => [name.toLowerCase(), { name, header: resolve(document, header as Json) ?? {} }] as const,
      ),
    );
  const now = headers(docs.current, current);
  for (const [key, { name, header }] of headers(docs.base, base)) {
    const at = `${where} header ${name}`;
    const found = now.get(key);
    if (!found) {
      report(at, 'response header removed');
      continue;
    }
    if (header.required && !found.header.required) report(at, 'response header no longer always sent');
    compareSchemas(at, docs, header.schema ?? {}, found.header.schema ?? {}, 'response', report);
  }
}

/** One schema with $ref resolved and allOf merged; oneOf/anyOf stay as branches. */
interface Shape {
  types: Set<string> | undefined;
  properties: Map<string, Json>;
  required: Set<string>;
  items: Json | undefined;
  branches: Json[] | undefined;
  /** The value's constraints, every allOf member's together (see mergeConstraints). */
  node: Json;
  /**
   * Every pattern a value must match: allOf members each keep theirs (a DMS document kind's `^VR[0-9]{6}$` beside
   * the envelope's general `^[A-Za-z0-9_./-]+$`), so one pattern may not stand for the others.
   */
  patterns: Set<string>;
}

function shape(document: Json, raw: Json, depth = 0): Shape {
  const node = (resolve(document, raw) as Json) ?? {};
  const result: Shape = {
    types: typesOf(node),
    properties: new Map(),
    required: new Set(node.required ?? []),
    items: node.items,
    branches: node.oneOf ?? node.anyOf,
    node,
    patterns: new Set(typeof node.pattern === 'string' ? [node.pattern] : []),
  };
  for (const [name, property] of Object.entries((node.properties ?? {}) as Json)) result.properties.set(name, property);
  for (const member of (node.allOf ?? []) as Json[]) {
    if (depth > 20) break;
    const part = shape(document, member, depth + 1);
    for (const [name, property] of part.properties)
      result.properties.set(
        name,
        result.properties.has(name) ? { allOf: [result.properties.get(name), property] } : property,
      );
    for (const name of part.required) result.required.add(name);
    if (part.items) result.items = result.items ? { allOf: [result.items, part.items] } : part.items;
    result.branches ??= part.branches;
    if (part.types)
      result.types = result.types ? new Set([...result.types].filter((t) => part.types!.has(t))) : part.types;
    for (const pattern of part.patterns) result.patterns.add(pattern);
    result.node = mergeConstraints(result.node, part.node);
  }
  return result;
}

const LOWER_BOUNDS = ['minLength', 'minimum', 'exclusiveMinimum', 'minItems', 'minProperties'] as const;
const UPPER_BOUNDS = ['maxLength', 'maximum', 'exclusiveMaximum', 'maxItems', 'maxProperties'] as const;

/**
 * The constraints of a value that must satisfy both nodes (allOf): the tighter of two bounds and the values both
 * enums allow, whichever member wrote them; for the rest the first member's word stands (patterns are kept apart,
 * in Shape.patterns). Taking one member's bound over the other's would hide a narrowing written in the second.
 */
function mergeConstraints(first: Json, second: Json): Json {
  const merged: Json = { ...second, ...first };
  for (const key of LOWER_BOUNDS)
    if (typeof first[key] === 'number' && typeof second[key] === 'number')
      merged[key] = Math.max(first[key], second[key]);
  for (const key of UPPER_BOUNDS)
    if (typeof first[key] === 'number' && typeof second[key] === 'number')
      merged[key] = Math.min(first[key], second[key]);
  if (Array.isArray(first.enum) && Array.isArray(second.enum))
    merged.enum = (first.enum as unknown[]).filter((value) => (second.enum as unknown[]).includes(value));
  return merged;
}

function typesOf(node: Json): Set<string> | undefined {
  if (node.type === undefined) return node.const === null ? new Set(['null']) : undefined;
  const types = new Set<string>(Array.isArray(node.type) ? node.type : [node.type]);
  if (types.has('number')) types.add('integer');
  return types;
}

function compareSchemas(
  where: string,
  docs: Documents,
  baseRaw: Json,
  currentRaw: Json,
  direction: Direction,
  report: Report,
  depth = 0,
): void {
  if (depth > 40) return;
  const before = shape(docs.base, baseRaw);
  const after = shape(docs.current, currentRaw);
  if (before.branches || after.branches) {
    compareAlternatives(
      where,
      docs,
      { raw: baseRaw, shape: before },
      { raw: currentRaw, shape: after },
      direction,
      report,
      depth,
    );
    return;
  }
  const field = (name: string) => (where.includes(': ') ? `${where}.${name}` : `${where}: ${name}`);
  const items = where.includes(': ') ? `${where}[]` : `${where}: []`;

  // Types: the sender's side may not lose a type, the receiver's side may not gain one.
  if (before.types && after.types) {
    const lost = [...before.types].filter((t) => !after.types!.has(t));
    const gained = [...after.types].filter((t) => !before.types!.has(t));
    if (direction === 'request' && lost.length > 0)
      report(where, `narrowed type: no longer accepts ${lost.join(', ')}`);
    if (direction === 'response' && gained.length > 0) report(where, `widened type: may now be ${gained.join(', ')}`);
  } else if (before.types && !after.types && direction === 'response' && !after.branches) {
    report(where, 'widened type: no longer constrained');
  } else if (!before.types && after.types && direction === 'request' && !before.branches) {
    report(where, `narrowed type: now only ${[...after.types].join(', ')}`);
  }

  if (direction === 'request') compareRequestConstraints(where, before, after, report);
  else compareResponseConstraints(where, before, after, report);

  for (const [name, property] of before.properties) {
    const now = after.properties.get(name);
    if (!now) {
      report(field(name), direction === 'response' ? 'response field removed' : 'request field removed');
      continue;
    }
    if (direction === 'response' && before.required.has(name) && !after.required.has(name))
      report(field(name), 'response field no longer always present');
    compareSchemas(field(name), docs, property, now, direction, report, depth + 1);
  }
  if (direction === 'request') {
    for (const name of after.required) {
      if (!before.required.has(name))
        report(
          field(name),
          before.properties.has(name) ? 'request field became required' : 'new required request field',
        );
    }
  }
  if (before.items && after.items) compareSchemas(items, docs, before.items, after.items, direction, report, depth + 1);
}

interface Alternative {
  raw: Json;
  types: Set<string> | undefined;
}

/**
 * oneOf/anyOf (this spec's way of writing "X or null"), against each other or against a plain schema, matched
 * by type rather than by position: every value the service may now return must fit an alternative the client
 * knew (response), and every value the client used to send must fit an alternative still accepted (request).
 */
function compareAlternatives(
  where: string,
  docs: Documents,
  base: { raw: Json; shape: Shape },
  current: { raw: Json; shape: Shape },
  direction: Direction,
  report: Report,
  depth: number,
): void {
  const alternatives = (document: Json, side: { raw: Json; shape: Shape }): Alternative[] =>
    side.shape.branches
      ? side.shape.branches.map((branch) => ({ raw: branch, types: shape(document, branch).types }))
      : [{ raw: side.raw, types: side.shape.types }];
  // An untyped alternative takes anything; a typed one takes its own types.
  const covers = (wide: Alternative, narrow: Alternative) =>
    wide.types === undefined || (narrow.types !== undefined && [...narrow.types].every((t) => wide.types!.has(t)));
  const named = (alternative: Alternative) =>
    alternative.types
      ? [...alternative.types].filter((t) => t !== 'integer' || !alternative.types!.has('number')).join(' or ')
      : 'anything';
  const before = alternatives(docs.base, base);
  const after = alternatives(docs.current, current);
  const [required, offered] = direction === 'response' ? [after, before] : [before, after];
  // The same named schema ($ref) first: a oneOf of many objects (the DMS documents, one per documentType) is matched
  // branch to branch, not every branch to the first object.
  const sameRef = (candidate: Alternative, alternative: Alternative) =>
    typeof alternative.raw.$ref === 'string' && candidate.raw.$ref === alternative.raw.$ref;
  for (const alternative of required) {
    const match =
      offered.find((candidate) => sameRef(candidate, alternative)) ??
      offered.find((candidate) => covers(candidate, alternative));
    if (!match) {
      report(
        where,
        direction === 'response'
          ? `widened type: may now be ${named(alternative)}`
          : `narrowed type: no longer accepts ${named(alternative)}`,
      );
      continue;
    }
    const [older, newer] = direction === 'response' ? [match, alternative] : [alternative, match];
    // A branch that is itself a oneOf (the DMS push's DmsSubmittedDocument: DmsDocument, a oneOf of one schema per
    // documentType, or DmsMalformedDocument) is followed when both sides name the same schema: its branches are then
    // matched by $ref in turn. Otherwise a nested oneOf is not followed (matching by type alone would compare one
    // kind of document with another).
    const nested = shape(docs.base, older.raw).branches || shape(docs.current, newer.raw).branches;
    if (nested && !sameRef(match, alternative)) continue;
    compareSchemas(where, docs, older.raw, newer.raw, direction, report, depth + 1);
  }
}

/** The patterns of a shape as the reports name them. */
const patternsNamed = (patterns: Set<string>) => (patterns.size === 0 ? 'none' : [...patterns].join(' and '));

/**
 * What a response value may look like: a changed format or pattern can break a client that parses it, and an enum
 * value the service no longer sends (removed, or renamed, which is the same to a client comparing with the old
 * word) breaks a client that acts on it. A new enum value is allowed (see the top of this file).
 */
function compareResponseConstraints(where: string, beforeShape: Shape, afterShape: Shape, report: Report): void {
  const [before, after] = [beforeShape.node, afterShape.node];
  if (before.format !== undefined && after.format !== before.format)
    report(where, `changed format: ${before.format} -> ${after.format ?? 'none'}`);
  const samePatterns =
    beforeShape.patterns.size === afterShape.patterns.size &&
    [...beforeShape.patterns].every((p) => afterShape.patterns.has(p));
  if (beforeShape.patterns.size > 0 && !samePatterns)
    report(where, `changed pattern: ${patternsNamed(beforeShape.patterns)} -> ${patternsNamed(afterShape.patterns)}`);
  if (Array.isArray(before.enum) && Array.isArray(after.enum)) {
    const gone = (before.enum as unknown[]).filter((value) => !(after.enum as unknown[]).includes(value));
    if (gone.length > 0) report(where, `enum value no longer returned: ${gone.join(', ')}`);
  }
}

function compareRequestConstraints(where: string, beforeShape: Shape, afterShape: Shape, report: Report): void {
  const [before, after] = [beforeShape.node, afterShape.node];
  if (Array.isArray(before.enum)) {
    const allowed = new Set((after.enum ?? before.enum) as unknown[]);
    const removed = (before.enum as unknown[]).filter((value) => !allowed.has(value));
    if (removed.length > 0) report(where, `narrowed enum: no longer accepts ${removed.join(', ')}`);
  } else if (Array.isArray(after.enum)) {
    report(where, 'narrowed enum: now limited to listed values');
  }
  for (const key of LOWER_BOUNDS) {
    if (
      after[key] !== undefined &&
      (before[key] === undefined || after[key] > before[key]) &&
      !alreadyHeld(before, key, after[key])
    )
      report(where, `narrowed range: ${key} ${before[key] ?? 'none'} -> ${after[key]}`);
  }
  for (const key of UPPER_BOUNDS) {
    if (
      after[key] !== undefined &&
      (before[key] === undefined || after[key] < before[key]) &&
      !alreadyHeld(before, key, after[key])
    )
      report(where, `narrowed range: ${key} ${before[key] ?? 'none'} -> ${after[key]}`);
  }
  // Every pattern a value must now match that it did not have to before (in any allOf member) may refuse it.
  for (const pattern of afterShape.patterns) {
    if (!beforeShape.patterns.has(pattern))
      report(where, `changed pattern: ${patternsNamed(beforeShape.patterns)} -> ${pattern}`);
  }
  if (after.format !== undefined && after.format !== before.format && !integerFormatHeld(before, after.format))
    report(where, `changed format: ${before.format ?? 'none'} -> ${after.format}`);
  if ('const' in after && (!('const' in before) || after.const !== before.const))
    report(where, 'narrowed to a constant');
  if (before.additionalProperties !== false && after.additionalProperties === false && before.properties === undefined)
    report(where, 'no longer accepts other properties');
}

// A bound written down where the schema already held it accepts exactly what it accepted before, so it is no
// narrowing: a maxLength no shorter than what an anchored pattern or a fixed-length format allows, a minimum or
// maximum every value of an enum already meets, an integer format whose range contains the old bounds. Only
// what can be proved from the old schema alone counts; anything else is reported.

/** Whether `before` already kept every value within `key` = `bound`. */
function alreadyHeld(before: Json, key: string, bound: number): boolean {
  const numbers = Array.isArray(before.enum)
    ? (before.enum as unknown[]).filter((v): v is number => typeof v === 'number')
    : undefined;
  switch (key) {
    case 'maxLength': {
      const implied = impliedMaxLength(before);
      return implied !== undefined && implied <= bound;
    }
    case 'minimum':
      return numbers?.every((v) => v >= bound) ?? false;
    case 'maximum':
      return numbers?.every((v) => v <= bound) ?? false;
    default:
      return false;
  }
}

const INTEGER_FORMATS: Record<string, [number, number]> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

/** An int32/int64 format on an integer whose old bounds (or enum) already lay within the format's range. */
function integerFormatHeld(before: Json, format: string): boolean {
  const range = INTEGER_FORMATS[format];
  const declared = new Set<unknown>(Array.isArray(before.type) ? before.type : [before.type]);
  if (!range || before.format !== undefined || !declared.has('integer') || declared.has('number')) return false;
  const numbers = Array.isArray(before.enum)
    ? (before.enum as unknown[]).filter((v): v is number => typeof v === 'number')
    : undefined;
  if (numbers) return numbers.every((v) => v >= range[0] && v <= range[1]);
  return (
    typeof before.minimum === 'number' &&
    typeof before.maximum === 'number' &&
    before.minimum >= range[0] &&
    before.maximum <= range[1]
  );
}

/** Formats whose every valid value has at most this many characters. */
const FORMAT_LENGTH: Record<string, number> = { date: 10 };

/** The most characters a string of this schema can have, when the schema alone says so. */
export function impliedMaxLength(schema: Json): number | undefined {
  const limits: number[] = [];
  if (typeof schema.maxLength === 'number') limits.push(schema.maxLength);
  if (typeof schema.format === 'string' && FORMAT_LENGTH[schema.format] !== undefined)
    limits.push(FORMAT_LENGTH[schema.format]!);
  if (typeof schema.pattern === 'string') {
    const fromPattern = patternMaxLength(schema.pattern);
    if (fromPattern !== undefined) limits.push(fromPattern);
  }
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === 'string' || v === null)) {
    limits.push(Math.max(0, ...(schema.enum as (string | null)[]).map((v) => (v === null ? 0 : [...v].length))));
  }
  return limits.length > 0 ? Math.min(...limits) : undefined;
}

/**
 * The longest match of an anchored pattern (`^...$`), or undefined when unbounded or beyond this small reader
 * (literals, escapes, classes, groups, `|`, and the quantifiers `?`, `*`, `+`, `{n}`, `{n,}`, `{n,m}`). An
 * over-estimate is safe (it only reports more); lookarounds and back-references are refused.
 */
export function patternMaxLength(pattern: string): number | undefined {
  if (!pattern.startsWith('^') || !pattern.endsWith('$') || pattern.endsWith('\\$')) return undefined;
  const body = pattern.slice(1, -1);
  let at = 0;
  const fail = (): never => {
    throw new Error('unsupported');
  };
  const alternatives = (): number => {
    let longest = sequence();
    while (body[at] === '|') {
      at += 1;
      longest = Math.max(longest, sequence());
    }
    return longest;
  };
  const sequence = (): number => {
    let total = 0;
    while (at < body.length && body[at] !== '|' && body[at] !== ')') {
      const length = atom();
      total += length * quantifier();
    }
    return total;
  };
  const atom = (): number => {
    const c = body[at]!;
    if (c === '(') {
      at += 1;
      if (body.startsWith('?:', at)) at += 2;
      else if (body[at] === '?') fail();
      const length = alternatives();
      if (body[at] !== ')') fail();
      at += 1;
      return length;
    }
    if (c === '[') {
      at += 1;
      if (body[at] === '^') at += 1;
      if (body[at] === ']') at += 1;
      while (at < body.length && body[at] !== ']') at += body[at] === '\\' ? 2 : 1;
      if (at >= body.length) fail();
      at += 1;
      return 1;
    }
    if (c === '\\') {
      if (/[1-9k]/.test(body[at + 1] ?? '')) fail();
      at += 2;
      return 1;
    }
    if (c === '^' || c === '$' || c === '*' || c === '+' || c === '?' || c === '{') fail();
    at += 1;
    return 1;
  };
  const quantifier = (): number => {
    let most = 1;
    const c = body[at];
    if (c === '?') {
      at += 1;
      most = 1;
    } else if (c === '*' || c === '+') {
      at += 1;
      most = Infinity;
    } else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(body.slice(at));
      if (m) {
        at += m[0].length;
        most = m[2] === undefined ? Number(m[1]) : m[3] === '' ? Infinity : Number(m[3]);
      }
    }
    if (body[at] === '?') at += 1; // lazy
    return most;
  };
  try {
    const length = alternatives();
    return at === body.length && Number.isFinite(length) ? length : undefined;
  } catch {
    return undefined;
  }
}
