// The SDK as a partner gets it: `npm pack`, installed offline into empty projects, one of each module system:
// - an ES module project: a sample program type-checked against the installed declarations, compiled, and run
//   against `npm start` with a real webhook; and the quick start of client-sdk/README.md, exactly as written;
// - a CommonJS project: a program whose import tsc turns into require(), typed by the CommonJS declarations
//   (checked under "module": "node16" and the older "commonjs"), run against the same service.
// One pack and one service for the file, tests in turn: this is the only test file that writes client-sdk/dist.
import test from 'ava';
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../scripts/lib/free-port.js';
import { apiVersion } from '../../server/platform/spec.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const root = process.cwd();
const exec = promisify(execFile);
const npm = (args: string[], cwd: string) => exec('npm', args, { cwd, env: { ...process.env, npm_config_update_notifier: 'false' }, maxBuffer: 16 * 1024 * 1024 });
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
/** tsc's complaints ('' when it compiled cleanly). */
const compile = (cwd: string, args: string[] = []) => exec(process.execPath, [tsc, '-p', 'tsconfig.json', ...args], { cwd }).then(() => '', (e: { stdout: string }) => e.stdout);
const sdkVersion = (JSON.parse(readFileSync(join(root, 'client-sdk', 'package.json'), 'utf8')) as { version: string }).version;

/** Packs the SDK and its runtime dependencies (taken from node_modules, so nothing is downloaded). */
async function packSdk(into: string): Promise<string[]> {
  await npm(['run', 'build', '-w', 'client-sdk'], root);
  await npm(['pack', '--ignore-scripts', '--pack-destination', into], join(root, 'client-sdk'));
  await npm(['pack', '--ignore-scripts', '--pack-destination', into, join(root, 'node_modules', 'openapi-fetch'), join(root, 'node_modules', 'openapi-typescript-helpers')], into);
  return readdirSync(into).filter((name) => name.endsWith('.tgz')).map((name) => join(into, name));
}

/** An empty project of the given module system with the tarballs installed offline (a dead registry address makes any download fail). */
async function sampleProject(tarballs: string[], type: 'module' | 'commonjs', compilerOptions: Record<string, unknown>): Promise<string> {
  const app = mkdtempSync(join(tmpdir(), `erp-sdk-${type}-`));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: `sdk-sample-${type}`, private: true, type }));
  await npm(['install', '--offline', '--registry', 'http://127.0.0.1:9', '--no-audit', '--no-fund', ...tarballs], app);
  mkdirSync(join(app, 'src'));
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      target: 'ES2022', strict: true, outDir: 'dist', rootDir: 'src',
      skipLibCheck: false, types: ['node'], typeRoots: [join(root, 'node_modules', '@types')],
      ...compilerOptions,
    },
    include: ['src'],
  }));
  return app;
}

