// The operator CLI's members, accounts and time zone (issue 36): `admin member add|list|update|remove` (one owner;
// a removal refused while a key keeps the member's id), `key create --member` recording the member on the key,
// `notifications --member` with its own read state, `accounts set|show`, `org update --time-zone` validating the
// IANA name. Run as child processes against this file's own database.
import test from 'ava';
import pg from 'pg';
import { createOrganization } from '../../server/platform/access/organizations.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { notify } from '../../server/platform/webhooks/notifications.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { runCli as runCliProcess, runCliJson, type CliRun } from '../support/cli.js';

let database: TestDatabase;
let pool: pg.Pool;

test.before(async () => {
  database = await createTestDatabase('member_cli');
  pool = new pg.Pool({ connectionString: database.url, max: 4 });
});

test.after.always(async () => {
  await pool?.end();
  await database?.drop();
});

const runCli = (args: string[]): Promise<CliRun> => runCliProcess(args, { DATABASE_URL: database.url });
const cliJson = <T = any>(args: string[]): Promise<T> => runCliJson<T>(args, { DATABASE_URL: database.url });
const newOrganization = async () => (await createOrganization(kyselyOver(pool), { name: 'Test Distributor' })).id;

test('member add, list, update and remove; one owner per organisation; a member who made a key is not removed; key create --member keeps its id', async (t) => {
  const org = await newOrganization();
  const owner = await cliJson([
    'member',
    'add',
    '--org',
    org,
    '--name',
    'Grace Namuli',
    '--email',
    'Grace@Example.com',
    '--role',
    'owner',
  ]);
  t.like(owner, { name: 'Grace Namuli', email: 'grace@example.com', role: 'owner' });
  t.regex(owner.id, /^mbr_[0-9A-HJKMNP-TV-Z]{26}$/);
  const second = await runCli([
    'member',
    'add',
    '--org',
    org,
    '--name',
    'Other',
    '--email',
    'other@example.com',
    '--role',
    'owner',
  ]);
  t.is(second.code, 1);
  t.regex(second.stderr, /already has an owner/);
  const badRole = await runCli([
    'member',
    'add',
    '--org',
    org,
    '--name',
    'X',
    '--email',
    'x@example.com',
    '--role',
    'admin',
  ]);
  t.is(badRole.code, 2, 'a role outside the list is a usage error');

  const clerk = await cliJson(['member', 'add', '--org', org, '--name', 'Peter Clerk', '--email', 'peter@example.com']);
  t.is(clerk.role, 'none');
  t.like(await cliJson(['member', 'update', clerk.id, '--org', org, '--role', 'manage-settings']), {
    id: clerk.id,
    role: 'manage-settings',
  });
  t.deepEqual(
    (await cliJson<any[]>(['member', 'list', '--org', org])).map((m) => [m.email, m.role]),
    [
      ['grace@example.com', 'owner'],
      ['peter@example.com', 'manage-settings'],
    ],
  );

  const key = await cliJson([
    'key',
    'create',
    '--org',
    org,
    '--env',
    'sandbox',
    '--scopes',
    'customers:read',
    '--member',
    owner.id,
  ]);
  t.is(
    (await pool.query('SELECT created_by_member_id FROM api_keys WHERE id = $1', [key.id])).rows[0]
      .created_by_member_id,
    owner.id,
  );
  const unknown = await runCli([
    'key',
    'create',
    '--org',
    org,
    '--env',
    'sandbox',
    '--scopes',
    'customers:read',
    '--member',
    'mbr_01JD4R0W5K7M9P1Q3S5T7V9X1Z',
  ]);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /no member mbr_01JD4R0W5K7M9P1Q3S5T7V9X1Z/);

  const kept = await runCli(['member', 'remove', owner.id, '--org', org]);
  t.is(kept.code, 1);
  t.regex(kept.stderr, /made the key/);
  t.deepEqual(await cliJson(['member', 'remove', clerk.id, '--org', org]), { id: clerk.id, removed: true });
  t.is((await pool.query('SELECT count(*)::int AS n FROM members WHERE organization_id = $1', [org])).rows[0].n, 1);
});

test('notifications --member lists what went to that member with its own read state; --read marks it for that member only', async (t) => {
  const org = await newOrganization();
  const owner = await cliJson([
    'member',
    'add',
    '--org',
    org,
    '--name',
    'Owner',
    '--email',
    'owner@example.com',
    '--role',
    'owner',
  ]);
  const settings = await cliJson([
    'member',
    'add',
    '--org',
    org,
    '--name',
    'Settings',
    '--email',
    'settings@example.com',
    '--role',
    'manage-settings',
  ]);
  const id = await notify(
    kyselyOver(pool),
    org,
    'dms_reconciliation',
    'DMS reconciliation of salesman SM01 on 2026-11-25: 1 difference (cash).',
  );
  const read = await cliJson<any[]>(['notifications', '--org', org, '--member', owner.id, '--read', id]);
  t.like(read, [{ id, kind: 'dms_reconciliation' }]);
  t.truthy(read[0].readAt);
  t.deepEqual(await cliJson(['notifications', '--org', org, '--member', owner.id, '--unread']), []);
  t.like(await cliJson(['notifications', '--org', org, '--member', settings.id, '--unread']), [{ id, readAt: null }]);
  const without = await runCli(['notifications', '--org', org, '--unread']);
  t.is(without.code, 2);
});

test('accounts set and show map the cash, sales and promotions accounts and supplier vendors; org update --time-zone takes only an IANA name', async (t) => {
  const org = await newOrganization();
  const set = await cliJson([
    'accounts',
    'set',
    '--org',
    org,
    '--cash',
    'Cash at Kampala depot',
    '--sales',
    'Sales - Beverages',
    '--promotions',
    'Trade promotions',
    '--vendor',
    'SUP01=Nile Breweries Ltd',
    '--vendor',
    'SUP02=Century Bottling',
  ]);
  t.deepEqual(set, {
    cashAccount: 'Cash at Kampala depot',
    salesAccount: 'Sales - Beverages',
    promotionsExpenseAccount: 'Trade promotions',
    vendors: { SUP01: 'Nile Breweries Ltd', SUP02: 'Century Bottling' },
  });
  await cliJson(['accounts', 'set', '--org', org, '--sales', '', '--vendor', 'SUP02=']);
  t.deepEqual(await cliJson(['accounts', 'show', '--org', org]), {
    cashAccount: 'Cash at Kampala depot',
    salesAccount: null,
    promotionsExpenseAccount: 'Trade promotions',
    vendors: { SUP01: 'Nile Breweries Ltd' },
  });
  const colon = await runCli(['accounts', 'set', '--org', org, '--cash', 'Assets:Cash']);
  t.is(colon.code, 1);

  t.is((await cliJson(['org', 'show', org])).timeZone, 'Africa/Kampala', 'the default');
  t.is((await cliJson(['org', 'update', org, '--time-zone', 'Africa/Nairobi'])).timeZone, 'Africa/Nairobi');
  for (const bad of ['+03:00', 'EAT', 'Africa/Kampla']) {
    const refused = await runCli(['org', 'update', org, '--time-zone', bad]);
    t.is(refused.code, 2, bad);
    t.regex(refused.stderr, /is not an IANA time zone/);
  }
  t.is(
    (await pool.query('SELECT time_zone FROM organizations WHERE id = $1', [org])).rows[0].time_zone,
    'Africa/Nairobi',
  );
});
