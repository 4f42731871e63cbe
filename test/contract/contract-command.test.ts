// `npm run contract` as a user runs it: a child process against the real service, with a real key. The requests
// it must report (method, path, example) are listed here from the document, independently of the command's own
// plan, and compared with its lines as a whole, so an operation or example it skipped or reported twice fails the
// test.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiDocument } from '../../server/platform/spec.js';
import { operatorActor } from '../../server/platform/access/actor.js';
import { recordObservation, recordVisit } from '../../server/modules/field-activity/service.js';
import { syntheticPng } from '../../server/modules/sandbox/synthetic-field-activity.js';
import { actingOrganization, getOrganization } from '../../server/platform/access/organizations.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { inTransaction } from '../../server/platform/database/transaction.js';
import { createCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';
import { openOneTrip } from '../support/trips.js';
import { notify } from '../../server/platform/webhooks/notifications.js';
import { addConnection } from '../../server/modules/dms/connections.js';
import { runContract, runContractBinary, type ContractRun } from '../support/contract.js';

const api = useSharedService(test);
const pool = () => api().pool;
const scratch = mkdtempSync(join(tmpdir(), 'contract-test-'));
test.after.always(() => rmSync(scratch, { recursive: true, force: true }));

type Json = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options', 'trace'];

/** `METHOD /path`, or `METHOD /path (example: name)`: one per operation, or one per named request-body example; sorted. */
function expectedRequests(document: Json): string[] {
  const resolve = (node: Json): Json =>
    typeof node?.$ref === 'string'
      ? resolve(
          node.$ref
            .slice(2)
            .split('/')
            .reduce((n: Json, s: string) => n[s.replace(/~1/g, '/').replace(/~0/g, '~')], document),
        )
      : node;
  const requests: string[] = [];
  for (const [path, item] of Object.entries((document.paths ?? {}) as Json)) {
    for (const method of METHODS.filter((m) => resolve(item)[m])) {
      const body = resolve(item)[method].requestBody;
      const content = body ? (resolve(body).content as Json) : {};
      const media = content['application/json'] ?? Object.values(content)[0];
      const names = Object.keys(media?.examples ?? {});
      const operation = `${method.toUpperCase()} ${path}`;
      requests.push(...(names.length > 0 ? names.map((name) => `${operation} (example: ${name})`) : [operation]));
    }
  }
  return requests.sort();
}

/** The request a PASS/FAIL line reports, in the form expectedRequests gives. */
function requestOf(line: string): string {
  const [, method, path, example] = /^(?:PASS|FAIL|SKIP) {2}(\S+) (\S+)(?: \(example: ([^)]+)\))?/.exec(line) ?? [];
  return `${method} ${path}${example ? ` (example: ${example})` : ''}`;
}
const requestsOf = (run: Run) => run.lines.map(requestOf).sort();

type Run = ContractRun;

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

/** Passes everything on to the test service (bodies left out), except that GET /openapi.json answers 503. */
function withoutOwnDescription(): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  return withOwnDescription((res) => res.writeHead(503, { 'Content-Type': 'text/plain' }).end('unavailable'));
}

