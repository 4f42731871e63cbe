// Webhook endpoints as an administrator manages them: the destination guard at add (https only unless loopback is
// allowed for tests; private, loopback, link-local, CGNAT, multicast, reserved, unspecified and IPv4-mapped
// addresses refused, names resolved), the secret shown once and stored sealed, and rotation signing twice.
import test from 'ava';
import pg from 'pg';
import { createOrganization } from '../../server/platform/access/organizations.js';
import { ConfigError, loadConfig } from '../../server/platform/config.js';
import { attemptDelivery } from '../../server/platform/webhooks/attempt.js';
import { DestinationRefused } from '../../server/platform/webhooks/destination.js';
import {
  addEndpoint,
  listEndpoints,
  rotateSecret,
  testEndpoint,
  type EndpointSettings,
} from '../../server/platform/webhooks/endpoints.js';
import { open } from '../../server/platform/webhooks/secret-box.js';
import { claimDelivery, withTestEvent, type DeliveryJob } from '../../server/platform/webhooks/deliver.js';
import { webhookEventTypes, webhookObjects } from '../../server/composition/modules.js';
import { runCli } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startReceiver, verifySignature } from './receiver.js';
import { kyselyOver } from '../../server/platform/database/database.js';

let database: TestDatabase;
let pool: pg.Pool;
const secretKey = Buffer.alloc(32, 9);
const production: EndpointSettings = { policy: { allowLoopback: false }, secretKey, eventTypes: webhookEventTypes };
const local: EndpointSettings = { ...production, policy: { allowLoopback: true } };

test.before(async () => {
  database = await createTestDatabase('webhook_endpoints');
  pool = new pg.Pool({ connectionString: database.url, max: 4 });
});
test.after.always(async () => {
  await pool?.end();
  await database?.drop();
});

const newOrganization = async () => (await createOrganization(kyselyOver(pool), { name: 'Webhook Distributor' })).id;
const endpointCount = async (organizationId: string) =>
  (await pool.query('SELECT count(*)::int AS n FROM webhook_endpoints WHERE organization_id = $1', [organizationId]))
    .rows[0].n;

test('production refuses plain http, and refuses to start with WEBHOOK_ALLOW_LOOPBACK=true', async (t) => {
  const organizationId = await newOrganization();
  await t.throwsAsync(
    addEndpoint(kyselyOver(pool), production, { organizationId, url: 'http://example.com/hook', events: ['*'] }),
    { instanceOf: DestinationRefused, message: /https/ },
  );
  const error = t.throws(
    () =>
      loadConfig({
        ENVIRONMENT: 'production',
        DATABASE_URL: 'postgres://x@h/db',
        CURSOR_SECRET: 'x'.repeat(16),
        WEBHOOK_SECRET_KEY: 'a'.repeat(64),
        PUBLIC_BASE_URL: 'https://erp.example.com',
        WEBHOOK_ALLOW_LOOPBACK: 'true',
      }),
    { instanceOf: ConfigError },
  );
  t.regex(error!.message, /WEBHOOK_ALLOW_LOOPBACK cannot be true/);
  t.is(await endpointCount(organizationId), 0);
});

const refused = [
  ['loopback', 'https://127.0.0.1/hook'],
  ['loopback (other)', 'https://127.8.9.10/hook'],
  ['private 10/8', 'https://10.1.2.3/hook'],
  ['private 172.16/12', 'https://172.16.0.1/hook'],
  ['private 192.168/16', 'https://192.168.1.1/hook'],
  ['link-local', 'https://169.254.169.254/latest'],
  ['carrier-grade NAT', 'https://100.64.0.1/hook'],
  ['multicast', 'https://224.0.0.1/hook'],
  ['reserved', 'https://240.0.0.1/hook'],
  ['broadcast', 'https://255.255.255.255/hook'],
  ['unspecified', 'https://0.0.0.0/hook'],
  ['IPv6 loopback', 'https://[::1]/hook'],
  ['IPv6 unspecified', 'https://[::]/hook'],
  ['IPv6 link-local', 'https://[fe80::1]/hook'],
  ['IPv6 unique local', 'https://[fd00::1]/hook'],
  ['IPv6 multicast', 'https://[ff02::1]/hook'],
  ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/hook'],
  ['IPv4-mapped private', 'https://[::ffff:10.0.0.1]/hook'],
  ['a name resolving to loopback', 'https://localhost/hook'],
  ['decimal-encoded loopback', 'https://2130706433/hook'],
  // IPv6 forms that carry an IPv4 address are judged by it (issue 11): these were stored as enabled endpoints.
  ['IPv4-compatible loopback', 'https://[::127.0.0.1]/hook'],
  ['IPv4-compatible link-local (metadata service)', 'https://[::a9fe:a9fe]/hook'],
  ['NAT64 private', 'https://[64:ff9b::10.0.0.1]/hook'],
  ['6to4 of loopback', 'https://[2002:7f00:1::1]/hook'],
  ['Teredo', 'https://[2001:0:7f00:1::]/hook'],
] as const;

for (const [what, url] of refused) {
  test(`add refuses ${what} (${url}) without WEBHOOK_ALLOW_LOOPBACK`, async (t) => {
    const organizationId = await newOrganization();
    await t.throwsAsync(
      addEndpoint(kyselyOver(pool), production, { organizationId, url, events: ['customer.created'] }),
      { instanceOf: DestinationRefused },
    );
    t.is(await endpointCount(organizationId), 0);
  });
}

