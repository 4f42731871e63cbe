// The operator CLI (scripts/admin/cli.ts), run in-process through runCli against this file's own database, as an
// operator would run `npm run --silent admin -- ...` (test/admin/run.test.ts runs the compiled binary itself). Assertions are on the rows it leaves and on what it prints.
import test from 'ava';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { KEY_LIKE } from '../../server/platform/access/api-key-secret.js';
import { createApiKey, type IssuedKey, type NewKey } from '../../server/platform/access/api-keys.js';
import { createOrganization } from '../../server/platform/access/organizations.js';
import { DEFAULT_RATE_LIMITS } from '../../server/platform/access/rate-limit.js';
import { readApiLog } from '../../server/platform/http/api-log-query.js';
import { newId } from '../../server/platform/ids.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestService } from '../support/service.js';
import { freePort } from '../../scripts/lib/free-port.js';
import { runCli as runCliProcess, runCliJson, type CliRun } from '../support/cli.js';
import { kyselyOver } from '../../server/platform/database/database.js';

let database: TestDatabase;
let pool: pg.Pool;

test.before(async () => {
  database = await createTestDatabase('admin_cli');
  pool = new pg.Pool({ connectionString: database.url, max: 4 });
});

test.after.always(async () => {
  await pool?.end();
  await database?.drop();
});

function runCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runCliProcess(args, { DATABASE_URL: database.url, ...env });
}

function cliJson<T = any>(args: string[], env: Record<string, string> = {}): Promise<T> {
  return runCliJson<T>(args, { DATABASE_URL: database.url, ...env });
}

// Set-up that is not under test goes through the shared functions in-process: each CLI run costs a Node start.
async function newOrganization(name = 'Test Distributor'): Promise<string> {
  return (await createOrganization(kyselyOver(pool), { name })).id;
}

function newKey(organizationId: string, input: Partial<NewKey> = {}): Promise<IssuedKey> {
  return createApiKey(kyselyOver(pool), {
    organizationId,
    environment: 'sandbox',
    scopes: ['customers:read'],
    ...input,
  });
}

async function keyRow(id: string): Promise<Record<string, any>> {
  const { rows } = await pool.query('SELECT * FROM api_keys WHERE id = $1', [id]);
  return rows[0]!;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

test('org create prints only {"id"} on stdout, and the organisation exists with API access on and no modules', async (t) => {
  const run = await runCli(['org', 'create', '--name', 'Kampala Beverages', '--currency', 'kes', '--json']);
  t.is(run.code, 0, run.stderr);
  const printed = JSON.parse(run.stdout);
  t.deepEqual(Object.keys(printed), ['id']);
  t.regex(printed.id, /^org_[0-9A-Z]{26}$/);
  const { rows } = await pool.query('SELECT * FROM organizations WHERE id = $1', [printed.id]);
  t.like(rows[0], {
    name: 'Kampala Beverages',
    base_currency: 'KES',
    api_access_enabled: true,
    delivery_module_enabled: false,
    field_sales_module_enabled: false,
  });

  const human = await runCli(['org', 'create', '--name', 'Second']);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /Organisation org_\w+\n\s+name\s+Second\n\s+currency\s+UGX\n\s+API access\s+on/);
});

test('org update switches API access and sets exactly the modules listed ("" switches both off)', async (t) => {
  const id = await newOrganization();
  const state = async () =>
    (
      await pool.query(
        'SELECT api_access_enabled AS api, delivery_module_enabled AS delivery, field_sales_module_enabled AS field FROM organizations WHERE id = $1',
        [id],
      )
    ).rows[0];

  t.like(await cliJson(['org', 'update', id, '--api-access', 'off', '--modules', 'delivery,field-sales']), {
    id,
    apiAccessEnabled: false,
    deliveryModuleEnabled: true,
    fieldSalesModuleEnabled: true,
  });
  t.deepEqual(await state(), { api: false, delivery: true, field: true });
  await cliJson(['org', 'update', id, '--modules', 'field-sales']);
  t.deepEqual(await state(), { api: false, delivery: false, field: true });
  await cliJson(['org', 'update', id, '--modules', '']);
  t.deepEqual(await state(), { api: false, delivery: false, field: false });
  await cliJson(['org', 'update', id, '--api-access', 'on']);
  t.deepEqual(
    await state(),
    { api: true, delivery: false, field: false },
    'modules are left alone when --modules is not given',
  );
});

