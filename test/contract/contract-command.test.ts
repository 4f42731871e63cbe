// `npm run contract` as a user runs it: a child process against the real service, with a real key. The number
// of requests it must report is counted here from the document, independently of the command's own plan, so an
// operation or example it skipped fails the test.
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiDocument } from '../../server/platform/spec.js';
import { createCaller } from '../support/callers.js';
import { useTestService } from '../support/service.js';

const api = useTestService(test, 'contract_command');
const pool = () => api().service.database.pool;
const scratch = mkdtempSync(join(tmpdir(), 'contract-test-'));
test.after.always(() => rmSync(scratch, { recursive: true, force: true }));

type Json = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options', 'trace'];

/** One per operation, or one per named request-body example. */
function expectedRequests(document: Json): number {
  const resolve = (node: Json): Json => (typeof node?.$ref === 'string'
    ? resolve(node.$ref.slice(2).split('/').reduce((n: Json, s: string) => n[s.replace(/~1/g, '/').replace(/~0/g, '~')], document))
    : node);
  let count = 0;
  for (const item of Object.values(document.paths as Json)) {
    for (const method of METHODS.filter((m) => resolve(item)[m])) {
      const body = resolve(item)[method].requestBody;
      const examples = body ? Object.values(resolve(body).content as Json).map((media: Json) => Object.keys(media.examples ?? {}).length)[0] : 0;
      count += Math.max(1, examples ?? 0);
    }
  }
  return count;
}

interface Run { code: number | null; stdout: string; stderr: string; lines: string[] }

function runContract(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/contract/run.ts', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk; });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, lines: stdout.split('\n').filter((l) => /^(PASS|FAIL) {2}/.test(l)) }));
  });
}

const statusOf = (line: string) => Number(/ (\d{3}) \d+ms /.exec(line)?.[1]);
const firstLine = (run: Run) => run.stdout.split('\n')[0]!;
const noticeLines = (run: Run) => run.stdout.split('\n').filter((l) => /^(Warning|Note): /.test(l));

/** A copy of the description with only GET /health, and another info.version: a quick run that passes. */
function healthOnly(version: string): string {
  const document = structuredClone(apiDocument) as Json;
  document.info.version = version;
  document.paths = { '/health': document.paths['/health'] };
  const file = join(scratch, `health-only-${version}.json`);
  writeFileSync(file, JSON.stringify(document));
  return file;
}

