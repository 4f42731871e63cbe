// The console's administration pages over HTTP (no browser), against the real service with its simulators: webhook
// endpoints added, tested, rotated, turned off and on, a delivery resent (a real receiver checks the signatures with
// the secrets the pages showed once); what QuickBooks and EFRIS hold for a posting, read through the connectors; the
// members (added with a first password, role changed, removed; the owner and oneself left alone); the scheduled
// sweep of ended sessions. Each change needs the session's CSRF token, is refused to role none, and is in the API log
// under the member.
import test from 'ava';
import { pino } from 'pino';
import { kyselyOver } from '../../server/platform/database/database.js';
import { createOrganization } from '../../server/platform/access/organizations.js';
import { addMember } from '../../server/platform/access/members.js';
import { setPassword, tokenHash } from '../../server/console/sessions.js';
import { CONSOLE_SESSIONS_PURGE_QUEUE, jobDefinitions } from '../../server/composition/jobs.js';
import { startTestService, type TestService } from '../support/service.js';
import { eventually, startReceiver, verifySignature, type Receiver } from '../webhooks/receiver.js';
import { ConsoleClient, postedThere, seedDistributor, type Distributor } from './support.js';

let running: TestService;
let shop: Distributor;
let receiver: Receiver;
const db = () => kyselyOver(running.service.database.pool);

test.before(async () => {
  running = await startTestService('console_manage', { env: { SIMULATORS: 'true', WEBHOOK_ALLOW_LOOPBACK: 'true' } });
  shop = await seedDistributor(db(), running.database.url);
  receiver = await startReceiver();
});
test.after.always(async () => {
  await receiver?.close();
  await running?.stop();
});

async function signedIn(email: string, password: string): Promise<ConsoleClient> {
  const client = new ConsoleClient(running.baseUrl);
  const response = await client.signIn(email, password);
  if (response.status !== 303) throw new Error(`sign-in failed: ${response.status} ${response.text.slice(0, 300)}`);
  return client;
}
const owner = () => signedIn(shop.owner.email, shop.owner.password);
const clerk = () => signedIn(shop.clerk.email, shop.clerk.password);
const secretOn = (text: string) => /<p class="secret">([^<]+)<\/p>/.exec(text)?.[1] ?? null;

/** The organisation's API log entries of a console path (after the writer's flush). */
async function logged(path: string | RegExp) {
  await running.service.apiLog.flush();
  const rows = await db()
    .selectFrom('api_log')
    .select(['key_prefix', 'method', 'path', 'status'])
    .where('organization_id', '=', shop.organizationId)
    .orderBy('time')
    .execute();
  return rows.filter((row) => (typeof path === 'string' ? row.path === path : path.test(row.path)));
}