test('org update refuses what it cannot do: unknown organisation (1), bad value or nothing to change (2)', async (t) => {
  const id = await newOrganization();
  const [unknown, badModule, badSwitch, nothing] = await Promise.all([
    runCli(['org', 'update', 'org_NOPE', '--api-access', 'off']),
    runCli(['org', 'update', id, '--modules', 'delivery,warehouse']),
    runCli(['org', 'update', id, '--api-access', 'yes']),
    runCli(['org', 'update', id]),
  ]);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /No organisation org_NOPE/);
  t.is(badModule.code, 2);
  t.regex(badModule.stderr, /Unknown module warehouse/);
  t.is(badSwitch.code, 2);
  t.regex(badSwitch.stderr, /--api-access.*Expected on or off/);
  t.is(nothing.code, 2);
  t.regex(nothing.stderr, /nothing to change/);
  for (const run of [unknown, badModule, badSwitch, nothing]) t.is(run.stdout, '');
  t.like((await pool.query('SELECT * FROM organizations WHERE id = $1', [id])).rows[0], {
    api_access_enabled: true,
    delivery_module_enabled: false,
  });
});

test("key create prints erp_test_<lookup id>_<random> once (the fixed beginning of the product spec, then the prefix's lookup id): its sha256 is stored and the secret itself is nowhere in the row", async (t) => {
  const org = await newOrganization();
  const issued = await cliJson([
    'key',
    'create',
    '--org',
    org,
    '--env',
    'sandbox',
    '--scopes',
    'customers:write,customers:read',
    '--name',
    'DMS bridge',
    '--ip',
    '203.0.113.0/24, 2001:db8::/32',
    '--expires',
    '2099-01-31T21:00:00+03:00',
    '--rate',
    'read=300/50,ingest=10/5',
  ]);
  t.deepEqual(Object.keys(issued), ['id', 'prefix', 'secret']);
  t.regex(issued.prefix, /^erp_test_[0-9a-z]{10}$/);
  t.regex(issued.secret, new RegExp(`^${issued.prefix}_[0-9A-Za-z]{43}$`));

  const row = await keyRow(issued.id);
  t.is(row.secret_hash, sha256(issued.secret));
  const random = issued.secret.split('_').pop();
  const stored = JSON.stringify(row);
  t.false(stored.includes(issued.secret));
  t.false(stored.includes(random));
  t.like(row, {
    organization_id: org,
    name: 'DMS bridge',
    prefix: issued.prefix,
    environment: 'sandbox',
    revoked_at: null,
  });
  t.deepEqual(row.scopes, ['customers:read', 'customers:write']);
  t.deepEqual(row.ip_allowlist, ['203.0.113.0/24', '2001:db8::/32']);
  t.is(row.expires_at.toISOString(), '2099-01-31T18:00:00.000Z');
  t.deepEqual(
    row.rate_limits,
    { read: { perMinute: 300, burst: 50 }, write: DEFAULT_RATE_LIMITS.write, ingest: { perMinute: 10, burst: 5 } },
    'classes not given keep the defaults',
  );
});

test('key create with --env production gives an erp_live_ secret, and without --json says the secret is shown once', async (t) => {
  const org = await newOrganization();
  const live = await cliJson(['key', 'create', '--org', org, '--env', 'production', '--scopes', 'dms:ingest']);
  t.regex(live.prefix, /^erp_live_[0-9a-z]{10}$/);
  t.regex(live.secret, new RegExp(`^${live.prefix}_[0-9A-Za-z]{43}$`));
  t.like(await keyRow(live.id), { environment: 'production', secret_hash: sha256(live.secret) });

  const human = await runCli(['key', 'create', '--org', org, '--env', 'sandbox', '--scopes', 'customers:read']);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /secret\s+erp_test_[0-9a-z]{10}_[0-9A-Za-z]{43}\n/);
  t.regex(human.stdout, /shown only now/);
});

