// The webhook and notifications commands of the operator CLI, run as child processes against this file's own
// database. The CLI only writes rows (deliveries pending and due now) and their jobs; no worker runs here.
import test from 'ava';
import pg from 'pg';
import { createOrganization } from '../../server/platform/access/organizations.js';
import { open } from '../../server/platform/webhooks/secret-box.js';
import { notify } from '../../server/platform/webhooks/notifications.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { runCli as runCliProcess, runCliJson, type CliRun } from '../support/cli.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { TEST_WEBHOOK_SECRET_KEY } from '../support/secrets.js';

let database: TestDatabase;
let pool: pg.Pool;
const LOCAL = { WEBHOOK_ALLOW_LOOPBACK: 'true' };

test.before(async () => {
  database = await createTestDatabase('webhook_cli');
  pool = new pg.Pool({ connectionString: database.url, max: 4 });
});
test.after.always(async () => {
  await pool?.end();
  await database?.drop();
});

function runCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runCliProcess(args, { DATABASE_URL: database.url, WEBHOOK_ALLOW_LOOPBACK: 'false', ...env });
}

function cliJson<T = any>(args: string[], env: Record<string, string> = {}): Promise<T> {
  return runCliJson<T>(args, { DATABASE_URL: database.url, WEBHOOK_ALLOW_LOOPBACK: 'false', ...env });
}

const newOrganization = async () =>
  (await createOrganization(kyselyOver(pool), { name: 'Webhook CLI Distributor' })).id;

test('webhook add prints {"id", "secret"} once, stores the secret sealed, and list never shows it', async (t) => {
  const org = await newOrganization();
  const added = await cliJson(
    [
      'webhook',
      'add',
      '--org',
      org,
      '--url',
      'http://127.0.0.1:9/hook',
      '--events',
      'customer.created,product.updated',
    ],
    LOCAL,
  );
  t.deepEqual(Object.keys(added), ['id', 'secret']);
  t.regex(added.secret, /^whsec_/);
  const row = (await pool.query('SELECT * FROM webhook_endpoints WHERE id = $1', [added.id])).rows[0];
  t.is(open(row.secret_ciphertext, Buffer.from(TEST_WEBHOOK_SECRET_KEY, 'hex')), added.secret);
  const [listed, human] = await Promise.all([
    cliJson(['webhook', 'list', '--org', org]),
    runCli(['webhook', 'list', '--org', org]),
  ]);
  t.like(listed, [
    { id: added.id, url: 'http://127.0.0.1:9/hook', events: ['customer.created', 'product.updated'], enabled: true },
  ]);
  for (const out of [JSON.stringify(listed), human.stdout]) {
    t.false(out.includes('whsec_'));
    t.false(out.includes(row.secret_ciphertext));
  }
  t.regex(
    human.stdout,
    new RegExp(`${added.id}\\s+http://127.0.0.1:9/hook\\s+customer.created,product.updated\\s+0\\s+enabled`),
  );
});

test('webhook add refuses unknown event types (2) and a name resolving to loopback without WEBHOOK_ALLOW_LOOPBACK (1), writing nothing', async (t) => {
  const org = await newOrganization();
  const [badEvent, loopback, plainHttp] = await Promise.all([
    runCli(['webhook', 'add', '--org', org, '--url', 'https://example.com/hook', '--events', 'order.exploded']),
    runCli(['webhook', 'add', '--org', org, '--url', 'https://localhost/hook', '--events', '*']),
    runCli(['webhook', 'add', '--org', org, '--url', 'http://127.0.0.1:9/hook', '--events', '*']),
  ]);
  t.is(badEvent.code, 2);
  t.regex(badEvent.stderr, /Unknown event type order.exploded/);
  t.is(loopback.code, 1);
  t.regex(loopback.stderr, /localhost resolves to .*loopback/);
  t.is(plainHttp.code, 1);
  t.regex(plainHttp.stderr, /https/);
  for (const run of [badEvent, loopback, plainHttp]) t.is(run.stdout, '');
  t.is(
    (await pool.query('SELECT count(*)::int AS n FROM webhook_endpoints WHERE organization_id = $1', [org])).rows[0].n,
    0,
  );
});

