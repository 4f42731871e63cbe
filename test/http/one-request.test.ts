// One request must never stop or stall the service (issue 34): a truncated multipart upload is a 400, not the end of
// the process; a request without a valid key is answered 401 before its body is read (a JSON body, an upload of any
// media type); an upload that stops arriving is cut after REQUEST_TIMEOUT_MS; a body of thousands of unknown fields
// gets a capped errors[] at once; the DMS push and upload require their Idempotency-Key and refuse undeclared query
// parameters like every other operation. After each, the service still answers.
import { connect, type Socket } from 'node:net';
import test from 'ava';
import { kyselyOver } from '../../server/platform/database/database.js';
import { inTransaction } from '../../server/platform/database/transaction.js';
import { addConnection } from '../../server/modules/dms/connections.js';
import { MAX_FIELD_ERRORS } from '../../server/platform/http/error-handler.js';
import { JSON_MAX_OBJECT_MEMBERS } from '../../server/platform/http/json-body.js';
import { createCaller, type TestCaller } from '../support/callers.js';
import { useTestService } from '../support/service.js';

// Short enough for the stalled upload to be cut within the test, long enough for a busy machine to take in a large body.
const REQUEST_TIMEOUT_MS = 6_000;
const api = useTestService(test, 'one_request', {
  env: { REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) },
  scheduledJobs: false,
});
const pool = () => api().service.database.pool;
let keys = 0;

async function dmsCaller(): Promise<TestCaller> {
  const caller = await createCaller(pool());
  await inTransaction(kyselyOver(pool()), (tx) =>
    addConnection(tx, caller.organizationId, 'canonical', { distributorCode: 'DIST001', synchronous: false }),
  );
  return caller;
}

interface RawAnswer {
  status: number;
  head: string;
  body: string;
  closed: boolean;
}

/**
 * Sends raw bytes on a socket of its own and reads what comes back until the server closes or `waitMs` passes. With
 * `keepOpen`, the client never ends its side: an upload that stopped arriving.
 */
function raw(bytes: string | Buffer, waitMs = 5_000): Promise<RawAnswer> {
  const url = new URL(api().baseUrl);
  return new Promise((resolve) => {
    const socket: Socket = connect(Number(url.port), url.hostname);
    let received = '';
    let closed = false;
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      const [head = '', body = ''] = received.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body, closed });
    };
    const timer = setTimeout(finish, waitMs);
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      closed = true;
      finish();
    });
    socket.write(bytes);
  });
}

const health = async () => (await fetch(`${api().baseUrl}/api/v1/health`)).status;

const truncatedMultipart = (headers: string) => {
  const body = '--B\r\nContent-Disposition: form-data; name="file"; filename="a.xml"\r\n\r\n<dmsFile/>';
  return `POST /api/v1/dms/canonical/files HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\n${headers}Content-Length: ${body.length}\r\n\r\n${body}`;
};

test('a truncated multipart upload without a key is 401, and the process lives on', async (t) => {
  const answer = await raw(truncatedMultipart(''));
  t.is(answer.status, 401);
  t.is(await health(), 200);
});

test('a truncated multipart upload with a key is 400 naming /file, and the process lives on', async (t) => {
  const caller = await dmsCaller();
  const answer = await raw(
    truncatedMultipart(`Authorization: ${caller.auth.Authorization}\r\nIdempotency-Key: cut-${keys++}\r\n`),
  );
  t.is(answer.status, 400);
  t.like(JSON.parse(answer.body), { code: 'invalid_field', errors: [{ field: '/file' }] });
  t.is(await health(), 200);
});

test('without a valid key, a JSON body is not read: 401 before 400, and the connection closes instead of draining it', async (t) => {
  // Headers announce a megabyte; only a few bytes follow. Were the body read, the answer would wait for the rest.
  const answer = await raw(
    'POST /api/v1/customers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"outletCode":',
    5_500,
  );
  t.is(answer.status, 401);
  t.regex(answer.head, /\r\nconnection: close/i);
  t.true(answer.closed);
});

test('without a key, an upload of any media type is 401, not 415 or 413', async (t) => {
  for (const type of ['text/plain', 'application/xml', 'multipart/form-data; boundary=B']) {
    const answer = await raw(
      `POST /api/v1/dms/canonical/files HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: 6000000\r\n\r\n<a>`,
      5_500,
    );
    t.is(answer.status, 401, type);
  }
});