test('key create refuses a bad scope, CIDR, --rate, --expires or organisation, naming the problem, and creates nothing', async (t) => {
  const org = await newOrganization();
  const base = ['key', 'create', '--org', org, '--env', 'sandbox', '--scopes', 'customers:read'];
  const cases: [string[], RegExp, number][] = [
    [
      ['key', 'create', '--org', org, '--env', 'sandbox', '--scopes', 'customers:read,customers:delete'],
      /--scopes.*Unknown scope customers:delete; the scopes are customers:read, /,
      2,
    ],
    [['key', 'create', '--org', org, '--env', 'sandbox', '--scopes', ''], /--scopes.*at least one scope/, 2],
    [[...base, '--ip', '10.0.0.0/8,10.0.0.300/24'], /--ip.*10\.0\.0\.300\/24 is not a CIDR/, 2],
    [[...base, '--ip', '192.0.2.7'], /192\.0\.2\.7 is not a CIDR \(for the one address write 192\.0\.2\.7\/32\)/, 2],
    [[...base, '--rate', 'read=600'], /--rate.*read=600 is not class=perMinute\/burst/, 2],
    [[...base, '--rate', 'reads=600/100'], /--rate.*Unknown rate class reads/, 2],
    [[...base, '--rate', 'write=0/10'], /--rate.*write perMinute must be from 1/, 2],
    [[...base, '--expires', 'next tuesday'], /--expires.*Expected an ISO 8601 timestamp/, 2],
    [[...base, '--expires', '2099-02-30'], /--expires.*2099-02-30 is not a real date/, 2],
    [[...base, '--expires', '2099-01-31T12:00:00'], /--expires.*with an offset/, 2],
    [[...base, '--expires', '2001-01-01T00:00:00Z'], /--expires.*in the past/, 2],
    [
      ['key', 'create', '--org', org, '--env', 'staging', '--scopes', 'customers:read'],
      /--env.*sandbox, production/,
      2,
    ],
    [['key', 'create', '--org', org, '--env', 'sandbox'], /required option '--scopes <list>' not specified/, 2],
    [
      ['key', 'create', '--org', 'org_MISSING', '--env', 'sandbox', '--scopes', 'customers:read'],
      /no organisation org_MISSING/,
      1,
    ],
  ];
  const runs = await Promise.all(cases.map(([args]) => runCli([...args, '--json'])));
  runs.forEach((run, i) => {
    const [args, message, code] = cases[i]!;
    t.is(run.code, code, `${args.join(' ')}: ${run.stderr}`);
    t.regex(run.stderr, message);
    t.is(run.stdout, '', 'nothing on stdout when it fails');
  });
  t.is((await pool.query('SELECT count(*)::int AS n FROM api_keys WHERE organization_id = $1', [org])).rows[0].n, 0);
});

test('key list shows every key of the organisation and never a secret or its hash', async (t) => {
  const org = await newOrganization();
  const keys = [
    await newKey(org, { name: 'reader' }),
    await newKey(org, { environment: 'production', scopes: ['dms:ingest', 'dms:flags:read'], name: 'dms' }),
  ];
  const hashes = await Promise.all(keys.map(async (key) => (await keyRow(key.id)).secret_hash as string));
  const listed = await runCli(['key', 'list', '--org', org, '--json']);
  const human = await runCli(['key', 'list', '--org', org]);
  t.is(listed.code, 0, listed.stderr);
  t.is(human.code, 0, human.stderr);
  const summaries = JSON.parse(listed.stdout) as Record<string, unknown>[];
  t.deepEqual(
    summaries.map((s) => s.id),
    keys.map((k) => k.id),
  );
  t.like(summaries[1], {
    name: 'dms',
    prefix: keys[1]!.prefix,
    environment: 'production',
    scopes: ['dms:flags:read', 'dms:ingest'],
    revokedAt: null,
  });
  for (const output of [listed.stdout, human.stdout]) {
    t.false(KEY_LIKE.test(output), 'nothing shaped like a secret');
    for (const key of keys) t.false(output.includes(key.secret.split('_').pop()!));
    for (const hash of hashes) t.false(output.includes(hash));
    t.false(/hash/i.test(output));
  }
  t.regex(human.stdout, new RegExp(`${keys[0]!.id}\\s+${keys[0]!.prefix}\\s+sandbox\\s+reader`));

  const missing = await runCli(['key', 'list', '--org', 'org_MISSING']);
  t.is(missing.code, 1);
  t.regex(missing.stderr, /no organisation org_MISSING/);
});

