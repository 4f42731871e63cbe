// DMS XML files over HTTP, end to end: the upload (application/xml or one multipart file part), the batch registered
// before the answer, the worker parsing it as a stream into documents that take exactly the JSON push's path, the
// batch and its XML flag file read back, the same bytes not processed twice, and hostile files failing whole with
// the line and column and no document stored. The XML schemas are checked with xmllint (libxml2) when the machine
// has it (CI installs it; .ci/run).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { kyselyOver } from '../../server/platform/database/database.js';
import { inTransaction, type Db } from '../../server/platform/database/transaction.js';
import { addConnection } from '../../server/modules/dms/connections.js';
import { writeDmsFile } from '../../server/modules/dms/xml/write.js';
import { operatorActor } from '../../server/platform/access/actor.js';
import { actingOrganization, getOrganization } from '../../server/platform/access/organizations.js';
import { ALL_SCOPES, createCaller, type TestCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';
import { dmsSetUp, masterData, saleInvoice, stockDay } from '../support/dms.js';
import { eventually } from '../webhooks/receiver.js';
import { apiDocument } from '../../server/platform/spec.js';

const api = useSharedService(test);
const pool = () => api().pool;
const db = (): Db => kyselyOver(pool());
let keys = 0;

async function shop(): Promise<TestCaller> {
  const caller = await createCaller(pool(), { scopes: ALL_SCOPES, modules: ['delivery', 'field-sales'] });
  const organization = actingOrganization(await getOrganization(db(), caller.organizationId));
  await inTransaction(db(), async (tx) => {
    await dmsSetUp(tx, operatorActor(organization, 'test'));
    await addConnection(tx, caller.organizationId, 'canonical', { distributorCode: 'DIST001', synchronous: false });
  });
  return caller;
}

const send = (caller: TestCaller, body: string | Buffer, contentType = 'application/xml', key = `file-${keys++}`) =>
  api().request('POST', '/dms/canonical/files', {
    headers: { ...caller.auth, 'Idempotency-Key': key, 'Content-Type': contentType },
    body,
  });
const batchOf = (caller: TestCaller, batchId: string) =>
  api().request('GET', `/dms/canonical/files/${batchId}`, { headers: caller.auth });
const until = (caller: TestCaller, batchId: string, ready: (batch: any) => boolean, what: string) =>
  eventually(
    async () => {
      const batch = (await batchOf(caller, batchId)).body;
      return ready(batch) ? batch : null;
    },
    20_000,
    what,
  );
const storedDocuments = async (batchId: string) =>
  Number(
    (
      await db()
        .selectFrom('dms_documents')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('batch_id', '=', batchId)
        .executeTakeFirstOrThrow()
    ).n,
  );

/** Validates XML against one of the service's schemas with xmllint, when the machine has it; null when it has not. */
function xmllint(schema: string, xml: string): string | null {
  try {
    execFileSync('xmllint', ['--version'], { stdio: 'ignore' });
  } catch {
    return null;
  }
  const dir = mkdtempSync(join(tmpdir(), 'xsd-'));
  try {
    writeFileSync(join(dir, 's.xsd'), schema);
    writeFileSync(join(dir, 'f.xml'), xml);
    try {
      execFileSync('xmllint', ['--noout', '--schema', join(dir, 's.xsd'), join(dir, 'f.xml')], { stdio: 'pipe' });
      return 'valid';
    } catch (error) {
      return String((error as { stderr?: Buffer }).stderr ?? error);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("a file is registered before the answer (202), parsed by the worker into documents that post as a JSON push's do, and its flag file lists every document in order; the same bytes again answer the same batch and create nothing", async (t) => {
  const caller = await shop();
  const documents = [
    masterData.soda,
    masterData.prices,
    masterData.salesman(),
    masterData.customer('UG0000001'),
    ...stockDay(5),
    saleInvoice('CSR01000001', 'UG0000001', 2),
    {
      ...saleInvoice('CSR01000002', 'UG0000001', 1),
      body: {
        ...saleInvoice('CSR01000002', 'UG0000001', 1).body,
        lines: [{ productCode: '100201', unit: 'crate', quantity: 1, unitPrice: '24000' }],
      },
    },
  ];
  const xml = writeDmsFile(documents);
  const res = await send(caller, xml);
  t.is(res.status, 202, res.text);
  t.like(res.body, {
    status: 'received',
    documents: 0,
    bytes: Buffer.byteLength(xml),
    parsedAt: null,
    error: null,
    fileName: null,
  });
  t.regex(res.body.sha256, /^[0-9a-f]{64}$/);

  const done = await until(
    caller,
    res.body.batchId,
    (b) => b.status === 'parsed' && b.counts.received === 0,
    'the file parsed and its documents final',
  );
  t.is(done.documents, documents.length);
  t.deepEqual(done.counts, { received: 0, posted: documents.length - 1, rejected: 1, superseded: 0 });

  const flagFile = await api().request('GET', `/dms/canonical/files/${res.body.batchId}/flags`, {
    headers: caller.auth,
  });
  t.is(flagFile.status, 200);
  t.regex(flagFile.headers.get('content-type') ?? '', /^application\/xml/);
  const numbers = [...flagFile.text.matchAll(/documentNumber="([^"]+)" state="(\w+)"/g)].map((m) => `${m[1]} ${m[2]}`);
  t.deepEqual(
    numbers,
    documents.map((d, i) => `${d.documentNumber} ${i === documents.length - 1 ? 'rejected' : 'posted'}`),
  );
  t.regex(
    flagFile.text,
    /reasonCode="R09" reasonText="[^"]*\/body\/lines\/0\/unit[^"]*"/,
    'a document that does not match its schema is R09 naming the field, as in JSON',
  );
  const schema = await api().request('GET', '/xml-schemas/dms-flags.xsd');
  const lint = xmllint(schema.text, flagFile.text);
  if (lint !== null) t.is(lint, 'valid');

  // The flag file is an action towards the DMS: pending while a flag may still change, written once all are final.
  const written = await eventually(
    async () =>
      (await db()
        .selectFrom('dms_actions')
        .select(['id', 'status', 'detail'])
        .where('organization_id', '=', caller.organizationId)
        .where('kind', '=', 'flag_file')
        .where('subject_id', '=', res.body.batchId)
        .where('status', '=', 'written')
        .executeTakeFirst()) ?? null,
    20_000,
    'the flag file written',
  );
  t.regex(written.detail!, new RegExp(`Every one of the ${documents.length} flags is final`));
  t.true(
    (
      await db()
        .selectFrom('events')
        .select('id')
        .where('organization_id', '=', caller.organizationId)
        .where('type', '=', 'dms.action.status_changed')
        .where('record_id', '=', written.id)
        .execute()
    ).length >= 1,
  );

  const again = await send(caller, xml);
  t.is(again.status, 200);
  t.is(again.body.batchId, res.body.batchId);
  t.is(await storedDocuments(res.body.batchId), documents.length);
  t.is(
    Number(
      (
        await db()
          .selectFrom('dms_batches')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('organization_id', '=', caller.organizationId)
          .executeTakeFirstOrThrow()
      ).n,
    ),
    1,
  );
});

test('a file as the one file part of multipart/form-data keeps its name; a multipart body with two files or none is 400 naming /file', async (t) => {
  const caller = await shop();
  const xml = writeDmsFile([masterData.customer('UG0000009')]);
  const boundary = 'b0undary';
  const part = (name: string, file: string) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${file}"\r\nContent-Type: application/xml\r\n\r\n${xml}\r\n`;
  const one = await send(
    caller,
    `${part('file', 'DIST001-20261125.xml')}--${boundary}--\r\n`,
    `multipart/form-data; boundary=${boundary}`,
  );
  t.is(one.status, 202, one.text);
  t.is(one.body.fileName, 'DIST001-20261125.xml');
  const two = await send(
    caller,
    `${part('a', 'a.xml')}${part('b', 'b.xml')}--${boundary}--\r\n`,
    `multipart/form-data; boundary=${boundary}`,
  );
  t.is(two.status, 400);
  t.is(two.body.errors[0].field, '/file');
  const none = await send(
    caller,
    `--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\nhello\r\n--${boundary}--\r\n`,
    `multipart/form-data; boundary=${boundary}`,
  );
  t.is(none.status, 400);
});

test('hostile files fail whole with what and where (line and column), and no document of them is stored: billion laughs, an external entity, 10 000-deep nesting, bytes that are not UTF-8, a truncated file', async (t) => {
  const caller = await shop();
  const root = (inner: string) =>
    `<?xml version="1.0"?>\n<dmsFile xmlns="urn:distributor-erp:dms:1">${inner}</dmsFile>`;
  const laughs = `<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">${Array.from({ length: 7 }, (_, i) => `<!ENTITY lol${i + 3} "${`&lol${i + 2};`.repeat(10)}">`).join('')}]>\n<dmsFile xmlns="urn:distributor-erp:dms:1"><customer><documentNumber>&lol9;</documentNumber></customer></dmsFile>`;
  const external = `<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n<dmsFile xmlns="urn:distributor-erp:dms:1"><customer><documentNumber>&xxe;</documentNumber></customer></dmsFile>`;
  const deep = root(`${'<a>'.repeat(10_000)}${'</a>'.repeat(10_000)}`);
  const notUtf8 = Buffer.concat([
    Buffer.from(root('<customer><documentNumber>UG')),
    Buffer.from([0xc3, 0x28]),
    Buffer.from('</documentNumber></customer>'),
  ]);
  const truncated = writeDmsFile([masterData.customer('UG0000001'), masterData.customer('UG0000002')]).slice(0, 300);
  const cases: [string, string | Buffer, RegExp][] = [
    ['billion laughs', laughs, /DOCTYPE \(DTD\) is not accepted/],
    ['an external entity', external, /DOCTYPE \(DTD\) is not accepted/],
    ['10 000-deep nesting', deep, /nest more than 32 deep/],
    ['not UTF-8', notUtf8, /not UTF-8: the byte at offset \d+/],
    ['truncated', truncated, /./],
  ];
  for (const [what, body, message] of cases) {
    const res = await send(caller, body);
    t.is(res.status, 202, `${what}: ${res.text}`);
    const failed = await until(caller, res.body.batchId, (b) => b.status !== 'received', `${what} parsed`);
    t.is(failed.status, 'failed', what);
    t.regex(failed.error.message, message, what);
    t.true(failed.error.line >= 1 && failed.error.column >= 1, `${what}: ${JSON.stringify(failed.error)}`);
    t.is(await storedDocuments(res.body.batchId), 0, `${what}: nothing stored`);
  }
});

test('a body over 5 MB is 413 and registers nothing; another media type is 415; an empty file is 400 naming /file; the file operations need their scopes', async (t) => {
  const caller = await shop();
  const big = Buffer.alloc(5 * 1024 * 1024 + 1, 0x20);
  const tooBig = await send(caller, big);
  t.is(tooBig.status, 413);
  t.is(tooBig.body.code, 'payload_too_large');
  t.is((await send(caller, 'hello', 'text/plain')).status, 415);
  const json = await send(caller, JSON.stringify(masterData.soda), 'application/json');
  t.is(json.status, 415);
  t.is(json.body.code, 'unsupported_media_type');
  const empty = await send(caller, '');
  t.is(empty.status, 400);
  t.is(empty.body.errors[0].field, '/file');
  t.is(
    Number(
      (
        await db()
          .selectFrom('dms_batches')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('organization_id', '=', caller.organizationId)
          .executeTakeFirstOrThrow()
      ).n,
    ),
    0,
  );

  const reader = await createCaller(pool(), { scopes: ['dms:flags:read'], organizationId: caller.organizationId });
  const refused = await send(reader, writeDmsFile([masterData.soda]));
  t.is(refused.status, 403);
  t.is((await batchOf(reader, 'dmf_01JD4R7Q8S6T9V3X5Z7B9D1F3B')).status, 404);
});

test("the XML schemas are served without a key, and every kind's example document, written as XML, is valid against the file's schema", async (t) => {
  const res = await api().request('GET', '/xml-schemas/dms-file.xsd');
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^application\/xml/);
  t.is((await api().request('GET', '/xml-schemas/other.xsd')).status, 400);
  const examples = (apiDocument as any).paths['/dms/{system}/documents'].post.requestBody.content['application/json']
    .examples as Record<string, { value: any; 'x-expected-flags'?: unknown }>;
  // The examples of malformed documents (rejected on arrival, declaring their flags) are not the canonical format.
  const documents = Object.values(examples)
    .filter((example) => !example['x-expected-flags'])
    .flatMap(({ value }) => (Array.isArray(value.documents) ? value.documents : [value]));
  t.true(documents.length >= 19);
  const lint = xmllint(res.text, writeDmsFile(documents.filter((d: any) => d.documentType !== 'some_future_type')));
  if (lint === null) t.log('xmllint is not installed here: the schema was not checked against the examples');
  else t.is(lint, 'valid');
  const sample = (apiDocument as any).paths['/dms/{system}/files'].post.requestBody.content['application/xml'].examples
    .one_invoice.value as string;
  const sampleLint = xmllint(res.text, sample);
  if (sampleLint !== null) t.is(sampleLint, 'valid');
});
