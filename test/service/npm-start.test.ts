import test from 'ava';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../scripts/lib/free-port.js';
import { apiVersion } from '../../server/platform/spec.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('npm start on a fresh machine: embedded PostgreSQL, a bootstrapped sandbox with a working key, graceful stop, and a restart that keeps the data', async (t) => {
  t.timeout(120_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'erp-start-'));
  chmodSync(dataDir, 0o755);
  const [port, pgPort] = [await freePort(), await freePort()];
  const env = { DATA_DIR: dataDir, PORT: String(port), EMBEDDED_POSTGRES_PORT: String(pgPort) };
  const base = `http://127.0.0.1:${port}/api/v1`;
  let first: ServerProcess | undefined;
  let second: ServerProcess | undefined;
  try {
    first = await startServerProcess(env);
    t.true(first.output().includes('API listening'), first.output());
    // The README's examples use these two variables, so they work on whatever port the service listens on.
    t.false(
      first.output().includes('First start'),
      'the first-start notice is for a terminal only, not for pipes and logs',
    );
    t.true(
      first
        .output()
        .includes(`\n  export ERP_BASE_URL=${base}\n  export ERP_API_KEY=$(cat ${dataDir}/sandbox-key.txt)\n`),
      first.output(),
    );
    const health = await fetch(`${base}/health`).then((r) => r.json());
    t.like(health, { status: 'ok', version: apiVersion, environment: 'sandbox' });

    const key = readFileSync(join(dataDir, 'sandbox-key.txt'), 'utf8').trim();
    t.regex(key, /^erp_test_[0-9a-z]{10}_[0-9A-Za-z]{43}$/);
    t.true(first.output().includes(key), 'the key is printed once at the first start');
    const me = (await fetch(`${base}/me`, { headers: { Authorization: `Bearer ${key}` } }).then((r) => r.json())) as {
      organization: { name: string };
      scopes: string[];
    };
    t.is(me.organization.name, 'Kampala Beverages Ltd (sandbox)');
    t.true(me.scopes.includes('customers:pii'));
    const page = (await fetch(`${base}/customers?limit=100`, { headers: { Authorization: `Bearer ${key}` } }).then(
      (r) => r.json(),
    )) as { data: { outletCode: string; externalCodes: { dms: string } }[]; hasMore: boolean };
    t.is(page.data.length, 100);
    t.true(page.hasMore, 'about 300 synthetic outlets');
    t.true(page.data.every((c) => /^UG\d{7}$/.test(c.outletCode) && c.externalCodes.dms === c.outletCode));
    t.true(
      (page.data as unknown as { routeId: string | null }[]).every((c) => c.routeId !== null),
      'every outlet is on a route',
    );
    const plans = (await fetch(`${base}/journey-plans?limit=100`, { headers: { Authorization: `Bearer ${key}` } }).then(
      (r) => r.json(),
    )) as { data: { routeId: string; visits: { customerId: string }[] }[] };
    t.is(plans.data.length, 5, 'a journey plan per route');
    t.is(new Set(plans.data.map((p) => p.routeId)).size, 5);
    t.is(
      new Set(plans.data.flatMap((p) => p.visits.map((v) => v.customerId))).size,
      300,
      'every outlet is visited, on one route',
    );

    const postgresPid = Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
    t.true(isAlive(postgresPid), 'the embedded PostgreSQL runs');
    first.child.kill('SIGTERM');
    t.is(await first.exited, 0, first.output());
    t.false(isAlive(postgresPid), 'the embedded PostgreSQL was stopped');

    second = await startServerProcess(env);
    t.true(second.output().includes('API listening'), second.output());
    t.false(second.output().includes('Sandbox ready'), 'no second bootstrap');
    const again = await fetch(`${base}/me`, { headers: { Authorization: `Bearer ${key}` } });
    t.is(again.status, 200, 'the data and the key survived the restart');
    second.child.kill('SIGTERM');
    t.is(await second.exited, 0);
  } finally {
    first?.child.kill('SIGKILL');
    second?.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});
