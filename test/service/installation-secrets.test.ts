// Issue 34, item 7: the sandbox's cursor secret and sealing key were public constants (every sandbox signed cursors and
// photo URLs alike), so anyone could forge them. Without CURSOR_SECRET and WEBHOOK_SECRET_KEY, an installation now
// generates its own once, in DATA_DIR/secrets.json (mode 0600), and every later start in that DATA_DIR reuses them;
// production refuses to start without the variables.
import test from 'ava';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../server/platform/config.js';
import { SECRETS_FILE, withInstallationSecrets } from '../../server/platform/installation-secrets.js';
import { StartProblem } from '../../server/platform/start-checks.js';
import { createCaller } from '../support/callers.js';
import { startTestService } from '../support/service.js';

const scratch = mkdtempSync(join(tmpdir(), 'erp-installation-secrets-'));
test.after.always(() => rmSync(scratch, { recursive: true, force: true }));
let dirs = 0;
const freshDataDir = () => join(scratch, `data-${++dirs}`);
const sandbox = (dataDir: string, env: Record<string, string> = {}) =>
  withInstallationSecrets(loadConfig({ DATA_DIR: dataDir, ...env }));

test('two fresh data directories get different secrets, written once to secrets.json with mode 0600', (t) => {
  const [a, b] = [freshDataDir(), freshDataDir()];
  const first = sandbox(a);
  const second = sandbox(b);
  t.not(first.cursorSecret, second.cursorSecret);
  t.false(first.webhookSecretKey.equals(second.webhookSecretKey));
  t.is(first.webhookSecretKey.length, 32);
  t.true(first.cursorSecret.length >= 16);
  for (const dir of [a, b])
    t.is(statSync(join(dir, SECRETS_FILE)).mode & 0o777, 0o600, 'readable by the service account only');
  t.not(first.cursorSecret, 'erp-cursor-development-key', 'never the old public default');
  t.false(first.webhookSecretKey.equals(Buffer.alloc(32, 7)), 'never the old public default');
});

test('a second start in the same data directory reuses its secrets', (t) => {
  const dir = freshDataDir();
  const first = sandbox(dir);
  const written = readFileSync(join(dir, SECRETS_FILE), 'utf8');
  const again = sandbox(dir);
  t.is(again.cursorSecret, first.cursorSecret);
  t.true(again.webhookSecretKey.equals(first.webhookSecretKey));
  t.is(readFileSync(join(dir, SECRETS_FILE), 'utf8'), written, 'the file is not rewritten');
});

test('a variable that is set wins over the file; the one not set comes from the file', (t) => {
  const dir = freshDataDir();
  const stored = sandbox(dir);
  const withCursor = sandbox(dir, { CURSOR_SECRET: 'a-configured-cursor-secret' });
  t.is(withCursor.cursorSecret, 'a-configured-cursor-secret');
  t.true(withCursor.webhookSecretKey.equals(stored.webhookSecretKey));
  const both = sandbox(freshDataDir(), {
    CURSOR_SECRET: 'a-configured-cursor-secret',
    WEBHOOK_SECRET_KEY: 'ab'.repeat(32),
  });
  t.true(both.webhookSecretKey.equals(Buffer.from('ab'.repeat(32), 'hex')));
});

test('both variables set: no secrets file is written', (t) => {
  const dir = freshDataDir();
  sandbox(dir, { CURSOR_SECRET: 'a-configured-cursor-secret', WEBHOOK_SECRET_KEY: 'ab'.repeat(32) });
  t.throws(() => statSync(join(dir, SECRETS_FILE)));
});

test('a damaged secrets file is refused naming it, never replaced (what was sealed under it would be lost)', (t) => {
  const dir = freshDataDir();
  sandbox(dir);
  writeFileSync(join(dir, SECRETS_FILE), '{"cursorSecret": "short"}');
  const error = t.throws(() => sandbox(dir), { instanceOf: StartProblem });
  t.regex(
    error!.message,
    new RegExp(`${join(dir, SECRETS_FILE)} is damaged.*set CURSOR_SECRET and WEBHOOK_SECRET_KEY`),
  );
  t.is(readFileSync(join(dir, SECRETS_FILE), 'utf8'), '{"cursorSecret": "short"}');
});

test('production without the variables refuses to start, naming each; it never generates them', (t) => {
  const dir = freshDataDir();
  const error = t.throws(
    () =>
      loadConfig({
        ENVIRONMENT: 'production',
        DATABASE_URL: 'postgresql://db/erp',
        DATA_DIR: dir,
        PUBLIC_BASE_URL: 'https://erp.example.com',
      }),
    { instanceOf: ConfigError },
  ) as ConfigError;
  t.true(
    error.problems.some((p) => p.startsWith('CURSOR_SECRET is required when ENVIRONMENT=production')),
    error.message,
  );
  t.true(
    error.problems.some((p) => p.startsWith('WEBHOOK_SECRET_KEY is required when ENVIRONMENT=production')),
    error.message,
  );
  t.throws(() => statSync(join(dir, SECRETS_FILE)));
});

test('a sandbox service without CURSOR_SECRET signs cursors with its installation secret, and refuses one signed with the old public default', async (t) => {
  const dir = freshDataDir();
  const api = await startTestService('installation_secrets', {
    env: { CURSOR_SECRET: '', WEBHOOK_SECRET_KEY: '', DATA_DIR: dir },
  });
  try {
    const stored = JSON.parse(readFileSync(join(dir, SECRETS_FILE), 'utf8')) as {
      cursorSecret: string;
      webhookSecretKey: string;
    };
    t.is(api.config.cursorSecret, stored.cursorSecret);
    t.true(api.config.webhookSecretKey.equals(Buffer.from(stored.webhookSecretKey, 'hex')));
    const caller = await createCaller(api.service.database.pool);
    for (let i = 0; i < 2; i++) {
      const created = await api.request('POST', '/customers', {
        headers: { ...caller.auth, 'Idempotency-Key': `installation-${i}` },
        json: { outletCode: `UG${String(8_200_000 + i)}`, name: 'Secret Shop', channel: 'retail' },
      });
      t.is(created.status, 201);
    }
    const first = await api.request('GET', '/customers?limit=1', { headers: caller.auth });
    const [payload, signature] = (first.body.nextCursor as string).split('.') as [string, string];
    const sign = (key: string) => createHmac('sha256', key).update(payload).digest('base64url').slice(0, 22);
    t.is(signature, sign(stored.cursorSecret));
    const forged = await api.request(
      'GET',
      `/customers?limit=1&cursor=${encodeURIComponent(`${payload}.${sign('erp-cursor-development-key')}`)}`,
      { headers: caller.auth },
    );
    t.is(forged.status, 400);
    t.is(forged.body.code, 'invalid_field');
  } finally {
    await api.stop();
  }
});
