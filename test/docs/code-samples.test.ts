// The request samples of the reference page (x-codeSamples, written by npm run generate through
// scripts/lib/code-samples.ts): every SDK sample compiles against the SDK's types, and every curl sample of a read
// runs against the service and gets the answer the spec documents.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { sampleRequest } from '../../scripts/lib/code-samples.js';
import { writeDistributor } from '../../server/modules/sandbox/sandbox-writer.js';
import { sandboxDistributor } from '../../server/modules/sandbox/synthetic-distributor.js';
import { inTransaction } from '../../server/platform/database/transaction.js';
import { API_BASE_PATH, apiDocument } from '../../server/platform/spec.js';
import { createCaller, type TestCaller } from '../support/callers.js';
import { addConnection } from '../../server/modules/dms/connections.js';
import { useSharedService } from '../support/service.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { actingOrganization, getOrganization } from '../../server/platform/access/organizations.js';
import { operatorActor } from '../../server/platform/access/actor.js';
import { recordPayment } from '../../server/modules/payments/documents.js';

type Json = Record<string, any>;
const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..', '..');
const api = useSharedService(test);
const document = apiDocument as unknown as Json;

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];
const operations = Object.entries(document.paths as Record<string, Json>).flatMap(([template, item]) =>
  METHODS.filter((method) => item[method]).map((method) => {
    const operation = item[method] as Json;
    const samples = (operation['x-codeSamples'] ?? []) as { lang: string; label: string; source: string }[];
    return {
      name: `${method.toUpperCase()} ${template}`,
      method: method.toUpperCase(),
      template,
      operation,
      request: sampleRequest(document, template, method, item, operation),
      curl: samples.find((s) => s.label === 'curl')?.source ?? '',
      sdk: samples.find((s) => s.label === 'SDK')?.source ?? '',
      samples,
    };
  }),
);
const reads = operations.filter((o) => o.method === 'GET');