test.serial(
  'webhooks: an endpoint added in the console signs its deliveries with the secret shown once; a test event, a rotation (both secrets sign during the overlap), off and on again (its failed delivery sent again), a resend',
  async (t) => {
    const client = await owner();
    const added = await client.post('/console/webhooks', '/console/webhooks', {
      url: `${receiver.url}/hooks`,
      event: 'dms.document.flagged',
    });
    t.is(added.status, 201, added.text.slice(0, 500));
    const secret = secretOn(added.text);
    t.regex(secret ?? '', /^whsec_/);
    const endpoint = await db()
      .selectFrom('webhook_endpoints')
      .select(['id', 'url', 'events', 'enabled'])
      .where('organization_id', '=', shop.organizationId)
      .where('url', '=', `${receiver.url}/hooks`)
      .executeTakeFirstOrThrow();
    t.deepEqual(endpoint.events, ['dms.document.flagged']);
    t.false(
      (await client.get(`/console/webhooks/${endpoint.id}`)).text.includes(secret!),
      'the secret is not shown again',
    );
    t.deepEqual(await logged('/console/webhooks'), [
      { key_prefix: `member:${shop.owner.memberId}`, method: 'POST', path: '/console/webhooks', status: 201 },
    ]);

    // A test event: queued with its job, sent by the worker, signed with the secret shown.
    const tested = await client.post(`/console/webhooks/${endpoint.id}/test`, `/console/webhooks/${endpoint.id}`);
    t.is(tested.status, 303);
    t.is(tested.location, `/console/webhooks/${endpoint.id}?notice=tested`);
    const [first] = await receiver.waitFor(1);
    t.is(first!.body.type, 'webhook.test');
    t.true(verifySignature(first!.headers['service-signature'] as string, first!.raw, secret!).valid);

    // Rotation with a 24-hour overlap: the new secret is shown once and both sign the next delivery.
    const rotated = await client.post(`/console/webhooks/${endpoint.id}/rotate`, `/console/webhooks/${endpoint.id}`, {
      overlapHours: '24',
    });
    t.is(rotated.status, 200);
    const newSecret = secretOn(rotated.text);
    t.regex(newSecret ?? '', /^whsec_/);
    t.not(newSecret, secret);
    t.true(rotated.text.includes('the previous one also signs until'));
    await client.post(`/console/webhooks/${endpoint.id}/test`, `/console/webhooks/${endpoint.id}`);
    const [, second] = await receiver.waitFor(2);
    const signed = verifySignature(second!.headers['service-signature'] as string, second!.raw, newSecret!);
    t.true(signed.valid);
    t.is(signed.signatures, 2, 'the old secret signs too during the overlap');
    t.true(verifySignature(second!.headers['service-signature'] as string, second!.raw, secret!).valid);
    const badHours = await client.post(`/console/webhooks/${endpoint.id}/rotate`, `/console/webhooks/${endpoint.id}`, {
      overlapHours: 'soon',
    });
    t.is(badHours.status, 422);
    t.is(secretOn(badHours.text), null, 'no secret made');

    // Off, a delivery failed meanwhile (as after a failed series), on again: that delivery is sent again. (First the
    // worker's record of the deliveries so far: the receiver has them before the worker writes their outcome.)
    const settled = (what: string) =>
      eventually(
        async () =>
          (
            await db()
              .selectFrom('webhook_deliveries')
              .select('id')
              .where('organization_id', '=', shop.organizationId)
              .where('endpoint_id', '=', endpoint.id)
              .where('status', '=', 'pending')
              .execute()
          ).length === 0,
        15_000,
        what,
      );
    await settled('both test deliveries recorded as sent');
    t.is(
      (await client.post(`/console/webhooks/${endpoint.id}/disable`, `/console/webhooks/${endpoint.id}`)).status,
      303,
    );
    const deliveryId = (
      await db()
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('organization_id', '=', shop.organizationId)
        .where('endpoint_id', '=', endpoint.id)
        .orderBy('created_at')
        .executeTakeFirstOrThrow()
    ).id;
    await db()
      .updateTable('webhook_deliveries')
      .set({ status: 'failed', attempts: 7 })
      .where('organization_id', '=', shop.organizationId)
      .where('id', '=', deliveryId)
      .execute();
    const offPage = await client.get(`/console/webhooks/${endpoint.id}`);
    t.true(offPage.text.includes('Turn this endpoint on again'));
    t.false(offPage.text.includes('Send a test event'), 'no test while it is off');
    const on = await client.post(`/console/webhooks/${endpoint.id}/enable`, `/console/webhooks/${endpoint.id}`);
    t.is(on.status, 303);
    t.is(on.location, `/console/webhooks/${endpoint.id}?notice=enabled`);
    const [, , third] = await receiver.waitFor(3, 30_000);
    t.is(third!.body.id, first!.body.id, "the failed delivery's event, sent again");
    const row = await db()
      .selectFrom('webhook_endpoints')
      .select(['enabled', 'disabled_reason'])
      .where('organization_id', '=', shop.organizationId)
      .where('id', '=', endpoint.id)
      .executeTakeFirstOrThrow();
    t.deepEqual(row, { enabled: true, disabled_reason: null });

    // A resend of one delivery from its row's button: the same event id once more.
    await settled('the delivery sent again recorded as sent');
    const page = await client.get(`/console/webhooks/${endpoint.id}`);
    t.true(page.text.includes(`action="/console/webhooks/${endpoint.id}/deliveries/${deliveryId}/resend"`));
    const resent = await client.post(
      `/console/webhooks/${endpoint.id}/deliveries/${deliveryId}/resend`,
      `/console/webhooks/${endpoint.id}`,
    );
    t.is(resent.status, 303);
    const [, , , fourth] = await receiver.waitFor(4, 30_000);
    t.is(fourth!.body.id, first!.body.id);
    t.is(
      (
        await client.post(
          `/console/webhooks/${endpoint.id}/deliveries/whd_00000000000000000000000000/resend`,
          `/console/webhooks/${endpoint.id}`,
        )
      ).status,
      404,
    );

    const actions = (await logged(new RegExp(`^/console/webhooks/${endpoint.id}/`))).map(
      (entry) => `${entry.key_prefix} ${entry.path.split('/').slice(4).join('/')} ${entry.status}`,
    );
    t.deepEqual(actions, [
      `member:${shop.owner.memberId} test 303`,
      `member:${shop.owner.memberId} rotate 200`,
      `member:${shop.owner.memberId} test 303`,
      `member:${shop.owner.memberId} rotate 422`,
      `member:${shop.owner.memberId} disable 303`,
      `member:${shop.owner.memberId} enable 303`,
      `member:${shop.owner.memberId} deliveries/${deliveryId}/resend 303`,
    ]);
  },
);