test('the operator CLI refuses https://[::127.0.0.1]/hook (IPv4-compatible loopback): exit 1, the reason on stderr, nothing stored', async (t) => {
  const organizationId = await newOrganization();
  const run = await runCli(
    ['webhook', 'add', '--org', organizationId, '--url', 'https://[::127.0.0.1]/hook', '--events', '*'],
    {
      DATABASE_URL: database.url,
      WEBHOOK_ALLOW_LOOPBACK: 'false',
    },
  );
  t.is(run.code, 1);
  t.is(
    run.stderr.trim(),
    'error: ::7f00:1 resolves to ::7f00:1, which carries the IPv4 address 127.0.0.1, a loopback address, which webhooks may not reach' +
      '. For a receiver on this machine (tests, local trials), set WEBHOOK_ALLOW_LOOPBACK=true in the environment or the .env file that both the CLI and the worker (npm start) read; production refuses it',
  );
  t.is(run.stdout, '');
  t.is(await endpointCount(organizationId), 0);
});

test('WEBHOOK_ALLOW_LOOPBACK lets loopback through, but never private or link-local addresses', async (t) => {
  const organizationId = await newOrganization();
  await t.notThrowsAsync(
    addEndpoint(kyselyOver(pool), local, { organizationId, url: 'http://127.0.0.1:9/hook', events: ['*'] }),
  );
  await t.throwsAsync(
    addEndpoint(kyselyOver(pool), local, { organizationId, url: 'http://10.0.0.1/hook', events: ['*'] }),
    { instanceOf: DestinationRefused },
  );
  await t.throwsAsync(
    addEndpoint(kyselyOver(pool), local, { organizationId, url: 'http://169.254.169.254/', events: ['*'] }),
    { instanceOf: DestinationRefused },
  );
});

test('add refuses unknown event types and URLs with credentials', async (t) => {
  const organizationId = await newOrganization();
  await t.throwsAsync(
    addEndpoint(kyselyOver(pool), local, { organizationId, url: 'http://127.0.0.1:9/hook', events: ['order.shipped'] }),
    { message: /Unknown event type order.shipped/ },
  );
  await t.throwsAsync(
    addEndpoint(kyselyOver(pool), local, { organizationId, url: 'http://user:pw@127.0.0.1:9/hook', events: ['*'] }),
    { instanceOf: DestinationRefused },
  );
  t.is(await endpointCount(organizationId), 0);
});

test('the signing secret is returned once, stored sealed, and never listed', async (t) => {
  const organizationId = await newOrganization();
  const added = await addEndpoint(kyselyOver(pool), local, {
    organizationId,
    url: 'http://127.0.0.1:9/hook',
    events: ['customer.created', 'product.updated'],
  });
  t.regex(added.id, /^we_/);
  t.regex(added.secret, /^whsec_[A-Za-z0-9_-]{43}$/);
  const { rows } = await pool.query('SELECT * FROM webhook_endpoints WHERE id = $1', [added.id]);
  t.false(JSON.stringify(rows[0]).includes(added.secret.slice(6)), 'the row does not hold the secret in clear');
  t.is(open(rows[0].secret_ciphertext, secretKey), added.secret);
  t.throws(() => open(rows[0].secret_ciphertext, Buffer.alloc(32, 1)), undefined, 'another key cannot open it');
  const listed = await listEndpoints(kyselyOver(pool), organizationId);
  t.is(listed.length, 1);
  t.like(listed[0], {
    id: added.id,
    url: 'http://127.0.0.1:9/hook',
    events: ['customer.created', 'product.updated'],
    enabled: true,
    consecutiveFailures: 0,
  });
  t.false(JSON.stringify(listed).includes('whsec_'));
  t.false(JSON.stringify(listed).includes(rows[0].secret_ciphertext));
});

test('during a rotation overlap both secrets sign (two v1); after it, only the new one', async (t) => {
  const organizationId = await newOrganization();
  const hook = await startReceiver();
  t.teardown(() => hook.close());
  const added = await addEndpoint(kyselyOver(pool), local, { organizationId, url: hook.url, events: ['*'] });
  const rotated = await rotateSecret(kyselyOver(pool), secretKey, added.id, 2);
  t.not(rotated.secret, added.secret);
  t.true(Date.parse(rotated.previousSecretExpiresAt!) > Date.now() + 1.9 * 3600_000);
  const settings = {
    objects: withTestEvent(webhookObjects),
    policy: { allowLoopback: true },
    secretKey,
    timeoutMs: 10_000,
    objectLimitBytes: 256 * 1024,
  };
  const sendTest = async () => {
    const sent: DeliveryJob[] = []; // no worker here: the test runs the job's claim and attempt itself
    await testEndpoint(
      kyselyOver(pool),
      async (_tx, jobs) => {
        sent.push(...jobs);
      },
      added.id,
    );
    t.is(sent.length, 1);
    const claim = await claimDelivery(kyselyOver(pool), sent[0]!, 0);
    t.true((await attemptDelivery(kyselyOver(pool), settings, claim!)).ok);
    return hook.received.at(-1)!;
  };
  const during = await sendTest();
  const header = during.headers['service-signature'] as string;
  t.regex(header, /^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
  t.like(verifySignature(header, during.raw, rotated.secret), { valid: true, matches: 1, signatures: 2 });
  t.like(verifySignature(header, during.raw, added.secret), { valid: true, matches: 1, signatures: 2 });

  const final = await rotateSecret(kyselyOver(pool), secretKey, added.id, 0);
  t.is(final.previousSecretExpiresAt, null);
  const after = await sendTest();
  t.regex(after.headers['service-signature'] as string, /^t=\d+,v1=[0-9a-f]{64}$/);
  t.true(verifySignature(after.headers['service-signature'] as string, after.raw, final.secret).valid);
  t.false(verifySignature(after.headers['service-signature'] as string, after.raw, rotated.secret).valid);
});
