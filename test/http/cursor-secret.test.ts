// CURSOR_SECRET is what cursors are signed with: a service configured with one issues cursors signed under it
// and refuses a cursor signed under the development key (what every other test's service uses). Its own file:
// the signing key is set once per process, at start.
import test from 'ava';
import { createHmac } from 'node:crypto';
import { createCaller } from '../support/callers.js';
import { useTestService } from '../support/service.js';

const CURSOR_SECRET = 'a-configured-cursor-secret-for-tests';
const api = useTestService(test, 'cursor_secret', { env: { CURSOR_SECRET } });
const sign = (payload: string, key: string) =>
  createHmac('sha256', key).update(payload).digest('base64url').slice(0, 22);

test('CURSOR_SECRET being used at all: cursors are signed with the configured secret, and one signed with the development key is 400 invalid_field', async (t) => {
  t.is(api().config.cursorSecret, CURSOR_SECRET);
  const caller = await createCaller(api().service.database.pool);
  for (let i = 0; i < 2; i++) {
    const created = await api().request('POST', '/customers', {
      headers: { ...caller.auth, 'Idempotency-Key': `cursor-secret-${i}` },
      json: { outletCode: `UG${String(8_100_000 + i)}`, name: 'Cursor Shop', channel: 'retail' },
    });
    t.is(created.status, 201);
  }
  const first = await api().request('GET', '/customers?limit=1', { headers: caller.auth });
  const cursor: string = first.body.nextCursor;
  const [payload, signature] = cursor.split('.') as [string, string];
  t.is(signature, sign(payload, CURSOR_SECRET), 'signed with CURSOR_SECRET');
  const next = await api().request('GET', `/customers?limit=1&cursor=${encodeURIComponent(cursor)}`, {
    headers: caller.auth,
  });
  t.is(next.status, 200);
  t.is(next.body.data.length, 1);

  const developmentSigned = `${payload}.${sign(payload, 'erp-cursor-development-key')}`;
  const refused = await api().request('GET', `/customers?limit=1&cursor=${encodeURIComponent(developmentSigned)}`, {
    headers: caller.auth,
  });
  t.is(refused.status, 400);
  t.is(refused.body.code, 'invalid_field');
  t.deepEqual(refused.body.errors, [
    { field: '/query/cursor', code: 'invalid_field', message: 'signature does not match' },
  ]);
});
