// The SDK as a partner gets it: `npm pack`, installed offline into an empty project, a sample program
// type-checked against the installed declarations, compiled, and run against `npm start` with a real webhook.
import test from 'ava';
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../scripts/lib/free-port.js';
import { startServerProcess } from '../support/server-process.js';

const root = process.cwd();
const exec = promisify(execFile);
const npm = (args: string[], cwd: string) => exec('npm', args, { cwd, env: { ...process.env, npm_config_update_notifier: 'false' }, maxBuffer: 16 * 1024 * 1024 });

/** Packs the SDK and its runtime dependencies (taken from node_modules, so nothing is downloaded). */
async function packSdk(into: string): Promise<string[]> {
  await npm(['run', 'build', '-w', 'client-sdk'], root);
  await npm(['pack', '--ignore-scripts', '--pack-destination', into], join(root, 'client-sdk'));
  await npm(['pack', '--ignore-scripts', '--pack-destination', into, join(root, 'node_modules', 'openapi-fetch'), join(root, 'node_modules', 'openapi-typescript-helpers')], into);
  return readdirSync(into).filter((name) => name.endsWith('.tgz')).map((name) => join(into, name));
}

/** An empty project with the tarballs installed offline (a dead registry address makes any download fail). */
async function sampleProject(tarballs: string[]): Promise<string> {
  const app = mkdtempSync(join(tmpdir(), 'erp-sdk-sample-'));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'sdk-sample', private: true, type: 'module' }));
  await npm(['install', '--offline', '--registry', 'http://127.0.0.1:9', '--no-audit', '--no-fund', ...tarballs], app);
  mkdirSync(join(app, 'src'));
  copyFileSync(join(root, 'test', 'fixtures', 'sdk-sample', 'sample.ts'), join(app, 'src', 'sample.ts'));
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, outDir: 'dist', rootDir: 'src',
      skipLibCheck: false, types: ['node'], typeRoots: [join(root, 'node_modules', '@types')],
    },
    include: ['src'],
  }));
  return app;
}

test('a sample program on the packed SDK type-checks, creates once under one key, walks every page, handles each feed change once and verifies a real webhook', async (t) => {
  t.timeout(240_000);
  const packs = mkdtempSync(join(tmpdir(), 'erp-sdk-packs-'));
  const tarballs = await packSdk(packs);
  t.is(tarballs.length, 3);
  const app = await sampleProject(tarballs);
  const installed = JSON.parse(readFileSync(join(app, 'node_modules', '@distributor-erp', 'sdk', 'package.json'), 'utf8')) as { version: string };
  t.is(installed.version, JSON.parse(readFileSync(join(root, 'client-sdk', 'package.json'), 'utf8')).version);

  // Type-check and compile against the installed declarations only.
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const compiled = await exec(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: app }).then(() => '', (e: { stdout: string }) => e.stdout);
  t.is(compiled, '', 'the sample type-checks against the packed SDK');

  const dataDir = mkdtempSync(join(tmpdir(), 'erp-sdk-start-'));
  chmodSync(dataDir, 0o755);
  const [port, pgPort, webhookPort] = [await freePort(), await freePort(), await freePort()];
  const env = { DATA_DIR: dataDir, PORT: String(port), EMBEDDED_POSTGRES_PORT: String(pgPort), WEBHOOK_ALLOW_LOOPBACK: 'true' };
  const server = await startServerProcess(env);
  try {
    t.true(server.output().includes('API listening'), server.output());
    const baseUrl = `http://127.0.0.1:${port}/api/v1`;
    const key = readFileSync(join(dataDir, 'sandbox-key.txt'), 'utf8').trim();
    const me = await fetch(`${baseUrl}/me`, { headers: { Authorization: `Bearer ${key}` } }).then((r) => r.json()) as { organization: { id: string } };
    const { stdout: added } = await exec(process.execPath, ['--import', 'tsx', 'scripts/admin/cli.ts', 'webhook', 'add', '--org', me.organization.id,
      '--url', `http://127.0.0.1:${webhookPort}/webhooks`, '--events', 'customer.created', '--json'], { env: { ...process.env, ...env, DATABASE_URL: '' } });
    const endpoint = JSON.parse(added) as { secret: string };

    const run = await exec(process.execPath, ['dist/sample.js'], {
      cwd: app,
      env: { ...process.env, ERP_BASE_URL: baseUrl, ERP_API_KEY: key, WEBHOOK_PORT: String(webhookPort), WEBHOOK_SECRET: endpoint.secret },
    }).catch((e: { stdout: string; stderr: string }) => ({ stdout: e.stdout, stderr: e.stderr }));
    let seen: Record<string, any>;
    try {
      seen = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, any>;
    } catch {
      t.fail(`the sample printed no result.\nstdout: ${run.stdout}\nstderr: ${(run as { stderr?: string }).stderr ?? ''}`);
      return;
    }
    t.log(JSON.stringify(seen).slice(0, 400));

    t.is(seen.secondId, seen.createdId, 'the same key gives the same record');
    t.is(seen.replayed, 'true');
    t.is(seen.withOurCode, 1, 'one record with the code, found by walking every page');
    t.is(seen.walked, 301, 'the 300 sandbox outlets and ours');
    t.is(seen.distinctWalked, 301, 'no customer twice');
    t.is(seen.handledFirst, 301);
    t.is(seen.handledFirstDistinct, 301);
    t.deepEqual([...seen.handledSecond].sort(), [...seen.expectedSecond].sort(), 'the second poll hands over the two changes, once each');
    t.like(seen.error, { status: 400, code: 'invalid_field', field: '/outletCode' });
    t.regex(seen.error.requestId, /\S+/);
    t.like(seen.webhook, { type: 'customer.created', objectId: seen.createdId, apiVersion: 'v1' });
    t.regex(seen.webhook.id, /^evt_/);
    t.is(seen.replayStatus, 204, 'a redelivery is answered 2xx...');
    t.true(seen.duplicateDeliveries >= 1, '...and skipped by the gate as an event id already processed');
    t.is(seen.tamperedStatus, 400, 'a changed body fails verification');
    t.is(seen.rejectedDeliveries, 1, 'only the tampered copy was refused');
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(app, { recursive: true, force: true });
    rmSync(packs, { recursive: true, force: true });
  }
});