test('webhook disable, test, deliveries, resend, enable (which resends the failed deliveries) and rotate-secret', async (t) => {
  const org = await newOrganization();
  const { id } = await cliJson(
    ['webhook', 'add', '--org', org, '--url', 'http://127.0.0.1:9/hook', '--events', '*'],
    LOCAL,
  );

  const queued = await cliJson(['webhook', 'test', id]);
  t.regex(queued.eventId, /^evt_/);
  const [log] = await cliJson(['webhook', 'deliveries', id]);
  t.like(log, {
    id: queued.deliveryId,
    eventId: queued.eventId,
    eventType: 'webhook.test',
    status: 'pending',
    attempts: 0,
    lastResponseCode: null,
    lastDurationMs: null,
  });
  t.true(Date.parse(log.nextAttemptAt) <= Date.now());
  const jobsOf = async (deliveryId: string) =>
    (
      await pool.query(
        "SELECT data, group_id FROM pgboss.job WHERE name = 'webhooks.deliver' AND data->>'deliveryId' = $1 ORDER BY created_on",
        [deliveryId],
      )
    ).rows;
  t.like(
    await jobsOf(queued.deliveryId),
    [{ data: { deliveryId: queued.deliveryId, attempts: 0 }, group_id: id }],
    'the test sends its delivery job',
  );

  // As the worker leaves a delivery that ran out of retries:
  await pool.query(
    "UPDATE webhook_deliveries SET status = 'failed', attempts = 8, next_attempt_at = NULL, last_response_code = 500, last_duration_ms = 12.5 WHERE id = $1",
    [queued.deliveryId],
  );
  const [failed] = await cliJson(['webhook', 'deliveries', id]);
  t.like(failed, { status: 'failed', attempts: 8, lastResponseCode: 500, lastDurationMs: 12.5, nextAttemptAt: null });
  const resent = await cliJson(['webhook', 'resend', queued.deliveryId]);
  t.like(resent, { id: queued.deliveryId, eventId: queued.eventId, status: 'pending', attempts: 0 });
  t.is((await jobsOf(queued.deliveryId)).length, 2, 'resend sends a job');

  const disabled = await cliJson(['webhook', 'disable', id]);
  t.like(disabled, { id, enabled: false, disabledReason: 'disabled by an administrator' });
  const refusedTest = await runCli(['webhook', 'test', id]);
  t.is(refusedTest.code, 1);
  t.regex(refusedTest.stderr, /disabled/);

  await pool.query(
    "UPDATE webhook_deliveries SET status = 'failed', attempts = 8, next_attempt_at = NULL WHERE id = $1",
    [queued.deliveryId],
  );
  const enabled = await cliJson(['webhook', 'enable', id]);
  t.like(enabled, { endpoint: { id, enabled: true, disabledReason: null, consecutiveFailures: 0 }, resent: 1 });
  t.like(
    (await pool.query('SELECT status, attempts FROM webhook_deliveries WHERE id = $1', [queued.deliveryId])).rows[0],
    { status: 'pending', attempts: 0 },
  );
  t.is((await jobsOf(queued.deliveryId)).length, 3, "enable sends the resent delivery's job");

  const rotated = await cliJson(['webhook', 'rotate-secret', id, '--overlap-hours', '1']);
  t.deepEqual(Object.keys(rotated), ['id', 'secret', 'previousSecretExpiresAt']);
  t.regex(rotated.secret, /^whsec_/);
  t.true(Math.abs(Date.parse(rotated.previousSecretExpiresAt) - (Date.now() + 3600_000)) < 60_000);

  const [unknown, unknownDelivery] = await Promise.all([
    runCli(['webhook', 'enable', 'we_NOPE']),
    runCli(['webhook', 'resend', 'whd_NOPE']),
  ]);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /No webhook endpoint we_NOPE/);
  t.is(unknownDelivery.code, 1);
});

test("notifications --org lists the organisation's notifications, newest first", async (t) => {
  const org = await newOrganization();
  await notify(
    kyselyOver(pool),
    org,
    'webhook_endpoint.disabled',
    'Webhook endpoint we_1 was turned off: 20 consecutive events failed.',
  );
  const [listed, human, none] = await Promise.all([
    cliJson(['notifications', '--org', org]),
    runCli(['notifications', '--org', org]),
    runCli(['notifications', '--org', await newOrganization()]),
  ]);
  t.like(listed, [
    {
      kind: 'webhook_endpoint.disabled',
      message: 'Webhook endpoint we_1 was turned off: 20 consecutive events failed.',
      readAt: null,
    },
  ]);
  t.regex(human.stdout, /webhook_endpoint\.disabled\s+Webhook endpoint we_1/);
  t.regex(none.stdout, /No notifications/);
});
