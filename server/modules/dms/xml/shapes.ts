// The shape of each DMS document kind, read from the spec's JSON schemas (DmsDocument's branches): which fields an
// object has (and which are required), which are arrays, and the type and bounds of each value. The XML file reader
// reads text as the shape says (a quantity as a number, an array from its `item` elements), and the XML schema
// (xsd.ts) is written from the same shapes, so the JSON documents, the XML files and the XSD cannot disagree.
import { apiDocument } from '../../../platform/spec.js';
import { DOCUMENT_SCHEMAS } from '../canonical.js';

export type Shape =
  | { kind: 'object'; fields: Map<string, { shape: Shape; required: boolean }>; open: boolean }
  | { kind: 'array'; item: Shape; minItems?: number; maxItems?: number }
  | { kind: 'string'; pattern?: string; enum?: string[]; minLength?: number; maxLength?: number; format?: string }
  | { kind: 'integer'; minimum?: number; maximum?: number }
  | { kind: 'number' }
  | { kind: 'boolean' }
  /** Anything: an open body's fields (a type this version does not map). */
  | { kind: 'any' };

type Json = Record<string, any>;
const schemas = (apiDocument as Json).components.schemas as Record<string, Json>;

function resolve(schema: Json): Json {
  let current = schema;
  while (current.$ref) current = schemas[String(current.$ref).split('/').at(-1)!]!;
  return current;
}

/** The shape of a JSON schema node: `$ref`s followed, `allOf` merged (later parts win), a nullable type as its type. */
export function shapeOf(raw: Json): Shape {
  const schema = resolve(raw);
  if (schema.allOf) {
    const parts = (schema.allOf as Json[]).map(shapeOf);
    // A value described in parts (a decimal with its own description, a document as envelope and body).
    if (parts.every((part) => part.kind !== 'object'))
      return parts.find((part) => part.kind !== 'any') ?? { kind: 'any' };
    const fields = new Map<string, { shape: Shape; required: boolean }>();
    let open = true;
    for (const part of parts) {
      if (part.kind !== 'object') continue;
      for (const [name, field] of part.fields)
        fields.set(name, { shape: field.shape, required: field.required || (fields.get(name)?.required ?? false) });
      open = part.open;
    }
    return { kind: 'object', fields, open };
  }
  const branches = (schema.oneOf ?? schema.anyOf) as Json[] | undefined;
  if (branches) {
    const shapes = branches.map(shapeOf).filter((shape) => shape.kind !== 'any');
    return shapes[0] ?? { kind: 'any' };
  }
  const type = Array.isArray(schema.type)
    ? (schema.type as string[]).find((t) => t !== 'null')
    : (schema.type as string | undefined);
  if (type === 'object' || (type === undefined && schema.properties)) {
    const required = new Set((schema.required ?? []) as string[]);
    const fields = new Map(
      Object.entries((schema.properties ?? {}) as Record<string, Json>).map(([name, field]) => [
        name,
        { shape: shapeOf(field), required: required.has(name) },
      ]),
    );
    return { kind: 'object', fields, open: schema.additionalProperties !== false };
  }
  if (type === 'array')
    return { kind: 'array', item: shapeOf(schema.items ?? {}), minItems: schema.minItems, maxItems: schema.maxItems };
  if (type === 'integer') return { kind: 'integer', minimum: schema.minimum, maximum: schema.maximum };
  if (type === 'number') return { kind: 'number' };
  if (type === 'boolean') return { kind: 'boolean' };
  if (type === 'string' || schema.const !== undefined || schema.enum) {
    return {
      kind: 'string',
      pattern: schema.pattern,
      minLength: schema.minLength,
      maxLength: schema.maxLength,
      format: schema.format,
      enum: schema.const !== undefined ? [String(schema.const)] : schema.enum?.map(String),
    };
  }
  return { kind: 'any' };
}

/** The shape of each documentType the spec maps (its whole document: envelope and typed body). */
export const DOCUMENT_SHAPES: ReadonlyMap<string, Shape> = new Map(
  [...DOCUMENT_SCHEMAS].map(([type, name]) => [type, shapeOf(schemas[name]!)]),
);
/** A documentType this version does not map: the envelope, its body open. */
export const OTHER_DOCUMENT_SHAPE: Shape = shapeOf(schemas.DmsDocumentEnvelope!);
