// Cursors are opaque to callers but carry their list, a hash of the filters they were issued for and the keyset
// position, signed with HMAC so that an edited, foreign or stale-format cursor is refused (400 invalid_field).
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';
import { ApiError } from '../errors/api-error.js';

const CURSOR_VERSION = 2; // version 1 was the offset cursor before 1.5.0, refused since
let signingKey = 'erp-cursor-development-key';

/** Set once at start from configuration (CURSOR_SECRET), so that every process signs alike. */
export function setCursorSigningKey(secret: string): void {
  signingKey = secret;
}

export interface CursorPosition {
  /** updatedAt (ISO) in feed order; absent in the default order. */
  t?: string;
  /** The list's own order key (its OrderKey's value) in the default order of a list that has one. */
  k?: string;
  id: string;
}

interface CursorPayload {
  v: number;
  l: string;
  f: string;
  p: CursorPosition;
}

export function filtersFingerprint(filters: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson(filters)).digest('base64url').slice(0, 16);
}

export function encodeCursor(list: string, filters: Record<string, unknown>, position: CursorPosition): string {
  const payload = Buffer.from(
    JSON.stringify({ v: CURSOR_VERSION, l: list, f: filtersFingerprint(filters), p: position } satisfies CursorPayload),
  ).toString('base64url');
  return `${payload}.${sign(payload)}`;
}

export function decodeCursor(cursor: string, list: string, filters: Record<string, unknown>): CursorPosition {
  const refuse = (why: string) =>
    new ApiError(
      'invalid_field',
      `The cursor is not one this list issued for these filters (${why}). Pass nextCursor unchanged, with the same filters, or start again without a cursor.`,
      [{ field: '/query/cursor', code: 'invalid_field', message: why }],
    );
  const [payload, signature] = cursor.split('.');
  if (!payload || !signature) throw refuse('malformed');
  const expected = Buffer.from(sign(payload));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw refuse('signature does not match');
  let decoded: CursorPayload;
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString()) as CursorPayload;
  } catch {
    throw refuse('malformed');
  }
  if (decoded.v !== CURSOR_VERSION) throw refuse('a cursor format this version no longer accepts');
  if (decoded.l !== list) throw refuse('issued by another list');
  if (decoded.f !== filtersFingerprint(filters)) throw refuse('issued for other filters');
  return decoded.p;
}

function sign(payload: string): string {
  return createHmac('sha256', signingKey).update(payload).digest('base64url').slice(0, 22);
}