test('an upload that stops arriving is cut after REQUEST_TIMEOUT_MS, and the service keeps answering', async (t) => {
  const caller = await dmsCaller();
  const started = Date.now();
  const answer = await raw(
    `POST /api/v1/dms/canonical/files HTTP/1.1\r\nHost: x\r\nAuthorization: ${caller.auth.Authorization}\r\nIdempotency-Key: stall-${keys++}\r\nContent-Type: application/xml\r\nContent-Length: 100000\r\n\r\n<dmsFile>`,
    30_000,
  );
  t.true(answer.closed, 'the server closed the connection');
  t.is(answer.status, 408);
  // Cut at the timeout (checked each second), far sooner than Node's default 300 s.
  t.true(Date.now() - started < REQUEST_TIMEOUT_MS + 10_000, `cut after ${Date.now() - started} ms`);
  t.is(await health(), 200);
});

test(`a body of 990 unknown fields is 400 with errors[] capped at ${MAX_FIELD_ERRORS} and the total in the detail`, async (t) => {
  const caller = await createCaller(pool());
  const body: Record<string, unknown> = { outletCode: 'UG7000001', name: 'Shop', channel: 'retail' };
  for (let i = 0; i < 990; i += 1) body[`field${i}`] = 1;
  const res = await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': `many-${keys++}` },
    json: body,
  });
  t.is(res.status, 400);
  t.is(res.body.code, 'unknown_field');
  t.is(res.body.errors.length, MAX_FIELD_ERRORS);
  t.regex(res.body.detail, /990 problems in all; errors\[\] lists the first 50\./);
  t.true(res.text.length < 20_000, `${res.text.length} bytes`);
});

test(`an object of more than ${JSON_MAX_OBJECT_MEMBERS} members (45,000 unknown fields) is 400 invalid_json before validation, and writes nothing`, async (t) => {
  const caller = await createCaller(pool());
  const body: Record<string, unknown> = { outletCode: 'UG7000002', name: 'Shop', channel: 'retail' };
  for (let i = 0; i < 45_000; i += 1) body[`field${i}`] = 1;
  const res = await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': `wide-${keys++}` },
    json: body,
  });
  t.is(res.status, 400);
  t.is(res.body.code, 'invalid_json');
  t.regex(res.body.detail, /has 45003 members; no operation accepts an object of more than 1000/);
  const list = await api().request('GET', '/customers?limit=1', { headers: caller.auth });
  t.deepEqual(list.body.data, []);
});

test('the DMS push and upload require an Idempotency-Key, like every create', async (t) => {
  const caller = await dmsCaller();
  const push = await api().request('POST', '/dms/canonical/documents', {
    headers: caller.auth,
    json: { documents: [] },
  });
  t.is(push.status, 400);
  t.like(push.body, {
    code: 'idempotency_key_required',
    errors: [{ field: '/header/Idempotency-Key', code: 'idempotency_key_required' }],
  });
  const upload = await api().request('POST', '/dms/canonical/files', {
    headers: { ...caller.auth, 'Content-Type': 'application/xml' },
    body: '<dmsFile/>',
  });
  t.is(upload.status, 400);
  t.is(upload.body.code, 'idempotency_key_required');
  const tooLong = await api().request('POST', '/dms/canonical/documents', {
    headers: { ...caller.auth, 'Idempotency-Key': 'k'.repeat(256) },
    json: { documents: [] },
  });
  t.like(tooLong.body, { code: 'invalid_field', errors: [{ field: '/header/Idempotency-Key' }] });
});

test('an undeclared query parameter on the DMS push and upload is 400 unknown_field', async (t) => {
  const caller = await dmsCaller();
  const push = await api().request('POST', '/dms/canonical/documents?dryRun=true', {
    headers: { ...caller.auth, 'Idempotency-Key': `q-${keys++}` },
    json: { documents: [] },
  });
  t.is(push.status, 400);
  t.like(push.body, { code: 'unknown_field', errors: [{ field: '/query/dryRun', code: 'unknown_field' }] });
  const upload = await api().request('POST', '/dms/canonical/files?x=1', {
    headers: { ...caller.auth, 'Idempotency-Key': `q-${keys++}`, 'Content-Type': 'application/xml' },
    body: '<dmsFile/>',
  });
  t.like(upload.body, { code: 'unknown_field', errors: [{ field: '/query/x' }] });
});
