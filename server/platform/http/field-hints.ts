// What a field problem should teach: the fields that are allowed where an unknown one was sent, and the likely
// intended one when the name is a near miss ("did you mean `name`?"). Read from the bundled spec, so the hint
// is always the contract's own list.
import { resolveRef } from '../openapi-ref.js';
import type { Operation } from '../operations.js';
import type { ApiDocument } from '../spec.js';

type Schema = Record<string, unknown>;

export interface FieldHints {
  /** The property names the operation's body schema accepts at a JSON pointer's parent, or its query parameters. */
  allowedAt(operation: Operation | undefined, pointer: string): string[];
}

export function fieldHints(document: ApiDocument): FieldHints {
  const resolve = (node: unknown): Schema => resolveRef(document as Schema, node) ?? {};
  /** Every branch a value at this schema may be described by (allOf, oneOf, anyOf flattened). */
  const branches = (node: unknown): Schema[] => {
    const schema = resolve(node);
    const parts = [schema];
    for (const key of ['allOf', 'oneOf', 'anyOf'])
      for (const sub of (schema[key] as unknown[] | undefined) ?? []) parts.push(...branches(sub));
    return parts;
  };
  const child = (node: unknown, segment: string): Schema[] =>
    branches(node).flatMap((schema) => {
      const properties = schema.properties as Record<string, unknown> | undefined;
      if (properties && Object.hasOwn(properties, segment)) return [properties[segment] as Schema];
      if (/^[0-9]+$/.test(segment) && schema.items) return [schema.items as Schema];
      if (schema.additionalProperties && typeof schema.additionalProperties === 'object')
        return [schema.additionalProperties as Schema];
      return [];
    });

  return {
    allowedAt(operation, pointer) {
      if (!operation) return [];
      if (pointer.startsWith('/query/'))
        return operation.parameters.filter((p) => p.in === 'query').map((p) => String(p.name));
      let nodes: Schema[] = operation.bodySchema ? [operation.bodySchema] : [];
      const segments = pointer
        .split('/')
        .slice(1, -1)
        .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
      for (const segment of segments) nodes = nodes.flatMap((node) => child(node, segment));
      const names = new Set<string>();
      for (const node of nodes)
        for (const schema of branches(node))
          for (const name of Object.keys((schema.properties as object | undefined) ?? {})) names.add(name);
      return [...names];
    },
  };
}

/** The allowed name closest to what was sent, when it is close enough to be a typo (edits <= 1/3 of its length, at most 3). */
export function closestName(sent: string, allowed: string[]): string | null {
  const limit = Math.min(3, Math.max(1, Math.floor(sent.length / 3)));
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const name of allowed) {
    // The distance is at least the difference in length: a name that cannot be within the limit is not compared
    // (a 10,000-character field name is compared with nothing, instead of filling a 10,000-row table per name).
    if (Math.abs(name.length - sent.length) > limit) continue;
    const distance = editDistance(sent.toLowerCase(), name.toLowerCase());
    if (distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  return best !== null && bestDistance <= limit ? best : null;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps each cost 1. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}