/** Passes every GET on to the test service, except GET /openapi.json, which `answer` answers. */
async function withOwnDescription(
  answer: (res: ServerResponse) => void,
): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  const target = api().baseUrl;
  const server: Server = createServer((req, res) => {
    if (req.url?.split('?')[0]?.endsWith('/openapi.json')) {
      answer(res);
      return;
    }
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([name]) => !['host', 'connection'].includes(name)),
    ) as Record<string, string>;
    fetch(target + req.url, { method: req.method, headers }).then(
      async (answer) => {
        const body = Buffer.from(await answer.arrayBuffer());
        const passed = [...answer.headers].filter(
          ([name]) => !['content-encoding', 'content-length', 'transfer-encoding', 'connection'].includes(name),
        );
        res.writeHead(answer.status, Object.fromEntries(passed)).end(body);
      },
      () => res.writeHead(502).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A caller whose organisation has the delivery module and one trip (the API only reads trips; the examples' trip ids
 * stand for it), and a DMS connection for the examples' distributor (an operator adds connections, not the API).
 */
async function callerWithTrip() {
  const caller = await createCaller(pool(), { modules: ['delivery', 'field-sales'] });
  await openOneTrip(pool(), caller.organizationId);
  // Its examples' own writes make what the DMS examples need again on a second run: the REST examples' warehouse M01
  // (a location with dms code M01, which the DMS warehouse document must match) comes before the DMS pushes.
  await inTransaction(kyselyOver(pool()), (tx) =>
    addConnection(tx, caller.organizationId, 'canonical', { distributorCode: 'DIST001' }),
  );
  // Notifications are written by the service, never over the API: one to read and mark read, as in the sandbox.
  await notify(kyselyOver(pool()), caller.organizationId, 'test', 'A notification to read.');
  return caller;
}

/** A visit and a competitor observation with a photo, at a customer and by a salesperson the first run created. */
async function observeWithPhoto(organizationId: string): Promise<void> {
  const db = kyselyOver(pool());
  const actor = operatorActor(actingOrganization(await getOrganization(db, organizationId)), 'contract test');
  const first = async (table: 'customers' | 'salespeople') =>
    (
      await db
        .selectFrom(table)
        .select('id')
        .where('organization_id', '=', organizationId)
        .orderBy('id')
        .executeTakeFirstOrThrow()
    ).id;
  const customerId = await first('customers');
  const salespersonId = await first('salespeople');
  await inTransaction(db, async (tx) => {
    const visit = await recordVisit(tx, actor, {
      customerId,
      salespersonId,
      checkInAt: '2026-11-20T07:00:00Z',
      outcome: 'sale',
    });
    await recordObservation(tx, actor, {
      visitId: visit.id,
      customerId,
      observedBy: salespersonId,
      brand: 'Rival Cola',
      isOwnBrand: false,
      quantity: 5,
      photo: syntheticPng(4, 4, [9, 9, 9]),
    });
  });
}

test('every operation and example of the description passes against a fresh deployment, and again on a second run: upserts then answer 200 and the create makes a new code', async (t) => {
  t.timeout(15 * 60_000); // two whole runs of the check, the DMS examples included, on a loaded machine
  const caller = await callerWithTrip();
  const expected = expectedRequests(apiDocument as Json);
  t.true(expected.length > 30);
  t.is(new Set(expected).size, expected.length);
  const runs: Run[] = [];
  for (const run of ['first', 'second']) {
    // Its own organisation (callerWithTrip's, kept for the check): the DMS examples are sent too.
    // The first run is the compiled binary, as a user runs it; the second the same command in this process.
    const command = run === 'first' ? runContractBinary : runContract;
    const result = await command(['--base-url', api().baseUrl, '--key', caller.secret, '--dms', 'DIST001']);
    t.is(result.code, 0, `${run} run:\n${result.stdout}${result.stderr}`);
    t.is(
      result.stdout.trimEnd().split('\n').at(-1),
      `${expected.length} passed, 0 failed`,
      `${run} run ends with the summary alone`,
    );
    t.deepEqual(requestsOf(result), expected, `${run} run reports each request of the description once`);
    t.deepEqual(
      result.lines.filter((l) => !l.startsWith('PASS')),
      [],
      `${run} run`,
    );
    // A photo is read by a signed URL that a competitor observation links. A fresh organisation has none, so the
    // first run checks that the example's URL is refused as documented; the second follows a live one.
    t.deepEqual(
      result.lines
        .filter((l) => !(statusOf(l) >= 200 && statusOf(l) < 300))
        .map((l) => `${requestOf(l)} ${statusOf(l)}`),
      run === 'first' ? ['GET /photos/{id} 403'] : [],
      `${run} run answers 2xx`,
    );
    runs.push(result);
    if (run === 'first') await observeWithPhoto(caller.organizationId);
  }
  // By default the answers are judged by this repository's description; the deployment serves the same version.
  t.is(
    firstLine(runs[0]!),
    `Checking ${api().baseUrl}/api/v1 against this repository's description, generated/openapi.json (${apiDocument.info.title} ${apiDocument.info.version})`,
  );
  t.deepEqual(noticeLines(runs[0]!), []);

  const upsert = (run: Run) => run.lines.find((l) => l.startsWith('PASS  PUT /customers/by-code/{system}/{code}'))!;
  t.deepEqual(
    runs.map((run) => statusOf(upsert(run))),
    [201, 200],
  );
  const created = runs.map(
    (run) =>
      /codes made new for this run: (UG[0-9]{7})/.exec(run.lines.find((l) => l.includes('POST /customers'))!)?.[1],
  );
  t.truthy(created[0]);
  t.not(created[0], created[1]);
  // The customers the DMS customer example made (a code of its own per run) are left out.
  const { rows } = await pool().query(
    'SELECT outlet_code, status FROM customers WHERE organization_id = $1 AND outlet_code = ANY($2)',
    [caller.organizationId, [...created, 'UG0001234']],
  );
  t.is(rows.length, 3, 'one customer per create, one for the upsert');
  t.deepEqual(
    rows
      .filter((r) => r.status === 'blocked')
      .map((r) => r.outlet_code)
      .sort(),
    [...created].sort(),
    'the PATCH example blocked the customer its own run created',
  );
});

test("--spec deployment judges the answers by the deployment's own description, and they all pass", async (t) => {
  const caller = await callerWithTrip();
  const result = await runContract(['--base-url', api().baseUrl, '--key', caller.secret, '--spec', 'deployment']);
  const expected = expectedRequests(apiDocument as Json);
  t.is(result.code, 0, result.stdout + result.stderr);
  t.is(
    firstLine(result),
    `Checking ${api().baseUrl}/api/v1 against its own description, ${api().baseUrl}/api/v1/openapi.json (${apiDocument.info.title} ${apiDocument.info.version})`,
  );
  t.deepEqual(noticeLines(result), []);
  t.deepEqual(requestsOf(result), expected);
  // Without --dms the DMS examples (and the reads of a file batch only they make) are skipped.
  const skipped = result.lines.filter((l) => l.startsWith('SKIP'));
  t.deepEqual(
    skipped.map(requestOf).filter((r) => !r.startsWith('POST /dms/')),
    ['GET /dms/{system}/files/{batchId}', 'GET /dms/{system}/files/{batchId}/flags'],
  );
  t.is(
    result.stdout.trimEnd().split('\n').at(-1),
    `${expected.length - skipped.length} passed, 0 failed, ${skipped.length} skipped`,
  );
});

test("a description whose info.version differs from the deployment's own gets a warning line naming both, not a failure", async (t) => {
  const caller = await createCaller(pool());
  const spec = healthOnly('9.9.9');
  const result = await runContract(['--base-url', api().baseUrl, '--key', caller.secret, '--spec', spec]);
  t.is(result.code, 0, result.stdout + result.stderr);
  t.is(firstLine(result), `Checking ${api().baseUrl}/api/v1 against ${spec} (${apiDocument.info.title} 9.9.9)`);
  const notices = noticeLines(result);
  t.is(notices.length, 1, result.stdout);
  t.true(
    notices[0]!.startsWith(
      `Warning: the deployment describes itself as version ${apiDocument.info.version} (${api().baseUrl}/api/v1/openapi.json), but this check uses version 9.9.9`,
    ),
    notices[0],
  );
  t.deepEqual(
    result.lines.map((l) => l.split(' 200 ')[0]),
    ['PASS  GET /health'],
  );
  t.is(result.stdout.trimEnd().split('\n').at(-1), '1 passed, 0 failed');
});

test("when the deployment's own description cannot be fetched, a line says so and the check goes on; with --spec deployment the run stops", async (t) => {
  const caller = await createCaller(pool());
  const proxy = await withoutOwnDescription();
  t.teardown(proxy.close);
  const result = await runContract([
    '--base-url',
    proxy.baseUrl,
    '--key',
    caller.secret,
    '--spec',
    healthOnly(apiDocument.info.version),
  ]);
  t.is(result.code, 0, result.stdout + result.stderr);
  t.deepEqual(noticeLines(result), [
    `Note: could not fetch the deployment's own description, so its version is not compared (${proxy.baseUrl}/api/v1/openapi.json answered 503 without an OpenAPI document)`,
  ]);
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
  const result = await runContractBinary(['--base-url', 'http://127.0.0.1:1', '--key', caller.secret]);
  t.is(result.code, 1, 'the exit code of the binary');
  t.regex(result.stderr, /cannot reach the deployment at http:\/\/127\.0\.0\.1:1\/api\/v1\/me/);
  const own = await runContract(['--base-url', 'http://127.0.0.1:1', '--key', caller.secret, '--spec', 'deployment']);
  t.is(own.code, 1);
  t.regex(own.stderr, /cannot reach the deployment at http:\/\/127\.0\.0\.1:1\/api\/v1\/openapi\.json/);
});

test('a production key is refused before anything is sent, unless --allow-live is given', async (t) => {
  // The base URL is unreachable: had the command sent anything, it would report that instead. The binary: its exit
  // code 2.
  const result = await runContractBinary([
    '--base-url',
    'http://127.0.0.1:1',
    '--key',
    `erp_0000000000_live_${'A'.repeat(43)}`,
  ]);
  t.is(result.code, 2);
  t.regex(result.stderr, /production key .*--allow-live.*Nothing was sent/s);
  const allowed = await runContract([
    '--base-url',
    'http://127.0.0.1:1',
    '--key',
    `erp_0000000000_live_${'A'.repeat(43)}`,
    '--allow-live',
  ]);
  t.regex(allowed.stderr, /cannot reach/);
});

test('a response that breaks the description fails its operation and is counted in the summary', async (t) => {
  const caller = await callerWithTrip();
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
  t.deepEqual(requestsOf(result), expected);
  const skipped = result.lines.filter((l) => l.startsWith('SKIP')).length;
  t.is(
    result.stdout.trimEnd().split('\n').at(-1),
    `${expected.length - 1 - skipped} passed, 1 failed, ${skipped} skipped`,
  );
});

test('when its own customer creates fail, no write touches the records that were there before the run: the writes that need a customer are not sent', async (t) => {
  const caller = await createCaller(pool());
  const call = async (method: string, path: string, body?: unknown): Promise<Json> => {
    const headers: Record<string, string> = { ...caller.auth };
    if (body !== undefined)
      Object.assign(headers, { 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID() });
    const response = await fetch(`${api().baseUrl}/api/v1${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = (await response.json()) as Json;
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(answer)}`);
    return answer;
  };
  // The organisation's own records, like a sandbox's demo distributor: three outlets, a route with two of them
  // and its journey plan.
  const demo: Json[] = [];
  for (const n of [1, 2, 3])
    demo.push(
      await call('POST', '/customers', {
        outletCode: `UG900000${n}`,
        name: `Demo outlet ${n}`,
        channel: 'retail',
        region: 'Central',
      }),
    );
  const route = await call('PUT', '/routes/by-code/dms/R01', { routeCode: 'R01', name: 'Demo route' });
  await call('PUT', `/routes/${String(route.id)}/outlets`, { customerIds: [demo[0]!.id, demo[1]!.id] });
  await call('PUT', '/journey-plans', {
    routeId: route.id,
    visits: [
      { customerId: demo[0]!.id, weekday: 1, sequence: 1, frequency: 'weekly' },
      { customerId: demo[1]!.id, weekday: 2, sequence: 1, frequency: 'weekly' },
    ],
  });
  const records = async () => ({
    customers: (await call('GET', '/customers?limit=100')).data as Json[],
    route: await call('GET', `/routes/${String(route.id)}`),
    plans: (await call('GET', '/journey-plans?limit=100')).data as Json[],
  });
  const before = await records();
  t.deepEqual(before.customers.map((c) => [c.outletCode, c.status, c.routeId]).sort(), [
    ['UG9000001', 'active', route.id],
    ['UG9000002', 'active', route.id],
    ['UG9000003', 'active', null],
  ]);
  t.is(before.plans.length, 1);

  // A description a version ahead: its customer create and upsert carry a field this deployment refuses.
  const document = structuredClone(apiDocument) as Json;
  for (const operation of [
    document.paths['/customers'].post,
    document.paths['/customers/by-code/{system}/{code}'].put,
  ]) {
    operation.requestBody.content['application/json'].examples.outlet.value.loyaltyTier = 'gold';
  }
  const spec = join(scratch, 'customer-field-refused.json');
  writeFileSync(spec, JSON.stringify(document));
  const result = await runContract(['--base-url', api().baseUrl, '--key', caller.secret, '--spec', spec]);
  t.is(result.code, 1, result.stdout + result.stderr);
  t.deepEqual(requestsOf(result), expectedRequests(document));

  const lineOf = (request: string) => result.lines.find((l) => requestOf(l) === request)!;
  const creates = ['POST /customers (example: outlet)', 'PUT /customers/by-code/{system}/{code} (example: outlet)'].map(
    (request) => {
      const line = lineOf(request);
      t.regex(line, /^FAIL {2}\S+ \S+ \(example: outlet\) 4\d\d /, line);
      return `${request} [${/\[(contract-[0-9a-f]+-\d+)\]/.exec(line)![1]}]`;
    },
  );
  const reason = `not sent: the record it needs (cus) was not created by this run (see ${creates.join(', ')})`;
  for (const request of [
    'PUT /journey-plans (example: plan)',
    'PUT /routes/{id}/outlets (example: twoOutlets)',
    'PATCH /customers/{id} (example: block)',
  ]) {
    t.regex(
      lineOf(request),
      new RegExp(`^FAIL {2}${request.replace(/[(){}/]/g, '\\$&')} --- \\[contract-[0-9a-f]+-\\d+\\] {2}`),
      request,
    );
    t.true(lineOf(request).endsWith(`  ${reason}`), lineOf(request));
  }
  // The writes that need only records this run wrote still go ahead (the salesperson of the run's route R14).
  t.regex(lineOf('PUT /salespeople/by-code/{system}/{code} (example: salesperson)'), /^PASS /);

  const after = await records();
  t.deepEqual(
    after,
    before,
    'the customers (status, route), the route and the journey plans that were there are as they were',
  );
});

test('a description without operations sends nothing, and that fails', async (t) => {
  const caller = await createCaller(pool());
  for (const paths of [{}, null]) {
    const document = { ...(structuredClone(apiDocument) as Json), paths };
    const spec = join(scratch, `no-operations-${String(paths)}.json`);
    writeFileSync(spec, JSON.stringify(document));
    const result = await runContract(['--base-url', api().baseUrl, '--key', caller.secret, '--spec', spec]);
    t.is(result.code, 1, `paths: ${JSON.stringify(paths)}\n${result.stdout}${result.stderr}`);
    t.deepEqual(result.lines, []);
    t.is(result.stdout.trimEnd().split('\n').at(-1), '0 passed, 0 failed');
    t.is(
      result.stderr,
      `error: nothing was sent: ${spec} describes no operations (its paths are empty), so nothing of the deployment was checked\n`,
    );
  }
});

test("--spec deployment reports each operation of this repository's description that the deployment's own lacks as a failure", async (t) => {
  const caller = await createCaller(pool());
  const document = structuredClone(apiDocument) as Json;
  let served: Json = document;
  const proxy = await withOwnDescription((res) =>
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(served)),
  );
  t.teardown(proxy.close);
  const all = expectedRequests(apiDocument as Json).map((r) => r.replace(/ \(example: .*\)$/, ''));
  const missingLine = (operation: string) =>
    `FAIL  ${operation} ---  missing from the deployment's description (this repository's generated/openapi.json has it)`;

  served = { ...document, paths: { '/health': document.paths['/health'], '/me': document.paths['/me'] } };
  const some = await runContract(['--base-url', proxy.baseUrl, '--key', caller.secret, '--spec', 'deployment']);
  t.is(some.code, 1, some.stdout + some.stderr);
  const missing = [...new Set(all)].filter((o) => !['GET /health', 'GET /me'].includes(o)).sort();
  t.deepEqual(
    some.lines
      .filter((l) => l.startsWith('PASS'))
      .map(requestOf)
      .sort(),
    ['GET /health', 'GET /me'],
  );
  t.deepEqual(some.lines.filter((l) => l.startsWith('FAIL')).sort(), missing.map(missingLine).sort());
  t.is(some.stdout.trimEnd().split('\n').at(-1), `2 passed, ${missing.length} failed`);
  t.is(some.stderr, '');

  served = { ...document, paths: {} };
  const none = await runContract(['--base-url', proxy.baseUrl, '--key', caller.secret, '--spec', 'deployment']);
  t.is(none.code, 1);
  t.deepEqual(none.lines.sort(), [...new Set(all)].sort().map(missingLine).sort());
  t.regex(none.stderr, /^error: nothing was sent: its own description, \S+\/openapi\.json describes no operations/);
});