test('key rotate issues a new key with the same settings, and the old one stops after --overlap-hours (default 24, 0 means now)', async (t) => {
  const org = await newOrganization();
  const old = await newKey(org, {
    scopes: ['customers:read', 'invoices:read'],
    ipAllowlist: ['198.51.100.0/24'],
    rateLimits: { write: { perMinute: 10, burst: 2 } },
    name: 'partner',
  });

  const before = Date.now();
  const rotated = await cliJson(['key', 'rotate', old.id]);
  t.deepEqual(Object.keys(rotated), ['id', 'prefix', 'secret', 'oldKeyExpiresAt']);
  t.not(rotated.id, old.id);
  t.regex(rotated.secret, /^erp_test_[0-9a-z]{10}_[0-9A-Za-z]{43}$/);
  t.true(rotated.secret.startsWith(`${rotated.prefix}_`));
  const [oldRow, newRow] = [await keyRow(old.id), await keyRow(rotated.id)];
  t.is(newRow.secret_hash, sha256(rotated.secret));
  t.like(newRow, {
    organization_id: org,
    environment: 'sandbox',
    name: 'partner',
    rotated_from_id: old.id,
    revoked_at: null,
    expires_at: null,
  });
  t.deepEqual(
    [newRow.scopes, newRow.ip_allowlist, newRow.rate_limits],
    [oldRow.scopes, oldRow.ip_allowlist, oldRow.rate_limits],
  );
  const day = 24 * 3600 * 1000;
  t.true(
    oldRow.expires_at.getTime() >= before + day - 1000 && oldRow.expires_at.getTime() <= Date.now() + day + 1000,
    `old key expires ${oldRow.expires_at.toISOString()}`,
  );
  t.is(rotated.oldKeyExpiresAt, oldRow.expires_at.toISOString());
  t.is(oldRow.revoked_at, null, 'the old key keeps working during the overlap');

  const again = await cliJson(['key', 'rotate', rotated.id, '--overlap-hours', '0']);
  const stopped = await keyRow(rotated.id);
  t.true(stopped.expires_at.getTime() <= Date.now(), 'with --overlap-hours 0 the old key stops at once');
  t.is((await keyRow(again.id)).secret_hash, sha256(again.secret));

  const [expired, unknown, bad] = await Promise.all([
    runCli(['key', 'rotate', rotated.id]),
    runCli(['key', 'rotate', 'key_NOPE']),
    runCli(['key', 'rotate', again.id, '--overlap-hours', '-1']),
  ]);
  t.is(expired.code, 1, 'a key that has stopped is not rotated (its replacement would inherit the past expiry)');
  t.regex(expired.stderr, /no active key/);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /no active key key_NOPE/);
  t.is(bad.code, 2);
  t.regex(bad.stderr, /--overlap-hours/);
  t.is((await pool.query('SELECT count(*)::int AS n FROM api_keys WHERE organization_id = $1', [org])).rows[0].n, 3);
});

