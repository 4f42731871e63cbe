// Reads a DMS XML file (README, DMS files) into canonical JSON documents, as a stream with saxes: the text is fed in
// chunks and each document is built as its elements close, so memory follows one document, not the file's tree.
// Hostile input fails the whole file with a clear message and where it stopped (line and column, 1-based): bytes
// that are not UTF-8, a DTD (so no entity can be declared, let alone expanded: billion laughs and external entities
// never start), nesting deeper than MAX_DEPTH, an element's text over MAX_TEXT, more than MAX_DOCUMENTS documents,
// anything not well-formed or truncated. Element names are JSON field names; the document kind's shape (shapes.ts)
// says which elements are arrays (their `item` children) and how text becomes a number or a boolean. A value the
// shape does not expect is kept as text, for the document's own schema check to reject it with R09 naming the field.
import { isUtf8 } from 'node:buffer';
import { SaxesParser, type SaxesTagNS } from 'saxes';
import { DOCUMENT_SHAPES, OTHER_DOCUMENT_SHAPE, type Shape } from './shapes.js';

export const DMS_NAMESPACE = 'urn:distributor-erp:dms:1';
/** Elements deep, the root included: a document's deepest field is about 6 levels down. */
export const MAX_DEPTH = 32;
/** Characters of text in one element. */
export const MAX_TEXT = 64 * 1024;
export const MAX_DOCUMENTS = 10_000;
/** Characters fed to the parser at a time. */
const CHUNK = 64 * 1024;

/** The file cannot be read: why, and where the parser stopped (1-based line and column). */
export class XmlFileError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
  }
}

interface Open {
  name: string;
  shape: Shape | null;
  /** The value being built: an object's fields, an array's items, or null for a scalar (its text is `text`). */
  value: Record<string, unknown> | unknown[] | null;
  text: string;
  hasChildren: boolean;
}

/** The documents of a DMS XML file, in the file's order, each as its JSON form. Throws XmlFileError. */
export function readDmsFile(bytes: Buffer): unknown[] {
  if (!isUtf8(bytes)) {
    const at = firstInvalidUtf8(bytes);
    throw new XmlFileError(
      `The file is not UTF-8: the byte at offset ${at.offset} cannot start or continue a character.`,
      at.line,
      at.column,
    );
  }
  const text = bytes.toString('utf8');
  const parser = new SaxesParser({ xmlns: true, position: true });
  const documents: unknown[] = [];
  const stack: Open[] = [];
  const fail = (message: string): never => {
    throw new XmlFileError(message, parser.line, parser.column + 1);
  };

  parser.on('error', (error) => fail(sentence(error.message.replace(/^(?:[^:]*:)?\d+:\d+: /, ''))));
  parser.on('doctype', () => fail('A DOCTYPE (DTD) is not accepted in a DMS file: no entity may be declared.'));
  parser.on('processinginstruction', (pi) => {
    if (pi.target.toLowerCase() !== 'xml') fail(`The processing instruction <?${pi.target}?> is not accepted.`);
  });
  parser.on('opentag', (tag: SaxesTagNS) => {
    if (stack.length + 1 > MAX_DEPTH) fail(`Elements nest more than ${MAX_DEPTH} deep.`);
    if (tag.uri !== DMS_NAMESPACE) fail(`The element <${tag.name}> is not in the namespace ${DMS_NAMESPACE}.`);
    const attributes = Object.values(tag.attributes).filter((a) => a.prefix !== 'xmlns' && a.name !== 'xmlns');
    if (attributes.length > 0)
      fail(
        `The element <${tag.name}> has the attribute ${attributes[0]!.name}: a DMS file carries every field as an element.`,
      );
    const parent = stack.at(-1);
    if (!parent) {
      if (tag.local !== 'dmsFile') fail(`The root element is <${tag.local}>; a DMS file's root is <dmsFile>.`);
      stack.push({ name: 'dmsFile', shape: null, value: null, text: '', hasChildren: false });
      return;
    }
    if (parent.text.trim() !== '') fail(`The element <${parent.name}> holds both text and elements.`);
    parent.hasChildren = true;
    let shape: Shape | null;
    if (stack.length === 1) {
      // A document: its element's name is its documentType.
      if (documents.length >= MAX_DOCUMENTS) fail(`The file holds more than ${MAX_DOCUMENTS} documents.`);
      shape = DOCUMENT_SHAPES.get(tag.local) ?? OTHER_DOCUMENT_SHAPE;
    } else {
      shape = childShape(parent, tag.local);
    }
    const value =
      shape?.kind === 'array' ? [] : shape?.kind === 'object' || shape?.kind === 'any' || shape === null ? {} : null;
    stack.push({ name: tag.local, shape, value, text: '', hasChildren: false });
  });
  parser.on('text', (chunk) => {
    const open = stack.at(-1);
    if (!open) return; // whitespace outside the root (anything else is the parser's error)
    if (open.text.length + chunk.length > MAX_TEXT)
      fail(`The element <${open.name}> holds more than ${MAX_TEXT} characters of text.`);
    open.text += chunk;
  });
  parser.on('cdata', (chunk) => {
    const open = stack.at(-1)!;
    if (open.text.length + chunk.length > MAX_TEXT)
      fail(`The element <${open.name}> holds more than ${MAX_TEXT} characters of text.`);
    open.text += chunk;
  });
  parser.on('closetag', () => {
    const closed = stack.pop()!;
    const parent = stack.at(-1);
    if (!parent) return; // the root
    const value = valueOf(closed);
    if (stack.length === 1) {
      documents.push({ documentType: closed.name, ...(value as Record<string, unknown>) });
      return;
    }
    if (Array.isArray(parent.value)) {
      parent.value.push(value);
      return;
    }
    const fields = (parent.value ??= {}) as Record<string, unknown>;
    if (closed.name in fields) {
      // A field given twice where the shape expects one value: kept as a list, for the schema check to name it.
      const before = fields[closed.name];
      fields[closed.name] =
        Array.isArray(before) && parent.shape?.kind === 'any' ? [...before, value] : [before, value];
    } else {
      fields[closed.name] = value;
    }
  });

  for (let i = 0; i < text.length; i += CHUNK) parser.write(text.slice(i, i + CHUNK));
  parser.close();
  return documents;
}

