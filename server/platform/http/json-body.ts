// The JSON body parser, stricter than express.json alone: RFC 8259 requires UTF-8, so a body that is not UTF-8
// (or carries an escaped lone surrogate, which no UTF-8 text can hold) is refused instead of being silently
// "repaired" with U+FFFD and stored as the partner's data. An empty body is no body: express.json would hand
// the validator `{}`, which passes every schema whose fields are all optional (PUT by code), so a required
// body would be taken as sent.
import { isUtf8 } from 'node:buffer';
import express, { type RequestHandler } from 'express';
import { ApiError } from '../errors/api-error.js';
import { firstStringMatching } from './first-string.js';
import { operationOf } from './known-operation.js';

export const JSON_BODY_LIMIT_BYTES = 1024 * 1024;
export const JSON_MEDIA_TYPES = ['application/json', 'application/*+json'];
/**
 * No request schema nests deeper than a handful of levels; a body nested deeper than this is refused before anything
 * walks it (JSON.parse is iterative, but the validator and every recursive walk of a body are not: a 1 MB body of
 * `[[[[...` would otherwise overflow the stack, a 500).
 */
export const JSON_MAX_DEPTH = 32;
/**
 * No request schema gives an object more than a few dozen members (maps such as `externalCodes` have a
 * `maxProperties`); an object with more than this is refused before the validator, which would report every unknown
 * member: a body of 45,000 of them held the event loop for seconds, and still costs a validation pass per member.
 */
export const JSON_MAX_OBJECT_MEMBERS = 1_000;

/** Set on the request by `verify` when the (decoded) body had no bytes at all. */
const EMPTY_BODY = Symbol('emptyBody');

export function jsonBody(): RequestHandler[] {
  const parse = express.json({
    limit: JSON_BODY_LIMIT_BYTES,
    type: JSON_MEDIA_TYPES,
    // Runs on the bytes after Content-Encoding was undone and before they are decoded as text.
    verify: (req, _res, bytes) => {
      if (bytes.length === 0) (req as unknown as Record<symbol, boolean>)[EMPTY_BODY] = true;
      // body-parser wraps what verify throws (as a 403); the error handler maps it by this `type`.
      else if (!isUtf8(bytes)) throw Object.assign(new Error(invalidUtf8Detail(bytes)), { type: NOT_UTF8 });
    },
  });
  const afterParse: RequestHandler = (req, _res, next) => {
    if ((req as unknown as Record<symbol, boolean>)[EMPTY_BODY]) {
      req.body = undefined;
      next();
      return;
    }
    const shape = bodyShape(req.body);
    if (shape.depth > JSON_MAX_DEPTH) {
      req.body = undefined; // nothing after this may walk it, the API log included (it runs once the key is known)
      next(
        new ApiError(
          'invalid_json',
          `The body nests arrays and objects more than ${JSON_MAX_DEPTH} levels deep; no operation accepts that.`,
        ),
      );
      return;
    }
    if (shape.widest > JSON_MAX_OBJECT_MEMBERS) {
      req.body = undefined; // as above: not walked or logged
      next(
        new ApiError(
          'invalid_json',
          `An object of the body has ${shape.widest} members; no operation accepts an object of more than ${JSON_MAX_OBJECT_MEMBERS} (send only the fields the operation documents).`,
        ),
      );
      return;
    }
    const field = firstStringMatching(req.body, '', LONE_SURROGATE);
    if (field !== null) {
      next(
        new ApiError(
          'invalid_json',
          `${field === '' ? 'The body' : `The body at ${field}`} holds an escaped lone UTF-16 surrogate (such as "\\ud800"), which is not a character and cannot be stored. Send valid Unicode text.`,
        ),
      );
      return;
    }
    next();
  };
  // An operation that takes no body never has one here: knownOperation refused it unread (400 unknown_field). Such a
  // request (GET /health and every read) skips the parser, which would only find that out again (decision 0056).
  const whenBodyTaken =
    (step: RequestHandler): RequestHandler =>
    (req, res, next) =>
      operationOf(res)?.takesBody === false ? next() : step(req, res, next);
  return [whenBodyTaken(parse), whenBodyTaken(afterParse)];
}

/** The body-parser error `type` of a body that is not UTF-8; its message is the problem's detail. */
export const NOT_UTF8 = 'entity.not.utf8';

function invalidUtf8Detail(bytes: Buffer): string {
  const offset = firstInvalidUtf8Offset(bytes);
  const byte = bytes[offset]?.toString(16).toUpperCase().padStart(2, '0') ?? '';
  return `The body is not valid UTF-8: the sequence that starts with the byte 0x${byte} at offset ${offset} is not UTF-8 (Latin-1 or Windows-1252 text?). JSON bodies must be UTF-8 (RFC 8259)`;
}

/** The offset where the first invalid UTF-8 sequence starts (a stray byte, or a lead byte whose sequence is broken). */
export function firstInvalidUtf8Offset(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i]!;
    // Lengths and the allowed range of the second byte, per RFC 3629 section 4 (no overlongs, no surrogates, <= U+10FFFF).
    let length: number;
    let low = 0x80;
    let high = 0xbf;
    if (lead < 0x80) {
      i += 1;
      continue;
    } else if (lead >= 0xc2 && lead <= 0xdf) length = 2;
    else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      if (lead === 0xe0) low = 0xa0;
      if (lead === 0xed) high = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      if (lead === 0xf0) low = 0x90;
      if (lead === 0xf4) high = 0x8f;
    } else return i;
    for (let k = 1; k < length; k += 1) {
      const next = bytes[i + k];
      if (next === undefined) return i;
      if (k === 1 ? next < low || next > high : next < 0x80 || next > 0xbf) return i;
    }
    i += length;
  }
  return bytes.length;
}

/**
 * How deeply arrays and objects nest in a parsed value (a scalar is 0) and the most members of one object, without
 * recursion. Only containers are stacked; the walk stops as soon as either limit is passed.
 */
function bodyShape(value: unknown): { depth: number; widest: number } {
  if (value === null || typeof value !== 'object') return { depth: 0, widest: 0 };
  let deepest = 0;
  let widest = 0;
  const stack: unknown[] = [value];
  const depths: number[] = [1];
  while (stack.length > 0) {
    const node = stack.pop() as Record<string, unknown>;
    const depth = depths.pop()!;
    if (depth > deepest) deepest = depth;
    if (deepest > JSON_MAX_DEPTH) break;
    let members = 0;
    for (const key in node) {
      members += 1;
      const child = node[key];
      if (child !== null && typeof child === 'object') {
        stack.push(child);
        depths.push(depth + 1);
      }
    }
    // Arrays are bounded by their schemas' maxItems, checked by the validator; only objects count here.
    if (!Array.isArray(node) && members > widest) widest = members;
    if (widest > JSON_MAX_OBJECT_MEMBERS) break;
  }
  return { depth: deepest, widest };
}

/** With the u flag a surrogate pair reads as one code point, so only a lone surrogate matches. */
const LONE_SURROGATE = /\p{Surrogate}/u;