test('key revoke sets revoked_at now; a second revoke exits 1', async (t) => {
  const org = await newOrganization();
  const key = await newKey(org);
  const revoked = await cliJson(['key', 'revoke', key.id]);
  const row = await keyRow(key.id);
  t.truthy(row.revoked_at);
  t.true(Math.abs(row.revoked_at.getTime() - Date.now()) < 30_000);
  t.deepEqual(revoked, { id: key.id, revokedAt: row.revoked_at.toISOString() });
  const again = await runCli(['key', 'revoke', key.id]);
  t.is(again.code, 1);
  t.regex(again.stderr, new RegExp(`no active key ${key.id}`));
  t.is((await keyRow(key.id)).revoked_at.getTime(), row.revoked_at.getTime());
});

test('code-system add registers a code system once (doing it again changes nothing) and refuses bad names and unknown organisations', async (t) => {
  const org = await newOrganization();
  t.deepEqual(await cliJson(['code-system', 'add', '--org', org, '--name', 'sap']), {
    organizationId: org,
    name: 'sap',
    created: true,
  });
  t.deepEqual(await cliJson(['code-system', 'add', '--org', org, '--name', 'sap']), {
    organizationId: org,
    name: 'sap',
    created: false,
  });
  const { rows } = await pool.query('SELECT name FROM code_systems WHERE organization_id = $1', [org]);
  t.deepEqual(rows, [{ name: 'sap' }]);
  t.deepEqual(await cliJson(['code-system', 'list', '--org', org]), ['dms', 'sap']);

  const [bad, unknownOrg] = await Promise.all([
    runCli(['code-system', 'add', '--org', org, '--name', 'SAP ERP']),
    runCli(['code-system', 'add', '--org', 'org_MISSING', '--name', 'sap']),
  ]);
  t.is(bad.code, 1);
  t.regex(bad.stderr, /code system name is 1 to 32 lowercase letters/);
  t.is(unknownOrg.code, 1);
  t.regex(unknownOrg.stderr, /no organisation org_MISSING/);
  t.is(
    (await pool.query('SELECT count(*)::int AS n FROM code_systems WHERE organization_id = $1', [org])).rows[0].n,
    1,
  );
  t.is(
    (await pool.query("SELECT count(*)::int AS n FROM code_systems WHERE organization_id = 'org_MISSING'")).rows[0].n,
    0,
  );
});

async function insertLog(
  organizationId: string,
  entry: { status: number; requestId: string; secondsAgo: number; path?: string },
): Promise<string> {
  const id = newId('log');
  await pool.query(
    `INSERT INTO api_log (organization_id, id, time, key_prefix, method, path, status, duration_ms, request_id, idempotency_key, request_body, response_body)
     VALUES ($1, $2, now() - make_interval(secs => $3), 'erp_abcdefghjk', 'GET', $4, $5, 12.5, $6, NULL, NULL, '{"ok":true}')`,
    [organizationId, id, entry.secondsAgo, entry.path ?? '/api/v1/customers', entry.status, entry.requestId],
  );
  return id;
}