/** saxes' message as a sentence: `unclosed tag: sale_invoice` -> `Unclosed tag: sale_invoice.` */
const sentence = (message: string) => `${message.charAt(0).toUpperCase()}${message.slice(1).replace(/\.?$/, '.')}`;

/** The shape of a child element: the object's field, an array's item; null where nothing is known (an open body). */
function childShape(parent: Open, name: string): Shape | null {
  const shape = parent.shape;
  if (shape?.kind === 'object') return shape.fields.get(name)?.shape ?? (shape.open ? { kind: 'any' } : null);
  if (shape?.kind === 'array') return shape.item;
  return { kind: 'any' };
}

/** A closed element's value: its fields or items, or its text read as its shape says. */
function valueOf(element: Open): unknown {
  const shape = element.shape;
  if (shape?.kind === 'array' || shape?.kind === 'object') return element.value;
  if (element.hasChildren) return element.value;
  const text = element.text.trim();
  if (shape === null || shape.kind === 'any') return text;
  if (shape.kind === 'integer' || shape.kind === 'number')
    return /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/.test(text) && Number.isFinite(Number(text)) ? Number(text) : text;
  if (shape.kind === 'boolean')
    return text === 'true' || text === '1' ? true : text === 'false' || text === '0' ? false : text;
  return text;
}

/** Where the first byte that breaks UTF-8 is: its offset, line and column (counted over the valid text before it). */
function firstInvalidUtf8(bytes: Buffer): { offset: number; line: number; column: number } {
  // The longest valid prefix: binary search on isUtf8 would miss a cut in the middle of a character, so walk.
  let offset = 0;
  while (offset < bytes.length) {
    const byte = bytes[offset]!;
    const length = byte < 0x80 ? 1 : byte >> 5 === 0b110 ? 2 : byte >> 4 === 0b1110 ? 3 : byte >> 3 === 0b11110 ? 4 : 0;
    if (length === 0 || offset + length > bytes.length || !isUtf8(bytes.subarray(offset, offset + length))) break;
    offset += length;
  }
  const before = bytes.subarray(0, offset).toString('utf8');
  const lines = before.split('\n');
  return { offset, line: lines.length, column: lines.at(-1)!.length + 1 };
}
