// `admin console owner|password --password-stdin` in the in-process runner (scripts/admin/run.ts): the run's stdin is
// given to runCli (text here; the binary passes its own process's), the password read from it (its line's end
// dropped) is the one that signs in, nothing is printed of it, and an empty or short one is refused.
import test from 'ava';
import pg from 'pg';
import { runCli as runInProcess } from '../../scripts/admin/run.js';
import { createOrganization } from '../../server/platform/access/organizations.js';
import { addMember } from '../../server/platform/access/members.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { signIn } from '../../server/console/sessions.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { runCli, runCliJson } from '../support/cli.js';
import { TEST_SECRETS } from '../support/secrets.js';

let database: TestDatabase;
let pool: pg.Pool;

test.before(async () => {
  database = await createTestDatabase('console_cli');
  pool = new pg.Pool({ connectionString: database.url, max: 4 });
});
test.after.always(async () => {
  await pool?.end();
  await database?.drop();
});

const db = () => kyselyOver(pool);
const env = () => ({ DATABASE_URL: database.url });

test("console owner --password-stdin: the password given on stdin signs in, the line's end dropped; none is printed", async (t) => {
  const org = (await createOrganization(db(), { name: 'Stdin Distributor' })).id;
  const owner = await runCliJson(
    ['console', 'owner', '--org', org, '--email', 'owner@example.com', '--name', 'Grace', '--password-stdin'],
    env(),
    { stdin: 'correct horse battery staple\n' },
  );
  t.is(owner.password, null, 'a password given is not printed back');
  t.like(await signIn(db(), { email: 'owner@example.com', password: 'correct horse battery staple' }), {
    kind: 'signed-in',
  });
  t.like(await signIn(db(), { email: 'owner@example.com', password: 'correct horse battery staple\n' }), {
    kind: 'refused',
  });
});

test('console password MEMBER --password-stdin from a stream; an empty stdin is a usage error (2) and a short password a failure (1), the old password kept', async (t) => {
  const org = (await createOrganization(db(), { name: 'Stream Distributor' })).id;
  const member = await addMember(db(), org, { name: 'Peter', email: 'peter@example.com', role: 'none' });
  async function* chunks() {
    yield Buffer.from('a password in ');
    yield 'two chunks\r\n';
  }
  const run = await runInProcess(['console', 'password', member.id, '--org', org, '--password-stdin'], {
    env: { ...process.env, ...TEST_SECRETS, ...env() },
    stdin: chunks(),
  });
  t.is(run.code, 0, run.stderr);
  t.false(run.stdout.includes('a password in two chunks'));
  t.like(await signIn(db(), { email: 'peter@example.com', password: 'a password in two chunks' }), {
    kind: 'signed-in',
  });

  const empty = await runCli(['console', 'password', member.id, '--org', org, '--password-stdin'], env(), {
    stdin: '',
  });
  t.is(empty.code, 2);
  t.regex(empty.stderr, /--password-stdin: no password on standard input/);
  const short = await runCli(['console', 'password', member.id, '--org', org, '--password-stdin'], env(), {
    stdin: 'short\n',
  });
  t.is(short.code, 1);
  t.regex(short.stderr, /at least 12 characters/);
  t.like(await signIn(db(), { email: 'peter@example.com', password: 'a password in two chunks' }), {
    kind: 'signed-in',
  });
});