test("log lists an organisation's calls newest first, filtered by --status and --request-id, at most --limit", async (t) => {
  const [org, other] = [await newOrganization(), await newOrganization()];
  const oldest = await insertLog(org, { status: 200, requestId: 'req-a', secondsAgo: 30 });
  const middle = await insertLog(org, {
    status: 404,
    requestId: 'req-b',
    secondsAgo: 20,
    path: '/api/v1/customers/cus_X',
  });
  const newest = await insertLog(org, { status: 200, requestId: 'req-c', secondsAgo: 10 });
  await insertLog(other, { status: 404, requestId: 'req-b', secondsAgo: 5 });

  const all = await cliJson<any[]>(['log', '--org', org]);
  t.deepEqual(
    all.map((e) => e.id),
    [newest, middle, oldest],
  );
  t.like(all[1], {
    keyPrefix: 'erp_abcdefghjk',
    method: 'GET',
    path: '/api/v1/customers/cus_X',
    status: 404,
    durationMs: 12.5,
    requestId: 'req-b',
    idempotencyKey: null,
  });
  t.false('responseBody' in all[0], 'bodies only with --bodies');
  t.deepEqual(
    (await cliJson<any[]>(['log', '--org', org, '--status', '200'])).map((e) => e.id),
    [newest, oldest],
  );
  t.deepEqual(
    (await cliJson<any[]>(['log', '--org', org, '--request-id', 'req-b'])).map((e) => e.id),
    [middle],
  );
  t.deepEqual(await cliJson<any[]>(['log', '--org', org, '--status', '200', '--request-id', 'req-b']), []);
  t.deepEqual(
    (await cliJson<any[]>(['log', '--org', org, '--limit', '1'])).map((e) => e.id),
    [newest],
  );
  t.is((await cliJson<any[]>(['log', '--org', org, '--bodies', '--limit', '1']))[0].responseBody, '{"ok":true}');

  const human = await runCli(['log', '--org', org, '--status', '404']);
  t.is(human.code, 0, human.stderr);
  t.regex(
    human.stdout,
    /^TIME\s+STATUS\s+METHOD.*\n\S+\s+404\s+GET\s+12\.5\s+erp_abcdefghjk\s+req-b\s+\/api\/v1\/customers\/cus_X\n$/,
  );

  const [badStatus, badLimit] = await Promise.all([
    runCli(['log', '--org', org, '--status', 'teapot']),
    runCli(['log', '--org', org, '--limit', '1001']),
  ]);
  t.is(badStatus.code, 2);
  t.regex(badStatus.stderr, /--status.*from 100 to 599/);
  t.is(badLimit.code, 2);
  t.regex(badLimit.stderr, /--limit.*from 1 to 1000/);
});

test('readApiLog defaults to 50 entries, refuses a limit over 1000, and masks anything shaped like a key of either form', async (t) => {
  const org = (await createOrganization(kyselyOver(pool), { name: 'Logged Distributor' })).id; // api_log rows belong to an organisation
  // A key of each form: erp_live_<lookup id>_<random>, and erp_<lookup id>_live_<random> as keys were issued before.
  const leaked = `erp_live_abcdefghjk_${'B'.repeat(43)},erp_abcdefghjk_live_${'A'.repeat(43)}`;
  await pool.query(
    `INSERT INTO api_log (organization_id, id, time, key_prefix, method, path, status, duration_ms, request_id, request_body)
     SELECT $1, $2 || lpad(g::text, 4, '0'), now() - make_interval(secs => g), 'erp_abcdefghjk', 'GET', '/api/v1/customers?x=' || $3, 400, 1, 'r' || g, '{"k":"' || $3 || '"}'
       FROM generate_series(1, 60) AS g`,
    [org, 'log_', leaked],
  );
  const entries = await readApiLog(kyselyOver(pool), org);
  t.is(entries.length, 50);
  t.is(entries[0]!.requestId, 'r1');
  t.is(entries[0]!.path, '/api/v1/customers?x=[redacted],[redacted]');
  t.is(
    (await readApiLog(kyselyOver(pool), org, { limit: 1000, includeBodies: true }))[59]!.requestBody,
    '{"k":"[redacted],[redacted]"}',
  );
  await t.throwsAsync(readApiLog(kyselyOver(pool), org, { limit: 1001 }), { instanceOf: RangeError });
  await t.throwsAsync(readApiLog(kyselyOver(pool), org, { limit: 0 }), { instanceOf: RangeError });
});

test('usage errors exit 2 with the message on stderr; --help exits 0', async (t) => {
  const [unknownCommand, noCommand, missingOption, extra, help] = await Promise.all([
    runCli(['organisation', 'create']),
    runCli([]),
    runCli(['org', 'create', '--json']),
    runCli(['key', 'revoke', 'key_A', 'key_B']),
    runCli(['key', '--help']),
  ]);
  t.is(unknownCommand.code, 2);
  t.regex(unknownCommand.stderr, /unknown command 'organisation'/);
  t.is(noCommand.code, 2);
  t.is(missingOption.code, 2);
  t.regex(missingOption.stderr, /required option '--name <name>' not specified/);
  t.is(missingOption.stdout, '');
  t.is(extra.code, 2);
  t.regex(extra.stderr, /too many arguments/);
  t.is(help.code, 0);
  t.regex(help.stdout, /rotate/);
});