test('every operation carries two samples, curl then the SDK, with the key only where the operation takes one', (t) => {
  t.true(operations.length >= 30);
  for (const { name, operation, samples, curl, sdk, method, template } of operations) {
    t.deepEqual(
      samples.map(({ lang, label }) => [lang, label]),
      [
        ['Shell', 'curl'],
        ['TypeScript', 'SDK'],
      ],
      name,
    );
    const keyed = (operation.security ?? document.security).length > 0;
    t.is(curl.includes('-H "Authorization: Bearer $ERP_API_KEY"'), keyed, `${name}: Authorization in curl`);
    t.is(sdk.includes('apiKey: process.env.ERP_API_KEY'), keyed, `${name}: apiKey in the SDK sample`);
    t.true(curl.startsWith(`curl -sS${method === 'GET' ? '' : ` -X ${method}`} "$ERP_BASE_URL/`), name);
    t.true(sdk.includes(`const { data } = await erp.${method}('${template}'`), name);
    const create = (operation.parameters ?? []).some(
      (p: Json) => p.$ref === '#/components/parameters/IdempotencyKeyRequired',
    );
    t.is(/-H 'Idempotency-Key: [0-9a-f-]{36}'/.test(curl), create, `${name}: Idempotency-Key in curl only on a create`);
    // A JSON body as the spec's example; a file (a DMS XML file) as its bytes, the example's text.
    if (operation.requestBody?.content?.['application/json'])
      t.regex(curl, /-H 'Content-Type: application\/json' \\\n {2}--data '\{/, name);
    else if (operation.requestBody)
      t.regex(curl, /-H 'Content-Type: application\/xml' \\\n {2}--data-binary '<\?xml /, name);
  }
  // A create's sample sends the spec's own body example, byte for byte the same JSON in both samples.
  const create = operations.find((o) => o.name === 'POST /customers')!;
  const example = create.operation.requestBody.content['application/json'].examples.outlet.value;
  t.true(create.curl.includes(`--data '${JSON.stringify(example, null, 2)}'`));
  t.true(create.sdk.includes(`outletCode: '${example.outletCode}'`));
});

test("every SDK sample compiles against the SDK's types (one tsc run), and a wrong one does not", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'erp-sdk-samples-'));
  try {
    mkdirSync(join(dir, 'samples'));
    const files = operations.map((o, index) => {
      const file = `samples/${String(index).padStart(2, '0')}-${o.method}${o.template.replace(/[^A-Za-z0-9]+/g, '-')}.ts`;
      writeFileSync(join(dir, file), o.sdk + '\n');
      return file;
    });
    // The harness must be able to fail: the create sample with a channel the schema does not know.
    const create = operations.find((o) => o.name === 'POST /customers')!;
    t.true(create.sdk.includes(`channel: 'retail'`));
    writeFileSync(
      join(dir, 'samples', 'wrong.ts'),
      create.sdk.replace(`channel: 'retail'`, `channel: 'nightclub'`) + '\n',
    );
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'ESNext',
          moduleResolution: 'Bundler',
          lib: ['ES2022', 'DOM'],
          strict: true,
          noUncheckedIndexedAccess: true,
          noEmit: true,
          skipLibCheck: true,
          isolatedModules: true,
          // The samples import the package by its published name; here it is the SDK's source.
          paths: { '@distributor-erp/sdk': [join(root, 'client-sdk', 'src', 'index.ts')] },
          typeRoots: [join(root, 'node_modules', '@types')],
          types: ['node'],
        },
        include: ['samples/*.ts'],
      }),
    );
    const result = await run(
      process.execPath,
      [
        join(root, 'node_modules', 'typescript-native', 'bin', 'tsc'),
        '-p',
        join(dir, 'tsconfig.json'),
        '--pretty',
        'false',
      ],
      { cwd: dir },
    ).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
    );
    const errorLines = result.stdout.split('\n').filter((line) => /error TS\d+/.test(line));
    const failing = [...new Set(errorLines.map((line) => line.slice(0, line.indexOf('('))))];
    t.deepEqual(failing, ['samples/wrong.ts'], `only the wrong sample fails to compile:\n${result.stdout}`);
    t.regex(errorLines.join('\n'), /"nightclub"/);
    t.not(result.code, 0, 'tsc exits non-zero on the wrong sample');
    t.is(files.length, operations.length);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Runs a curl sample as written, with `$ERP_BASE_URL` and `$ERP_API_KEY` set, and returns its answer. */
async function runCurl(source: string, key: string): Promise<{ status: number; body: any; text: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'erp-curl-sample-'));
  try {
    const out = join(dir, 'body');
    // curl itself is wrapped so the sample's own text runs unchanged while the status and body are captured.
    const script = `curl() { command curl -o ${JSON.stringify(out)} -w '%{http_code}' "$@"; }\n${source}\n`;
    // --norc: bash reads /etc/bash.bashrc and ~/.bashrc when its stdin is a socket (it takes that for ssh), and
    // Node's stdio pipes are sockets: that was about 0.1 CPU-s a sample, 90 % of this file's children's CPU (issue
    // 35). A sample must not depend on the machine's shell start-up files either.
    const { stdout } = await run('bash', ['--norc', '-c', script], {
      env: { PATH: process.env.PATH, ERP_BASE_URL: `${api().baseUrl}${API_BASE_PATH}`, ERP_API_KEY: key },
    });
    const text = readFileSync(out, 'utf8');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: Number(stdout), body, text };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether an operation reads one record (by id, a DMS file by its batchId, or by code): on an organization without records, 404. */
function readsOneRecord(template: string): boolean {
  return /\/\{(id|batchId)\}$|\/by-code\//.test(template);
}

/**
 * Whether a list sample filters by the id of a record (`?locationId=loc_...`) on a list that refuses an id naming
 * no record of the organisation (404, like a read by id: a mistyped id is not an empty list). Those lists say so in
 * their description.
 */
function filtersByUnknownId(operation: Json, request: { query: [string, unknown][] }): boolean {
  return (
    /is 404 `not_found`/.test(String(operation.description)) &&
    request.query.some(([name, value]) => /Id$/.test(name) && /^[a-z]{3}_/.test(String(value)))
  );
}

