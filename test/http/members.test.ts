// Organisation members over HTTP: GET /me names the member who had the key made; a salesperson's memberId must be a
// member of the organisation; notifications go to the owner and the members who manage settings (not to role
// none), each read state per member (GET /notifications?member=, POST /notifications/{id}/read?member=).
import test from 'ava';
import { createApiKey } from '../../server/platform/access/api-keys.js';
import { addMember } from '../../server/platform/access/members.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { notify } from '../../server/platform/webhooks/notifications.js';
import { createCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';

const api = useSharedService(test);
const pool = () => api().pool;
const db = () => kyselyOver(pool());

test('GET /me shows the member recorded on the key (null when none was)', async (t) => {
  const caller = await createCaller(pool(), { scopes: [] });
  const owner = await addMember(db(), caller.organizationId, {
    name: 'Grace Namuli',
    email: 'grace@example.com',
    role: 'owner',
  });
  const key = await createApiKey(db(), {
    organizationId: caller.organizationId,
    environment: 'sandbox',
    scopes: [],
    createdByMemberId: owner.id,
  });
  const mine = await api().request('GET', '/me', { headers: { Authorization: `Bearer ${key.secret}` } });
  t.is(mine.status, 200);
  t.is(mine.body.createdByMemberId, owner.id);
  t.is((await api().request('GET', '/me', { headers: caller.auth })).body.createdByMemberId, null);
});

test("a salesperson links to a member of the organisation; another organisation's member is 422 naming /memberId; null unlinks", async (t) => {
  const caller = await createCaller(pool());
  const other = await createCaller(pool());
  const member = await addMember(db(), caller.organizationId, {
    name: 'Joseph Okello',
    email: 'jokello@example.com',
    role: 'none',
  });
  const foreign = await addMember(db(), other.organizationId, {
    name: 'Someone Else',
    email: 'else@example.com',
    role: 'none',
  });
  const put = (body: Record<string, unknown>) =>
    api().request('PUT', '/salespeople/by-code/dms/S014', { headers: caller.auth, json: body });
  const created = await put({ salesmanCode: 'S014', name: 'Joseph Okello', memberId: member.id });
  t.is(created.status, 201, created.text);
  t.is(created.body.memberId, member.id);
  const refused = await put({ memberId: foreign.id });
  t.is(refused.status, 422);
  t.like(refused.body.errors[0], { field: '/memberId', code: 'business_rule' });
  const unlinked = await put({ memberId: null });
  t.is(unlinked.body.memberId, null);
  t.is(
    (await pool().query('SELECT member_id FROM salespeople WHERE id = $1', [created.body.id])).rows[0].member_id,
    null,
  );
});

test('a notification goes to the owner and the members who manage settings, not to role none; each reads it for itself', async (t) => {
  const caller = await createCaller(pool(), { scopes: ['notifications:read', 'notifications:write'] });
  const org = caller.organizationId;
  const owner = await addMember(db(), org, { name: 'Owner', email: 'owner@example.com', role: 'owner' });
  const settings = await addMember(db(), org, {
    name: 'Settings',
    email: 'settings@example.com',
    role: 'manage-settings',
  });
  const salesman = await addMember(db(), org, { name: 'Salesman', email: 'salesman@example.com', role: 'none' });
  const id = await notify(
    db(),
    org,
    'dms_reconciliation',
    'DMS reconciliation of salesman SM01 on 2026-11-25: 1 difference (cash).',
  );
  const inbox = (member: string, query = '') =>
    api().request('GET', `/notifications?member=${member}${query}`, { headers: caller.auth });

  for (const member of [owner, settings]) {
    const listed = await inbox(member.id);
    t.is(listed.status, 200, listed.text);
    t.like(listed.body.data, [{ id, kind: 'dms_reconciliation', readAt: null }]);
  }
  t.deepEqual((await inbox(salesman.id)).body.data, []);

  const read = await api().request('POST', `/notifications/${id}/read?member=${owner.id}`, { headers: caller.auth });
  t.is(read.status, 200, read.text);
  t.regex(read.body.readAt, /^\d{4}-\d{2}-\d{2}T/);
  const again = await api().request('POST', `/notifications/${id}/read?member=${owner.id}`, { headers: caller.auth });
  t.is(again.body.readAt, read.body.readAt, 'marking it again keeps the first time');
  t.is((await inbox(owner.id, '&unread=true')).body.data.length, 0);
  t.like(
    (await inbox(settings.id, '&unread=true')).body.data,
    [{ id, readAt: null }],
    'the other recipient has not read it',
  );

  t.is(
    (await api().request('POST', `/notifications/${id}/read?member=${salesman.id}`, { headers: caller.auth })).status,
    404,
    'it did not go to role none',
  );
  const stranger = await inbox('mbr_01JD4R0W5K7M9P1Q3S5T7V9X1Z');
  t.is(stranger.status, 404);
  t.is(stranger.body.errors[0].field, '/query/member');
  const noScope = await createCaller(pool(), { organizationId: org, scopes: ['customers:read'] });
  t.is((await api().request('GET', `/notifications?member=${owner.id}`, { headers: noScope.auth })).status, 403);
});

test("without member, the organisation's view: read once any recipient read it; unread=true and limit count unread ones only; marking reads it for every recipient", async (t) => {
  const caller = await createCaller(pool(), { scopes: ['notifications:read', 'notifications:write'] });
  const org = caller.organizationId;
  const owner = await addMember(db(), org, { name: 'Owner', email: 'owner@example.com', role: 'owner' });
  const settings = await addMember(db(), org, {
    name: 'Settings',
    email: 'settings@example.com',
    role: 'manage-settings',
  });
  const older = await notify(db(), org, 'test', 'The older one.');
  const newer = await notify(db(), org, 'test', 'The newer one.');
  const view = async (query = '') =>
    (await api().request('GET', `/notifications${query}`, { headers: caller.auth })).body.data as {
      id: string;
      readAt: string | null;
    }[];

  t.deepEqual(
    (await view()).map((n) => [n.id, n.readAt]),
    [
      [newer, null],
      [older, null],
    ],
  );
  // The owner reads the newer one: read in the organisation's view, though the other recipient has not.
  await api().request('POST', `/notifications/${newer}/read?member=${owner.id}`, { headers: caller.auth });
  t.deepEqual(
    (await view('?unread=true&limit=1')).map((n) => n.id),
    [older],
    'the limit counts unread ones, not the newest',
  );
  const marked = await api().request('POST', `/notifications/${older}/read`, { headers: caller.auth });
  t.is(marked.status, 200, marked.text);
  t.regex(marked.body.readAt, /^\d{4}-\d{2}-\d{2}T/);
  t.deepEqual(await view('?unread=true'), []);
  const settingsInbox = await api().request('GET', `/notifications?member=${settings.id}&unread=true`, {
    headers: caller.auth,
  });
  t.deepEqual(
    settingsInbox.body.data.map((n: { id: string }) => n.id),
    [newer],
    'marked without a member, it is read for every recipient',
  );
  t.is(
    (await api().request('POST', '/notifications/ntf_01JD4S2B4D6F8H0K2M4P6R8T0V/read', { headers: caller.auth }))
      .status,
    404,
  );
});