/** The first ```ts block after the README's "## Quick start" heading. */
function readmeQuickStart(): string {
  const readme = readFileSync(join(root, 'client-sdk', 'README.md'), 'utf8');
  const section = readme.split(/^## Quick start$/m)[1]?.split(/^## /m)[0] ?? '';
  const block = /^```ts\n([\s\S]*?)^```$/m.exec(section);
  if (!block) throw new Error('client-sdk/README.md has no ```ts block under "## Quick start"');
  return block[1]!;
}

interface Context { esm: string; cjs: string; packs: string; dataDir: string; server: ServerProcess; env: Record<string, string>; baseUrl: string; key: string }
let context: Context;

test.before(async () => {
  const packs = mkdtempSync(join(tmpdir(), 'erp-sdk-packs-'));
  const tarballs = await packSdk(packs);
  if (tarballs.length !== 3) throw new Error(`expected 3 tarballs, got ${tarballs.join(', ')}`);
  const esm = await sampleProject(tarballs, 'module', { module: 'NodeNext', moduleResolution: 'NodeNext' });
  copyFileSync(join(root, 'test', 'fixtures', 'sdk-sample', 'sample.ts'), join(esm, 'src', 'sample.ts'));
  writeFileSync(join(esm, 'src', 'quick-start.ts'), readmeQuickStart());
  const cjs = await sampleProject(tarballs, 'commonjs', { module: 'Node16', moduleResolution: 'Node16' });
  copyFileSync(join(root, 'test', 'fixtures', 'sdk-sample', 'cjs', 'sample.ts'), join(cjs, 'src', 'sample.ts'));

  const dataDir = mkdtempSync(join(tmpdir(), 'erp-sdk-start-'));
  chmodSync(dataDir, 0o755);
  const [port, pgPort] = [await freePort(), await freePort()];
  const env = { DATA_DIR: dataDir, PORT: String(port), EMBEDDED_POSTGRES_PORT: String(pgPort), WEBHOOK_ALLOW_LOOPBACK: 'true' };
  const server = await startServerProcess(env);
  if (!server.output().includes('API listening')) {
    await server.stop();
    throw new Error(`npm start did not come up:\n${server.output()}`);
  }
  const key = readFileSync(join(dataDir, 'sandbox-key.txt'), 'utf8').trim();
  context = { esm, cjs, packs, dataDir, server, env, baseUrl: `http://127.0.0.1:${port}/api/v1`, key };
});

test.after.always(async () => {
  if (!context) return;
  await context.server.stop();
  for (const dir of [context.dataDir, context.esm, context.cjs, context.packs]) rmSync(dir, { recursive: true, force: true });
});

test.serial('the package declares an ES module and a CommonJS entry, each with its own declarations, and the tested Node versions', (t) => {
  const installed = JSON.parse(readFileSync(join(context.cjs, 'node_modules', '@distributor-erp', 'sdk', 'package.json'), 'utf8')) as Record<string, any>;
  t.is(installed.version, sdkVersion);
  t.deepEqual(installed.exports['.'], {
    import: { types: './dist/esm/index.d.ts', default: './dist/esm/index.js' },
    require: { types: './dist/cjs/index.d.ts', default: './dist/cjs/index.js' },
  });
  t.deepEqual(installed.engines, { node: '>=20' });
  // Without this marker Node would read dist/cjs/*.js as ES modules (the package itself is "type": "module").
  t.deepEqual(JSON.parse(readFileSync(join(context.cjs, 'node_modules', '@distributor-erp', 'sdk', 'dist', 'cjs', 'package.json'), 'utf8')), { type: 'commonjs' });
});

test.serial('a CommonJS project requires the packed SDK, type-checks against its CommonJS declarations and talks to the service', async (t) => {
  t.timeout(180_000);
  const { cjs } = context;
  t.is(await compile(cjs), '', 'the sample type-checks and compiles under "module": "node16" in a CommonJS project');
  t.is(await compile(cjs, ['--noEmit', '--module', 'commonjs', '--moduleResolution', 'node10']), '', 'and under the older "module": "commonjs"');
  const emitted = readFileSync(join(cjs, 'dist', 'sample.js'), 'utf8');
  t.regex(emitted, /require\("@distributor-erp\/sdk"\)/, 'tsc turned the import into require()');
  t.notRegex(emitted, /\bimport\(/, 'no dynamic import() stands in for it');

  const run = await exec(process.execPath, ['dist/sample.js'], { cwd: cjs, env: { ...process.env, ERP_BASE_URL: context.baseUrl, ERP_API_KEY: context.key } })
    .catch((e: { stdout: string; stderr: string }) => e);
  let seen: Record<string, any>;
  try {
    seen = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, any>;
  } catch {
    t.fail(`the CommonJS sample printed no result.\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
    return;
  }
  t.is(seen.loadedFrom, join(cjs, 'node_modules', '@distributor-erp', 'sdk', 'dist', 'cjs', 'index.js'));
  t.true(seen.commonjs);
  t.deepEqual(seen.health, { status: 'ok', version: apiVersion });
  t.is(seen.customers, 2);
  t.deepEqual(seen.notFound, { status: 404, code: 'not_found', type: '/api/v1/errors/not_found' });
  t.regex(seen.missingBaseUrl, /^TypeError: createErpClient needs baseUrl/);
});

test.serial('the quick start of client-sdk/README.md runs as written in an ES module project against a local service', async (t) => {
  t.timeout(180_000);
  const { esm } = context;
  t.is(await compile(esm), '', 'the quick start and the sample type-check against the ES module declarations');
  t.regex(readFileSync(join(esm, 'dist', 'quick-start.js'), 'utf8'), /^import \{[^}]*\} from '@distributor-erp\/sdk';$/m);
  const run = await exec(process.execPath, ['dist/quick-start.js'], { cwd: esm, env: { ...process.env, ERP_BASE_URL: context.baseUrl, ERP_API_KEY: context.key } })
    .catch((e: { stdout: string; stderr: string }) => e);
  const lines = run.stdout.trim().split('\n');
  t.is(lines.length, 3, `stdout: ${run.stdout}\nstderr: ${run.stderr}`);
  t.is(lines[0], `health ok ${apiVersion}`);
  t.regex(lines[1]!, /^customers \S+ \S+ \S+$/);
  // The error example names a code of the catalogue, and the field with its own reason.
  t.regex(lines[2]!, /^refused 422 business_rule \/outletCode duplicate_code \S+$/);
  const catalogue = await fetch(`${context.baseUrl}/errors/business_rule`);
  t.is(catalogue.status, 200, 'GET /errors/business_rule describes the code the example handles');
});

test.serial('a sample program on the packed SDK type-checks, creates once under one key, walks every page, handles each feed change once and verifies a real webhook', async (t) => {
  t.timeout(240_000);
  const { esm: app, env, baseUrl, key } = context;
  // Type-check and compile against the installed declarations only.
  t.is(await compile(app), '', 'the sample type-checks against the packed SDK');
  const webhookPort = await freePort();
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
});