test.serial(
  "webhooks: a refused address or no event is 422 with the reason and stores nothing; no CSRF token is 403; role none is 403; another organisation's endpoint is 404",
  async (t) => {
    const client = await owner();
    const count = async () =>
      (
        await db()
          .selectFrom('webhook_endpoints')
          .select('id')
          .where('organization_id', '=', shop.organizationId)
          .execute()
      ).length;
    const before = await count();
    const privateAddress = await client.post('/console/webhooks', '/console/webhooks', {
      url: 'https://10.1.2.3/hooks',
      event: 'dms.document.flagged',
    });
    t.is(privateAddress.status, 422);
    t.regex(privateAddress.text, /The endpoint was not added: [^<]*10\.1\.2\.3/);
    t.true(privateAddress.text.includes('value="https://10.1.2.3/hooks"'), 'the form keeps what was typed');
    const noEvent = await client.post('/console/webhooks', '/console/webhooks', {
      url: 'https://erp.example.com/hooks',
    });
    t.is(noEvent.status, 422);
    const forged = await client.request('POST', '/console/webhooks', { url: `${receiver.url}/forged`, event: '*' });
    t.is(forged.status, 403);
    t.is(await count(), before);

    const other = await createOrganization(db(), { name: 'Other Distributor' });
    const theirs = await db()
      .insertInto('webhook_endpoints')
      .values({
        organization_id: other.id,
        id: 'we_consoleotherorg0000000001',
        url: 'https://other.example.com/hooks',
        events: ['*'],
        secret_ciphertext: 'x',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    for (const action of ['rotate', 'enable', 'disable', 'test']) {
      t.is(
        (await client.post(`/console/webhooks/${theirs.id}/${action}`, '/console/webhooks', { overlapHours: '0' }))
          .status,
        404,
        action,
      );
    }
    t.is((await client.get(`/console/webhooks/${theirs.id}`)).status, 404);

    const reader = await clerk();
    const token = ConsoleClient.csrf((await reader.get('/console/dms')).text);
    t.is(
      (await reader.request('POST', '/console/webhooks', { _csrf: token, url: `${receiver.url}/clerk`, event: '*' }))
        .status,
      403,
    );
    t.is(await count(), before);
  },
);

test.serial(
  "postings: a posting's page shows what QuickBooks holds (id, number, amount, state; voided once voided there; nothing once gone) and what EFRIS holds (FDN, verification code), read through the connectors",
  async (t) => {
    const { ref, receipt, quickBooks } = await postedThere(db(), running.service.connectors, shop.organizationId);
    const client = await owner();
    const list = await client.get('/console/postings');
    t.true(list.text.includes('href="/console/postings/xpo_console101a"'), 'the list links each posting to its page');
    const accounting = await client.get('/console/postings/xpo_console101a');
    t.is(accounting.status, 200);
    t.true(accounting.text.includes('What the accounting system (QuickBooks) holds'));
    t.true(accounting.text.includes(`<dt>Type and id there</dt><dd>Invoice ${ref.id}</dd>`));
    t.true(accounting.text.includes('<dt>Number there</dt><dd>CS-000101</dd>'));
    t.true(accounting.text.includes('<dt>Amount</dt><dd>59000 UGX</dd>'));
    t.true(accounting.text.includes('<dt>State there</dt><dd>active</dd>'));

    const voided = await quickBooks.reverse('req-console-101-void', ref);
    t.true(voided.ok);
    const afterVoid = await client.get('/console/postings/xpo_console101a');
    t.true(afterVoid.text.includes('<dt>Amount</dt><dd>0 UGX</dd>'), 'read there again: the void zeroed it');
    t.true(afterVoid.text.includes('<dt>State there</dt><dd class="state-rejected">voided</dd>'));

    const fiscal = await client.get('/console/postings/xpo_console101f');
    t.true(fiscal.text.includes('What the fiscal system (EFRIS) holds'));
    t.true(fiscal.text.includes(`<dt>Fiscal document number (FDN)</dt><dd>${receipt.fdn}</dd>`));
    t.true(fiscal.text.includes(`<dt>Verification code</dt><dd>${receipt.verificationCode}</dd>`));

    t.true(
      (await client.get('/console/postings/xpo_console102a')).text.includes(
        'The posting has no reference in the accounting system yet (pending).',
      ),
    );
    t.true((await client.get('/console/postings/xpo_console103a')).text.includes('It holds no such document now'));
    t.is((await client.get('/console/postings/xpo_nosuchposting')).status, 404);
    // A DMS document that made invoice CS-000101 links its postings to these pages, for the members who see postings.
    await db()
      .updateTable('dms_documents')
      .set({ accounting_type: 'invoice', accounting_id: 'inv_console101' })
      .where('organization_id', '=', shop.organizationId)
      .where('id', '=', shop.documents.rejectedR01)
      .execute();
    t.true(
      (await client.get(`/console/dms/${shop.documents.rejectedR01}`)).text.includes(
        'href="/console/postings/xpo_console101a"',
      ),
    );
    t.false(
      (await (await clerk()).get(`/console/dms/${shop.documents.rejectedR01}`)).text.includes(
        'href="/console/postings/',
      ),
    );
    t.is(
      (await (await clerk()).get('/console/postings/xpo_console101a')).status,
      403,
      'role none: no postings (the API lists none for a key)',
    );
  },
);

test.serial(
  'members: the owner adds one with a first password shown once (who then signs in), changes its role (its next page follows), removes it (its session ends); the owner and oneself are left alone; every change in the API log',
  async (t) => {
    const client = await owner();
    const page = await client.get('/console/members');
    t.is(page.status, 200);
    t.true(page.text.includes('Peter Ssali'));
    t.false(page.text.includes(`action="/console/members/${shop.owner.memberId}/`), 'no action on the owner (oneself)');

    const added = await client.post('/console/members', '/console/members', {
      name: 'Joan Akello',
      email: 'Joan@Example.com',
      role: 'none',
    });
    t.is(added.status, 201);
    const password = secretOn(added.text)!;
    t.true(password.length >= 12);
    const joan = await db()
      .selectFrom('members')
      .select(['id', 'role', 'email'])
      .where('organization_id', '=', shop.organizationId)
      .where('email', '=', 'joan@example.com')
      .executeTakeFirstOrThrow();
    t.is(joan.role, 'none');
    t.false((await client.get('/console/members')).text.includes(password), 'the password is not shown again');
    const joanClient = await signedIn('joan@example.com', password);
    t.is((await joanClient.get('/console/keys')).status, 403, 'role none');
    t.is((await joanClient.get('/console/members')).status, 403);

    const taken = await client.post('/console/members', '/console/members', {
      name: 'Joan Again',
      email: 'joan@example.com',
      role: 'none',
    });
    t.is(taken.status, 422);
    t.true(taken.text.includes('joan@example.com is already member'));
    const badEmail = await client.post('/console/members', '/console/members', {
      name: 'No Mail',
      email: 'not-an-address',
      role: 'none',
    });
    t.is(badEmail.status, 422);
    t.regex(badEmail.text, /The member was not added: email not-an-address is not an e-mail address/);
    t.is(
      (
        await client.post('/console/members', '/console/members', {
          name: 'Second Owner',
          email: 'owner2@example.com',
          role: 'owner',
        })
      ).status,
      422,
      'no second owner from the console',
    );

    t.is(
      (await client.post(`/console/members/${joan.id}/role`, '/console/members', { role: 'manage-settings' })).status,
      303,
    );
    t.is((await joanClient.get('/console/keys')).status, 200, 'the new role applies from the next page');
    t.is((await client.post(`/console/members/${joan.id}/role`, '/console/members', { role: 'owner' })).status, 422);

    // Joan, now managing settings, may not change the owner nor herself.
    t.is(
      (await joanClient.post(`/console/members/${shop.owner.memberId}/role`, '/console/members', { role: 'none' }))
        .status,
      403,
    );
    t.is((await joanClient.post(`/console/members/${shop.owner.memberId}/remove`, '/console/members')).status, 403);
    t.is((await joanClient.post(`/console/members/${joan.id}/role`, '/console/members', { role: 'none' })).status, 403);
    t.is(
      (
        await db()
          .selectFrom('members')
          .select('role')
          .where('organization_id', '=', shop.organizationId)
          .where('id', '=', shop.owner.memberId)
          .executeTakeFirstOrThrow()
      ).role,
      'owner',
    );

    // A new password for the clerk: shown once, ends the clerk's sessions, signs in.
    const clerkSession = await clerk();
    const renewed = await client.post(`/console/members/${shop.clerk.memberId}/password`, '/console/members');
    t.is(renewed.status, 200);
    const clerkPassword = secretOn(renewed.text)!;
    t.is((await clerkSession.get('/console/dms')).status, 303, "the clerk's session has ended");
    await signedIn(shop.clerk.email, clerkPassword);
    shop.clerk.password = clerkPassword;

    // A member who made a key stays (the key keeps its id); Joan, who made none, is removed and her session ends.
    const keyMaker = await addMember(db(), shop.organizationId, {
      name: 'Key Maker',
      email: 'keys@example.com',
      role: 'manage-settings',
    });
    await setPassword(db(), shop.organizationId, keyMaker.id, 'a key maker password');
    const maker = await signedIn('keys@example.com', 'a key maker password');
    t.is(
      (await maker.post('/console/keys', '/console/keys', { name: 'Maker key', scope: 'customers:read' })).status,
      201,
    );
    const refused = await client.post(`/console/members/${keyMaker.id}/remove`, '/console/members');
    t.is(refused.status, 409);
    t.regex(refused.text, /Key Maker was not removed: member mbr_\w+ made the key/);
    t.is((await client.post(`/console/members/${joan.id}/remove`, '/console/members')).status, 303);
    t.is(
      await db()
        .selectFrom('members')
        .select('id')
        .where('organization_id', '=', shop.organizationId)
        .where('id', '=', joan.id)
        .executeTakeFirst(),
      undefined,
    );
    t.is((await joanClient.get('/console/dms')).status, 303, 'her session is gone with her');
    t.is((await client.post('/console/members/mbr_00000000000000000000000000/remove', '/console/members')).status, 404);
    t.is(
      (await client.request('POST', `/console/members/${keyMaker.id}/role`, { role: 'none' })).status,
      403,
      'no CSRF token',
    );

    const csv = await client.get('/console/members?format=csv');
    t.is(csv.text.split('\r\n')[0], 'id,name,email,role,consolePassword,createdAt');
    t.true(csv.text.includes(`${keyMaker.id},Key Maker,keys@example.com,manage-settings,true,`));

    const entries = (await logged(/^\/console\/members/))
      .filter((entry) => entry.key_prefix === `member:${shop.owner.memberId}`)
      .map((entry) => `${entry.method} ${entry.path.replace(/mbr_\w+/, 'MEMBER')} ${entry.status}`);
    t.deepEqual(entries, [
      'POST /console/members 201',
      'POST /console/members 422',
      'POST /console/members 422',
      'POST /console/members 422',
      'POST /console/members/MEMBER/role 303',
      'POST /console/members/MEMBER/role 422',
      'POST /console/members/MEMBER/password 200',
      'POST /console/members/MEMBER/remove 409',
      'POST /console/members/MEMBER/remove 303',
      'POST /console/members/MEMBER/remove 404',
    ]);
  },
);

test.serial(
  'the scheduled sweep (console.sessions.purge) deletes the sessions that ended, idle or past their lifetime, in every organisation, and keeps the live ones',
  async (t) => {
    const live = await owner();
    const idle = await owner();
    const old = await owner();
    const hashOf = (client: ConsoleClient) => tokenHash(client.cookies.get('console_session')!);
    await db()
      .updateTable('console_sessions')
      .set({ last_seen_at: new Date(Date.now() - 31 * 60 * 1000) })
      .where('token_hash', '=', hashOf(idle))
      .execute();
    await db()
      .updateTable('console_sessions')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('token_hash', '=', hashOf(old))
      .execute();
    // The job as the service schedules it (its definition among the service's own), run once here rather than waiting for its quarter hour.
    const context = {
      db: db(),
      logger: pino({ level: 'silent' }),
      config: running.service.config,
      connectors: running.service.connectors,
      processId: running.service.processId,
      publicBaseUrl: () => running.baseUrl,
    };
    const job = jobDefinitions(context).find((definition) => definition.queue === CONSOLE_SESSIONS_PURGE_QUEUE);
    t.truthy(job?.cron, 'scheduled');
    await job!.handle([] as never, undefined as never);
    const left = new Set(
      (await db().selectFrom('console_sessions').select('token_hash').execute()).map((row) => row.token_hash),
    );
    t.true(left.has(hashOf(live)));
    t.false(left.has(hashOf(idle)));
    t.false(left.has(hashOf(old)));
    t.is((await live.get('/console/dms')).status, 200);
  },
);

test.serial('the new pages answer on this data (times logged, not asserted)', async (t) => {
  const client = await owner();
  const endpoint = (
    await db()
      .selectFrom('webhook_endpoints')
      .select('id')
      .where('organization_id', '=', shop.organizationId)
      .executeTakeFirstOrThrow()
  ).id;
  const pages = [
    '/console/members',
    '/console/webhooks',
    `/console/webhooks/${endpoint}`,
    '/console/postings/xpo_console101a',
    '/console/postings/xpo_console101f',
  ];
  for (const path of pages) await client.get(path);
  for (const path of pages) {
    const started = performance.now();
    const response = await client.get(path);
    t.is(response.status, 200, path);
    t.log(`${path}: ${(performance.now() - started).toFixed(1)} ms`);
  }
});