/** Whether an operation reads a list or an object under one record (`/trips/{id}/locations`, `/trips/{id}/settlement`): 404 too without the record. */
function readsUnderRecord(template: string): boolean {
  return /\/\{(id|batchId)\}\/[a-z-]+$/.test(template);
}

/**
 * Whether an operation is read by a signed URL (a photo's): its sample's example signature is not one this
 * deployment made, so as written it is 403 invalid_signature, and a live one comes from the record that links it.
 */
function signedUrl(request: { query: [string, unknown][] }): boolean {
  return request.query.some(([parameter]) => parameter === 'signature');
}

/**
 * Two organizations, made once the service runs: one without records, one with a small sandbox distributor and a
 * collection carrying a dms code (a payment's code names a collection, not a receipt, decision 0030: the receipts
 * carry no code, so the read by code takes this collection's).
 */
let organizations:
  | Promise<{ empty: TestCaller; seeded: TestCaller; collection: { code: string; ids: string[] } }>
  | undefined;
function callers() {
  organizations ??= (async () => {
    const pool = api().pool;
    // Both with the delivery module, whose reads (trips) are otherwise 403 module_disabled.
    const empty = await createCaller(pool, { modules: ['delivery', 'field-sales'] });
    const seeded = await createCaller(pool, { modules: ['delivery', 'field-sales'] });
    const organization = actingOrganization(await getOrganization(kyselyOver(pool), seeded.organizationId));
    await inTransaction(kyselyOver(pool), (tx) =>
      writeDistributor(tx, operatorActor(organization, 'docs test'), sandboxDistributor(30)),
    );
    const code = 'PYDOCS000001';
    const collection = await inTransaction(kyselyOver(pool), async (tx) => {
      const customer = await tx
        .selectFrom('customers')
        .select('id')
        .where('organization_id', '=', seeded.organizationId)
        .orderBy('id')
        .limit(1)
        .executeTakeFirstOrThrow();
      const amount = { amount: '1000', currency: organization.baseCurrency };
      return recordPayment(tx, operatorActor(organization, 'docs test'), {
        customerId: customer.id,
        method: 'cash',
        amount,
        paymentDate: new Date().toISOString().slice(0, 10),
        unallocated: amount,
        externalCodes: { dms: code },
      });
    });
    // Each with a DMS connection, as the sandbox has one (an operator adds connections; the DMS reads need it).
    for (const caller of [empty, seeded])
      await inTransaction(kyselyOver(pool), (tx) =>
        addConnection(tx, caller.organizationId, 'canonical', { distributorCode: 'DIST001' }),
      );
    return { empty, seeded, collection: { code, ids: collection.ids } };
  })();
  return organizations;
}

test("every read's curl sample, run as written, answers 200, or 404 not_found for a record the organization does not have", async (t) => {
  t.true(reads.length >= 20);
  const { empty } = await callers();
  for (const { name, template, curl, operation, request } of reads) {
    const answer = await runCurl(curl, empty.secret);
    const expected = signedUrl(request)
      ? 403
      : readsOneRecord(template) || readsUnderRecord(template) || filtersByUnknownId(operation, request)
        ? 404
        : 200;
    t.is(answer.status, expected, `${name}: ${answer.text.slice(0, 300)}`);
    t.truthy(operation.responses[String(answer.status)], `${name}: ${answer.status} is documented`);
    if (expected === 403) t.is(answer.body?.code, 'invalid_signature', name);
    if (expected === 404) t.is(answer.body?.code, 'not_found', name);
    if (expected === 200 && operation.responses['200'].content['application/json'])
      t.not(answer.body, undefined, `${name}: JSON`);
    if (expected === 200 && request.query.some(([parameter]) => parameter === 'limit'))
      t.true(Array.isArray(answer.body?.data), `${name}: a page`);
  }
  const html = await runCurl(reads.find((o) => o.template === '/docs')!.curl, empty.secret);
  t.regex(html.text, /^<!doctype html>/);
});

