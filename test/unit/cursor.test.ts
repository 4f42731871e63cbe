// List cursors, pure (no database): a cursor carries its list, a fingerprint of its filters and the keyset
// position, signed with HMAC-SHA256 under CURSOR_SECRET; a cursor of another list, of other filters, of a retired
// format, edited, or signed under another key is 400 invalid_field on /query/cursor, with the reason named.
// The signing key is process-wide, so these tests run serially and put the development key back.
import test, { type ExecutionContext } from 'ava';
import { createHmac } from 'node:crypto';
import { canonicalJson } from '../../server/platform/canonical-json.js';
import { ApiError } from '../../server/platform/errors/api-error.js';
import {
  decodeCursor,
  encodeCursor,
  filtersFingerprint,
  setCursorSigningKey,
} from '../../server/platform/lists/cursor.js';

const DEVELOPMENT_KEY = 'erp-cursor-development-key';
const filters = { status: 'active', updatedSince: null, organizationId: 'org_1' };
const position = { id: 'cus_01J00000000000000000000000' };

test.afterEach.always(() => setCursorSigningKey(DEVELOPMENT_KEY));

const sign = (payload: string, key: string) =>
  createHmac('sha256', key).update(payload).digest('base64url').slice(0, 22);
const payloadOf = (body: unknown) => Buffer.from(JSON.stringify(body)).toString('base64url');

function refused(t: ExecutionContext, cursor: string, list: string, given: Record<string, unknown>, why: string): void {
  const error = t.throws(() => decodeCursor(cursor, list, given), { instanceOf: ApiError }, why) as ApiError;
  t.like(error, { code: 'invalid_field', status: 400 }, why);
  t.deepEqual(error.errors, [{ field: '/query/cursor', code: 'invalid_field', message: why }], why);
  t.is(
    error.detail,
    `The cursor is not one this list issued for these filters (${why}). Pass nextCursor unchanged, with the same filters, or start again without a cursor.`,
  );
}

test.serial(
  'a cursor is base64url JSON {v: 2, l, f, p} and 22 characters of its HMAC-SHA256, and decodes to its position in the default order and in the feed',
  (t) => {
    const cursor = encodeCursor('customers', filters, position);
    const payload = payloadOf({ v: 2, l: 'customers', f: filtersFingerprint(filters), p: position });
    t.is(cursor, `${payload}.${sign(payload, DEVELOPMENT_KEY)}`);
    t.deepEqual(decodeCursor(cursor, 'customers', filters), position);
    const feed = { t: '2025-06-01T10:00:00.000Z', id: 'cus_01J00000000000000000000001' };
    t.deepEqual(
      decodeCursor(
        encodeCursor('customers', { ...filters, updatedSince: '2025-01-01T00:00:00.000Z' }, feed),
        'customers',
        { ...filters, updatedSince: '2025-01-01T00:00:00.000Z' },
      ),
      feed,
    );
  },
);

test.serial(
  'a cursor from another list is refused: one /customers issued, sent to /products, is 400 invalid_field "issued by another list"',
  (t) => {
    const cursor = encodeCursor('customers', filters, position);
    refused(t, cursor, 'products', filters, 'issued by another list');
    refused(t, encodeCursor('products', filters, position), 'customers', filters, 'issued by another list');
  },
);

test.serial('a cursor reused with other filters is refused: a value changed, one added, one removed', (t) => {
  const cursor = encodeCursor('customers', filters, position);
  refused(t, cursor, 'customers', { ...filters, status: 'blocked' }, 'issued for other filters');
  refused(t, cursor, 'customers', { ...filters, region: 'Central' }, 'issued for other filters');
  refused(t, cursor, 'customers', { updatedSince: null, organizationId: 'org_1' }, 'issued for other filters');
  refused(t, cursor, 'customers', { ...filters, organizationId: 'org_2' }, 'issued for other filters');
});

test.serial(
  'the filters fingerprint is 16 characters of the SHA-256 of the canonical JSON, the same whatever the key order',
  (t) => {
    const fingerprint = filtersFingerprint(filters);
    t.regex(fingerprint, /^[A-Za-z0-9_-]{16}$/);
    t.is(fingerprint, filtersFingerprint({ organizationId: 'org_1', updatedSince: null, status: 'active' }));
    t.not(fingerprint, filtersFingerprint({ ...filters, status: 'inactive' }));
    t.is(canonicalJson({ b: 1, a: 2 }), '{"a":2,"b":1}');
  },
);

test.serial(
  'CURSOR_SECRET being used at all: with a configured key a cursor is signed with it, and one signed with the development key is refused',
  (t) => {
    const devCursor = encodeCursor('customers', filters, position);
    const secret = 'a-configured-cursor-secret-0123';
    setCursorSigningKey(secret);
    const cursor = encodeCursor('customers', filters, position);
    const [payload, signature] = cursor.split('.');
    t.is(signature, sign(payload!, secret));
    t.not(signature, sign(payload!, DEVELOPMENT_KEY));
    t.deepEqual(decodeCursor(cursor, 'customers', filters), position);
    refused(t, devCursor, 'customers', filters, 'signature does not match');
    setCursorSigningKey(DEVELOPMENT_KEY);
    refused(t, cursor, 'customers', filters, 'signature does not match');
  },
);

test.serial('an edited or malformed cursor is refused with the reason named', (t) => {
  const cursor = encodeCursor('customers', filters, position);
  const [payload, signature] = cursor.split('.') as [string, string];
  const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
  refused(t, `${flip(payload, 3)}.${signature}`, 'customers', filters, 'signature does not match');
  refused(t, `${payload}.${flip(signature, 2)}`, 'customers', filters, 'signature does not match');
  refused(t, `${payload}.${signature.slice(0, -1)}`, 'customers', filters, 'signature does not match');
  refused(t, `${payload}.${signature}A`, 'customers', filters, 'signature does not match');
  refused(t, payload, 'customers', filters, 'malformed');
  refused(t, `.${signature}`, 'customers', filters, 'malformed');
  refused(t, `${payload}.`, 'customers', filters, 'malformed');
  refused(t, '', 'customers', filters, 'malformed');
  const notJson = Buffer.from('{"v":2,').toString('base64url');
  refused(t, `${notJson}.${sign(notJson, DEVELOPMENT_KEY)}`, 'customers', filters, 'malformed');
});

test.serial('a cursor of a retired format (version 1, the offset cursor), even properly signed, is refused', (t) => {
  const v1 = payloadOf({ v: 1, l: 'customers', o: 25 });
  refused(
    t,
    `${v1}.${sign(v1, DEVELOPMENT_KEY)}`,
    'customers',
    filters,
    'a cursor format this version no longer accepts',
  );
  const v3 = payloadOf({ v: 3, l: 'customers', f: filtersFingerprint(filters), p: position });
  refused(
    t,
    `${v3}.${sign(v3, DEVELOPMENT_KEY)}`,
    'customers',
    filters,
    'a cursor format this version no longer accepts',
  );
});