test('a database the CLI cannot reach, or a bad configuration, exits 1 with the reason on stderr', async (t) => {
  const [unreachable, badConfig] = await Promise.all([
    runCli(['org', 'list', '--json'], { DATABASE_URL: 'postgres://nobody:nothing@127.0.0.1:1/none' }),
    runCli(['org', 'list', '--json'], { DATABASE_URL: 'mysql://localhost/erp' }),
  ]);
  t.is(unreachable.code, 1);
  t.regex(
    unreachable.stderr,
    /^error: Cannot connect to DATABASE_URL \(postgres:\/\/nobody:\*\*\*@127\.0\.0\.1:1\/none\): nothing accepts connections at 127\.0\.0\.1:1\./,
  );
  t.is(unreachable.stdout, '');
  t.is(badConfig.code, 1);
  t.regex(badConfig.stderr, /DATABASE_URL=.* is invalid/);
});

// Serial (ava runs serial tests before the concurrent ones): the service it starts compiles its validators on this
// process's event loop, and the CLI now runs in this process too; a start beside other tests' CLI runs can hold the
// loop past their 5 s database check.
test.serial(
  'keys the CLI issues authenticate over HTTP; revoke and a rotation with --overlap-hours 0 stop the old key at once',
  async (t) => {
    const service = await startTestService('admin_cli_http');
    try {
      const env = { DATABASE_URL: service.database.url };
      const expectStatus = async (secret: string, status: number, why: string) => {
        const response = await service.request('GET', '/me', { headers: { authorization: `Bearer ${secret}` } });
        t.is(response.status, status, `${why}: ${response.text}`);
      };
      const org = (await cliJson<{ id: string }>(['org', 'create', '--name', 'HTTP check'], env)).id;
      const key = await cliJson(['key', 'create', '--org', org, '--env', 'sandbox', '--scopes', 'customers:read'], env);
      await expectStatus(key.secret, 200, 'a new key works');

      const rotated = await cliJson(['key', 'rotate', key.id, '--overlap-hours', '0'], env);
      await expectStatus(key.secret, 401, 'the old key stopped');
      await expectStatus(rotated.secret, 200, 'its replacement works');

      await cliJson(['org', 'update', org, '--api-access', 'off'], env);
      await expectStatus(rotated.secret, 403, 'API access is off');
      await cliJson(['org', 'update', org, '--api-access', 'on'], env);

      await cliJson(['key', 'revoke', rotated.id], env);
      await expectStatus(rotated.secret, 401, 'the revoked key stopped');
    } finally {
      await service.stop();
    }
  },
);

// Serial: the CLI, in this process, creates the cluster with initdb through execFileSync, which holds the event loop
// for seconds; beside other tests' CLI runs that would outlast their 5 s database check.
test.serial(
  'without DATABASE_URL the CLI uses the embedded PostgreSQL under DATA_DIR, and stops it again when it started it',
  async (t) => {
    t.timeout(150_000); // initdb and the migrations, twice: slow on a loaded 2-core machine
    const dataDir = mkdtempSync(join(tmpdir(), 'erp-admin-'));
    chmodSync(dataDir, 0o755); // the postgres user (when the tests run as root) must reach the cluster below it
    try {
      const env = { DATABASE_URL: '', DATA_DIR: dataDir, EMBEDDED_POSTGRES_PORT: String(await freePort()) };
      const org = (await cliJson<{ id: string }>(['org', 'create', '--name', 'Embedded'], env)).id;
      t.false(
        existsSync(join(dataDir, 'postgres', 'postmaster.pid')) &&
          isAlive(Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0])),
        'the server the CLI started is stopped',
      );
      const listed = await cliJson<{ id: string; name: string }[]>(['org', 'list'], env);
      t.deepEqual(
        listed.map((o) => [o.id, o.name]),
        [[org, 'Embedded']],
        'the data persisted in DATA_DIR',
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
);

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