/** Passes everything on to the test service, except that GET /openapi.json answers 503. */
async function withoutOwnDescription(): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  const target = api().baseUrl;
  const server: Server = createServer((req, res) => {
    if (req.url?.split('?')[0]?.endsWith('/openapi.json')) {
      res.writeHead(503, { 'Content-Type': 'text/plain' }).end('unavailable');
      return;
    }
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !['host', 'connection'].includes(name))) as Record<string, string>;
    fetch(target + req.url, { method: req.method, headers }).then(async (answer) => {
      const body = Buffer.from(await answer.arrayBuffer());
      const passed = [...answer.headers].filter(([name]) => !['content-encoding', 'content-length', 'transfer-encoding', 'connection'].includes(name));
      res.writeHead(answer.status, Object.fromEntries(passed)).end(body);
    }, () => res.writeHead(502).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

test('every operation and example of the description passes against a fresh deployment, and again on a second run: upserts then answer 200 and the create makes a new code', async (t) => {
  const caller = await createCaller(pool());
  const expected = expectedRequests(apiDocument as Json);
  t.true(expected > 30);
  const runs: Run[] = [];
  for (const run of ['first', 'second']) {
    const result = await runContract(['--base-url', api().baseUrl, '--key', caller.secret]);
    t.is(result.code, 0, `${run} run:\n${result.stdout}${result.stderr}`);
    t.is(result.stdout.trimEnd().split('\n').at(-1), `${expected} passed, 0 failed`, `${run} run ends with the summary alone`);
    t.is(result.lines.length, expected);
    t.deepEqual(result.lines.filter((l) => !l.startsWith('PASS')), [], `${run} run`);
    t.deepEqual(result.lines.filter((l) => !(statusOf(l) >= 200 && statusOf(l) < 300)), [], `${run} run answers 2xx`);
    runs.push(result);
  }
  // By default the answers are judged by this repository's description; the deployment serves the same version.
  t.is(firstLine(runs[0]!), `Checking ${api().baseUrl}/api/v1 against this repository's description, generated/openapi.json (${apiDocument.info.title} ${apiDocument.info.version})`);
  t.deepEqual(noticeLines(runs[0]!), []);

  const upsert = (run: Run) => run.lines.find((l) => l.startsWith('PASS  PUT /customers/by-code/{system}/{code}'))!;
  t.deepEqual(runs.map((run) => statusOf(upsert(run))), [201, 200]);
  const created = runs.map((run) => /codes made new for this run: (UG[0-9]{7})/.exec(run.lines.find((l) => l.includes('POST /customers'))!)?.[1]);
  t.truthy(created[0]);
  t.not(created[0], created[1]);
  const { rows } = await pool().query('SELECT outlet_code, status FROM customers WHERE organization_id = $1', [caller.organizationId]);
  t.is(rows.length, 3, 'one customer per create, one for the upsert');
  t.deepEqual(rows.filter((r) => r.status === 'blocked').map((r) => r.outlet_code).sort(), [...created].sort(), 'the PATCH example blocked the customer its own run created');
});

test('--spec deployment judges the answers by the deployment\'s own description, and they all pass', async (t) => {
  const caller = await createCaller(pool());
  const result = await runContract(['--base-url', api().baseUrl, '--key', caller.secret, '--spec', 'deployment']);
  const expected = expectedRequests(apiDocument as Json);
  t.is(result.code, 0, result.stdout + result.stderr);
  t.is(firstLine(result), `Checking ${api().baseUrl}/api/v1 against its own description, ${api().baseUrl}/api/v1/openapi.json (${apiDocument.info.title} ${apiDocument.info.version})`);
  t.deepEqual(noticeLines(result), []);
  t.is(result.stdout.trimEnd().split('\n').at(-1), `${expected} passed, 0 failed`);
});

test('a description whose info.version differs from the deployment\'s own gets a warning line naming both, not a failure', async (t) => {
  const caller = await createCaller(pool());
  const spec = healthOnly('9.9.9');
  const result = await runContract(['--base-url', api().baseUrl, '--key', caller.secret, '--spec', spec]);
  t.is(result.code, 0, result.stdout + result.stderr);
  t.is(firstLine(result), `Checking ${api().baseUrl}/api/v1 against ${spec} (${apiDocument.info.title} 9.9.9)`);
  const notices = noticeLines(result);
  t.is(notices.length, 1, result.stdout);
  t.true(notices[0]!.startsWith(`Warning: the deployment describes itself as version ${apiDocument.info.version} (${api().baseUrl}/api/v1/openapi.json), but this check uses version 9.9.9`), notices[0]);
  t.deepEqual(result.lines.map((l) => l.split(' 200 ')[0]), ['PASS  GET /health']);
  t.is(result.stdout.trimEnd().split('\n').at(-1), '1 passed, 0 failed');
});

test('when the deployment\'s own description cannot be fetched, a line says so and the check goes on; with --spec deployment the run stops', async (t) => {
  const caller = await createCaller(pool());
  const proxy = await withoutOwnDescription();
  t.teardown(proxy.close);
  const result = await runContract(['--base-url', proxy.baseUrl, '--key', caller.secret, '--spec', healthOnly(apiDocument.info.version)]);
  t.is(result.code, 0, result.stdout + result.stderr);
  t.deepEqual(noticeLines(result), [`Note: could not fetch the deployment's own description, so its version is not compared (${proxy.baseUrl}/api/v1/openapi.json answered 503 without an OpenAPI document)`]);
  t.is(result.stdout.trimEnd().split('\n').at(-1), '1 passed, 0 failed');

  const own = await runContract(['--base-url', proxy.baseUrl, '--key', caller.secret, '--spec', 'deployment']);
  t.is(own.code, 1);
  t.regex(own.stderr, /openapi\.json answered 503 without an OpenAPI document/);
  t.deepEqual(own.lines, []);
});

test('a key the deployment refuses stops the run with exit code 1 and says so', async (t) => {
  const result = await runContract(['--base-url', api().baseUrl, '--key', `erp_0000000000_test_${'A'.repeat(43)}`]);
  t.is(result.code, 1);
  t.regex(result.stderr, /refused the key .*401/);
  t.deepEqual(result.lines, []);
});

test('an unreachable deployment stops the run with exit code 1 and says so', async (t) => {
  const caller = await createCaller(pool());
  const result = await runContract(['--base-url', 'http://127.0.0.1:1', '--key', caller.secret]);
  t.is(result.code, 1);
  t.regex(result.stderr, /cannot reach the deployment at http:\/\/127\.0\.0\.1:1\/api\/v1\/me/);
  const own = await runContract(['--base-url', 'http://127.0.0.1:1', '--key', caller.secret, '--spec', 'deployment']);
  t.is(own.code, 1);
  t.regex(own.stderr, /cannot reach the deployment at http:\/\/127\.0\.0\.1:1\/api\/v1\/openapi\.json/);
});

test('a production key is refused before anything is sent, unless --allow-live is given', async (t) => {
  // The base URL is unreachable: had the command sent anything, it would report that instead.
  const result = await runContract(['--base-url', 'http://127.0.0.1:1', '--key', `erp_0000000000_live_${'A'.repeat(43)}`]);
  t.is(result.code, 2);
  t.regex(result.stderr, /production key .*--allow-live.*Nothing was sent/s);
  const allowed = await runContract(['--base-url', 'http://127.0.0.1:1', '--key', `erp_0000000000_live_${'A'.repeat(43)}`, '--allow-live']);
  t.regex(allowed.stderr, /cannot reach/);
});

test('a response that breaks the description fails its operation and is counted in the summary', async (t) => {
  const caller = await createCaller(pool());
  const document = structuredClone(apiDocument) as Json;
  const health = document.components.schemas.Health;
  health.properties.uptimeSeconds = { type: 'integer' };
  health.required = [...health.required, 'uptimeSeconds'];
  const spec = join(scratch, 'health-with-uptime.json');
  writeFileSync(spec, JSON.stringify(document));
  const result = await runContract(['--base-url', api().baseUrl, '--key', caller.secret, '--spec', spec]);
  const expected = expectedRequests(document);
  t.is(result.code, 1);
  const failed = result.lines.filter((l) => l.startsWith('FAIL'));
  t.is(failed.length, 1, result.stdout);
  t.regex(failed[0]!, /^FAIL {2}GET \/health 200 .*must have required property 'uptimeSeconds'/);
  t.is(result.stdout.trimEnd().split('\n').at(-1), `${expected - 1} passed, 1 failed`);
});