test("every read's curl sample, with the example ids and codes of a live record in their place, answers 200 with that record", async (t) => {
  const { seeded, collection } = await callers();
  const firstOf = new Map<string, Json>();
  const liveRecord = async (list: string): Promise<Json> => {
    if (!firstOf.has(list)) {
      const answer = await runCurl(
        `curl -sS "$ERP_BASE_URL${list}?limit=1" -H "Authorization: Bearer $ERP_API_KEY"`,
        seeded.secret,
      );
      t.is(answer.status, 200, list);
      t.truthy(answer.body.data[0], `${list} has a record`);
      firstOf.set(list, answer.body.data[0]);
    }
    return firstOf.get(list)!;
  };
  // A DMS file's batch has no list to take a live one from (the sandbox sends no file): test/service/dms-files.test.ts reads one.
  const records = reads.filter(
    (o) =>
      (readsOneRecord(o.template) || readsUnderRecord(o.template)) &&
      !signedUrl(o.request) &&
      !o.template.includes('{batchId}'),
  );
  t.true(records.length >= 12);
  // A signed URL: the sample's own URL replaced by one the API links (a competitor observation's photoUrl).
  const signed = reads.filter((o) => signedUrl(o.request));
  t.deepEqual(
    signed.map((o) => o.name),
    ['GET /photos/{id}'],
  );
  for (const { name, curl } of signed) {
    const observations = await runCurl(
      `curl -sS "$ERP_BASE_URL/competitor-observations?limit=100" -H "Authorization: Bearer $ERP_API_KEY"`,
      seeded.secret,
    );
    const live = new URL((observations.body.data as Json[]).find((o) => o.photoUrl)!.photoUrl as string);
    const example = /"\$ERP_BASE_URL([^"]+)"/.exec(curl)![1]!;
    const answer = await runCurl(
      curl.replace(example, live.pathname.slice(API_BASE_PATH.length) + live.search),
      seeded.secret,
    );
    t.is(answer.status, 200, `${name}: ${answer.text.slice(0, 300)}`);
    t.true(answer.text.startsWith('\uFFFDPNG'), `${name}: a PNG`);
  }
  for (const { name, template, curl, request } of records) {
    if (template === '/payments/by-code/{system}/{code}') {
      t.is(request.path.system, 'dms', name);
      t.true(
        curl.includes(`/${encodeURIComponent(request.path.code!)}`),
        `${name}: the sample names ${request.path.code}`,
      );
      const answer = await runCurl(
        curl.replace(`/${encodeURIComponent(request.path.code!)}`, `/${encodeURIComponent(collection.code)}`),
        seeded.secret,
      );
      t.is(answer.status, 200, `${name}: ${answer.text.slice(0, 300)}`);
      t.deepEqual(
        answer.body.payments?.map((p: Json) => p.id),
        collection.ids,
        `${name}: the collection's receipts`,
      );
      continue;
    }
    const record = await liveRecord(`/${template.split('/')[1]}`);
    let source = curl;
    const replace = (example: string, live: string) => {
      t.true(source.includes(`/${encodeURIComponent(example)}`), `${name}: the sample names ${example}`);
      source = source.replace(`/${encodeURIComponent(example)}`, `/${encodeURIComponent(live)}`);
    };
    if (request.path.id) replace(request.path.id, record.id);
    if (request.path.code) {
      t.is(request.path.system, 'dms', name);
      replace(request.path.code, record.externalCodes.dms);
    }
    const answer = await runCurl(source, seeded.secret);
    t.is(answer.status, 200, `${name}: ${answer.text.slice(0, 300)}`);
    const page = request.query.some(([parameter]) => parameter === 'limit');
    if (readsUnderRecord(template) && page)
      t.true(
        Array.isArray(answer.body.data) && answer.body.data.length > 0,
        `${name}: a page of the record's own list`,
      );
    // One object of the record's own (a trip's settlement sheet) names the record.
    else if (readsUnderRecord(template))
      t.true(JSON.stringify(answer.body).includes(`"${record.id}"`), `${name}: the record's own`);
    else t.is(answer.body.id, record.id, name);
  }
});
