// Idempotent writes on POST /customers (key required) and PATCH /customers/{id} (key optional): replay, reuse,
// concurrency, retention, and the two failures a retry must survive (a crash before commit, a lost response).
import test, { type ExecutionContext } from 'ava';
import { TEST_SECRETS } from '../support/secrets.js';
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import pg from 'pg';
import { apiContract } from '../support/api-contract.js';
import { purgeExpiredIdempotencyKeys } from '../../server/platform/http/idempotency.js';
import { API_BASE_PATH } from '../../server/platform/spec.js';
import { createCaller, type TestCaller } from '../support/callers.js';
import { useTestService, type ApiResponse } from '../support/service.js';
import { kyselyOver } from '../../server/platform/database/database.js';

const api = useTestService(test, 'idempotency');
const contract = apiContract;
const pool = () => api().service.database.pool;

let outlet = 0;
/** A valid create body with an outlet code no other test of this file uses. */
const customerBody = () => ({
  outletCode: `UG${String(1_000_000 + ++outlet).padStart(7, '0')}`,
  name: 'Mama Grace Shop',
  channel: 'retail',
});

function create(caller: TestCaller, key: string | undefined, body: unknown) {
  const headers: Record<string, string> = { ...caller.auth };
  if (key !== undefined) headers['Idempotency-Key'] = key;
  return api().request('POST', '/customers', { headers, json: body });
}

async function customerCount(organizationId: string): Promise<number> {
  const { rows } = await pool().query<{ n: number }>(
    'SELECT count(*)::int AS n FROM customers WHERE organization_id = $1',
    [organizationId],
  );
  return rows[0]!.n;
}

async function customerIds(organizationId: string): Promise<string[]> {
  const { rows } = await pool().query<{ id: string }>(
    'SELECT id FROM customers WHERE organization_id = $1 ORDER BY id',
    [organizationId],
  );
  return rows.map((row) => row.id);
}

async function eventCount(organizationId: string, type: string): Promise<number> {
  const { rows } = await pool().query<{ n: number }>(
    'SELECT count(*)::int AS n FROM events WHERE organization_id = $1 AND type = $2',
    [organizationId, type],
  );
  return rows[0]!.n;
}

const fieldsOf = (body: { errors?: { field: string }[] }) => (body.errors ?? []).map((e) => e.field);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends one request to a service at `baseUrl` and checks the answer against the contract, like api().request. */
async function requestAt(
  baseUrl: string,
  method: string,
  path: string,
  init: { headers?: Record<string, string>; json?: unknown } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(baseUrl + API_BASE_PATH + path, {
    method,
    headers,
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
  const text = await response.text();
  const violations = contract.check({
    method,
    path: path.split('?')[0]!,
    status: response.status,
    headers: response.headers,
    bodyText: text,
  });
  if (violations.length > 0)
    throw new Error(`Contract violation:\n  ${violations.join('\n  ')}\nBody: ${text.slice(0, 2000)}`);
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

/**
 * Holds the events table locked, sends a create to `baseUrl`, and once the create waits on the lock to insert its
 * event (its customer row already inserted) ends that backend with `kill`; then releases the lock. Answers the
 * response to the create.
 */
async function createInterruptedAtItsEvent(
  t: ExecutionContext,
  baseUrl: string,
  caller: TestCaller,
  key: string,
  body: unknown,
  kill: 'pg_terminate_backend' | 'pg_cancel_backend',
): Promise<ApiResponse> {
  const locker = new pg.Client({ connectionString: api().database.url });
  await locker.connect();
  let pending: Promise<ApiResponse> | undefined;
  try {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');
    const lockerPid = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    pending = requestAt(baseUrl, 'POST', '/customers', {
      headers: { ...caller.auth, 'Idempotency-Key': key },
      json: body,
    });
    pending.catch(() => {}); // awaited below; only keeps an early failure from being unhandled meanwhile

    // Looked up through the pool: inside the locker's transaction pg_stat_activity would keep its first snapshot.
    let pid: number | undefined;
    for (let attempt = 0; attempt < 400 && pid === undefined; attempt++) {
      const { rows } = await pool().query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity
          WHERE datname = current_database() AND pid NOT IN (pg_backend_pid(), $1) AND wait_event_type = 'Lock' AND query ~* 'insert into "?events"?'`,
        [lockerPid],
      );
      pid = rows[0]?.pid;
      if (pid === undefined) await sleep(25);
    }
    if (pid === undefined) throw new Error('the create never waited on inserting its event');
    const { rows: locks } = await pool().query<{ relation: string }>(
      "SELECT relation::regclass::text AS relation FROM pg_locks WHERE pid = $1 AND locktype = 'relation' AND mode = 'RowExclusiveLock' AND granted",
      [pid],
    );
    t.true(
      locks.some((lock) => lock.relation === 'customers'),
      'the customer row was inserted before the event',
    );
    const { rows: killed } = await pool().query<{ ok: boolean }>(`SELECT ${kill}($1) AS ok`, [pid]);
    t.true(killed[0]!.ok);
    return await pending;
  } finally {
    await locker.query('ROLLBACK').catch(() => {});
    await locker.end();
    await pending?.catch(() => {});
  }
}

// Serial tests run before the concurrent ones, so their table lock never holds up another test.
test.serial(
  'a failure inside the transaction after the customer insert (statement cancelled) is 500 server_error, commits nothing, and a retry with the same key runs again',
  async (t) => {
    const caller = await createCaller(pool());
    const body = customerBody();
    const failed = await createInterruptedAtItsEvent(
      t,
      api().baseUrl,
      caller,
      'cancelled-1',
      body,
      'pg_cancel_backend',
    );
    t.is(failed.status, 500);
    t.is(failed.body.code, 'server_error');
    t.is(await customerCount(caller.organizationId), 0, 'the customer insert was rolled back');
    t.is(
      (await pool().query('SELECT 1 FROM idempotency_keys WHERE api_key_id = $1', [caller.keyId])).rowCount,
      0,
      'no result was stored',
    );

    const retry = await create(caller, 'cancelled-1', body);
    t.is(retry.status, 201);
    t.is(retry.headers.get('idempotent-replayed'), null, 'the retry ran, it was not replayed');
    t.deepEqual(await customerIds(caller.organizationId), [retry.body.id]);
    t.is(await eventCount(caller.organizationId, 'customer.created'), 1);
  },
);

// Known server bug (see the report): a pooled pg client whose backend dies while it is checked out emits 'error'
// with no listener, and the uncaught exception ends the whole process. Run in a child process so that the crash
// does not take this test file down with it.
test.serial(
  'a crash inside the transaction (backend terminated) is 500 server_error, the process lives on, and a retry with the same key creates one customer',
  async (t) => {
    const caller = await createCaller(pool());
    const body = customerBody();
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', '--role', 'api'], {
      env: {
        ...process.env,
        ...TEST_SECRETS,
        DATABASE_URL: api().database.url,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        SANDBOX_BOOTSTRAP: 'false',
        SHUTDOWN_TIMEOUT_MS: '2000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let exited: number | null | undefined;
    const exit = new Promise<void>((resolve) =>
      child.once('exit', (code) => {
        exited = code;
        resolve();
      }),
    );
    try {
      const baseUrl = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the child service did not start:\n${output}`)), 30_000);
        const onData = (chunk: Buffer) => {
          output += chunk.toString();
          const match = /API listening on (http:\/\/\S+)\/api\/v1/.exec(output);
          if (match) {
            clearTimeout(timer);
            resolve(match[1]!);
          }
        };
        child.stdout.on('data', onData);
        child.stderr.on('data', onData);
        void exit.then(() => {
          clearTimeout(timer);
          reject(new Error(`the child service exited (${exited}):\n${output}`));
        });
      });

      const crashed = await createInterruptedAtItsEvent(
        t,
        baseUrl,
        caller,
        'crash-1',
        body,
        'pg_terminate_backend',
      ).catch(async (error: Error) => {
        await Promise.race([exit, sleep(2_000)]);
        throw new Error(
          `the create got no answer (${error.message}); the service process ${exited === undefined ? 'is running' : `exited with ${exited}`}:\n${output}`,
        );
      });
      t.is(crashed.status, 500);
      t.is(crashed.body.code, 'server_error');
      t.is(await customerCount(caller.organizationId), 0, 'the customer insert was rolled back with the crash');
      t.is(
        (await pool().query('SELECT 1 FROM idempotency_keys WHERE api_key_id = $1', [caller.keyId])).rowCount,
        0,
        'no result was stored',
      );

      await sleep(200);
      t.is(exited, undefined, `the service process is still running:\n${output}`);
      const retry = await requestAt(baseUrl, 'POST', '/customers', {
        headers: { ...caller.auth, 'Idempotency-Key': 'crash-1' },
        json: body,
      });
      t.is(retry.status, 201);
      t.is(retry.headers.get('idempotent-replayed'), null, 'the retry ran, it was not replayed');
      t.deepEqual(await customerIds(caller.organizationId), [retry.body.id]);
      t.is(await eventCount(caller.organizationId, 'customer.created'), 1);
    } finally {
      if (exited === undefined) {
        child.kill('SIGTERM');
        await Promise.race([exit, sleep(5_000)]);
        if (exited === undefined) child.kill('SIGKILL');
      }
    }
  },
);

test('a create without Idempotency-Key is 400 idempotency_key_required naming /header/Idempotency-Key and creates nothing', async (t) => {
  const caller = await createCaller(pool());
  const res = await create(caller, undefined, customerBody());
  t.is(res.status, 400);
  t.is(res.body.code, 'idempotency_key_required');
  t.deepEqual(fieldsOf(res.body), ['/header/Idempotency-Key']);
  t.is(res.body.errors[0].code, 'idempotency_key_required');
  t.is(await customerCount(caller.organizationId), 0);
  t.is(await eventCount(caller.organizationId, 'customer.created'), 0);
});

test('an Idempotency-Key of 256 characters is 400 invalid_field; one of 255 characters is accepted', async (t) => {
  const caller = await createCaller(pool());
  const tooLong = await create(caller, 'k'.repeat(256), customerBody());
  t.is(tooLong.status, 400);
  t.is(tooLong.body.code, 'invalid_field');
  t.deepEqual(fieldsOf(tooLong.body), ['/header/Idempotency-Key']);
  t.is(await customerCount(caller.organizationId), 0);

  const longest = 'k'.repeat(255);
  const accepted = await create(caller, longest, customerBody());
  t.is(accepted.status, 201);
  t.deepEqual(await customerIds(caller.organizationId), [accepted.body.id]);
  const { rows } = await pool().query<{ key: string }>('SELECT key FROM idempotency_keys WHERE api_key_id = $1', [
    caller.keyId,
  ]);
  t.deepEqual(
    rows.map((row) => row.key),
    [longest],
  );
});

test('the same key and body replays the first response byte for byte with Idempotent-Replayed: true, and there is one customer', async (t) => {
  const caller = await createCaller(pool());
  const body = customerBody();
  const first = await create(caller, 'replay-1', body);
  t.is(first.status, 201);
  t.is(first.headers.get('idempotent-replayed'), null);

  await sleep(5); // a re-run would show a later createdAt
  const second = await create(caller, 'replay-1', body);
  t.is(second.status, 201);
  t.is(second.headers.get('idempotent-replayed'), 'true');
  t.is(second.text, first.text);
  t.regex(second.headers.get('content-type') ?? '', /^application\/json/);
  t.not(second.headers.get('x-request-id'), first.headers.get('x-request-id'), 'the replay is a new request');

  t.deepEqual(await customerIds(caller.organizationId), [first.body.id]);
  t.is(await eventCount(caller.organizationId, 'customer.created'), 1);
});

test('the same body with its keys in another order replays (bodies are compared as canonical JSON)', async (t) => {
  const caller = await createCaller(pool());
  const body = { ...customerBody(), region: 'Central', paymentTermsDays: 14 };
  const first = await create(caller, 'canonical-1', body);
  t.is(first.status, 201);

  const reordered = {
    paymentTermsDays: 14,
    channel: body.channel,
    region: 'Central',
    name: body.name,
    outletCode: body.outletCode,
  };
  t.not(JSON.stringify(reordered), JSON.stringify(body));
  const second = await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': 'canonical-1', 'content-type': 'application/json' },
    body: JSON.stringify(reordered, null, 2),
  });
  t.is(second.status, 201);
  t.is(second.headers.get('idempotent-replayed'), 'true');
  t.is(second.text, first.text);
  t.is(await customerCount(caller.organizationId), 1);
});

test('the same key with another body, or on another path and method, is 422 idempotency_key_reused and changes nothing', async (t) => {
  const caller = await createCaller(pool());
  const first = await create(caller, 'reused-1', customerBody());
  t.is(first.status, 201);

  const otherBody = await create(caller, 'reused-1', customerBody());
  t.is(otherBody.status, 422);
  t.is(otherBody.body.code, 'idempotency_key_reused');
  t.is(otherBody.headers.get('idempotent-replayed'), null);
  t.deepEqual(await customerIds(caller.organizationId), [first.body.id]);

  const patch = await api().request('PATCH', `/customers/${first.body.id}`, {
    headers: { ...caller.auth, 'Idempotency-Key': 'reused-1' },
    json: { name: 'Renamed Shop' },
  });
  t.is(patch.status, 422);
  t.is(patch.body.code, 'idempotency_key_reused');
  t.regex(patch.body.detail, /POST \/api\/v1\/customers/);
  const { rows } = await pool().query<{ name: string }>(
    'SELECT name FROM customers WHERE organization_id = $1 AND id = $2',
    [caller.organizationId, first.body.id],
  );
  t.is(rows[0]!.name, 'Mama Grace Shop', 'the PATCH did not run');
  t.is(await eventCount(caller.organizationId, 'customer.updated'), 0);
  t.is(await eventCount(caller.organizationId, 'customer.created'), 1);
});

test('PATCH with an Idempotency-Key replays its first response and applies the change once', async (t) => {
  const caller = await createCaller(pool());
  const created = await create(caller, 'patch-create', customerBody());
  const patch = () =>
    api().request('PATCH', `/customers/${created.body.id}`, {
      headers: { ...caller.auth, 'Idempotency-Key': 'patch-1' },
      json: { status: 'blocked' },
    });
  const first = await patch();
  t.is(first.status, 200);
  t.is(first.body.status, 'blocked');
  const second = await patch();
  t.is(second.status, 200);
  t.is(second.headers.get('idempotent-replayed'), 'true');
  t.is(second.text, first.text);
  t.is(await eventCount(caller.organizationId, 'customer.updated'), 1);
});

test('Idempotency-Keys are kept per API key: the same key under another API key runs the request again', async (t) => {
  const first = await createCaller(pool());
  const sameOrganization = await createCaller(pool(), { organizationId: first.organizationId });
  const otherOrganization = await createCaller(pool());
  const body = customerBody();

  const original = await create(first, 'shared-key', body);
  t.is(original.status, 201);

  // Another key of the same organisation: another body would be 422 if the key were shared, and the same body
  // would be a replay; it runs (and a new outlet code makes a second customer).
  const secondBody = customerBody();
  const sameOrg = await create(sameOrganization, 'shared-key', secondBody);
  t.is(sameOrg.status, 201);
  t.is(sameOrg.headers.get('idempotent-replayed'), null);
  t.is(sameOrg.body.outletCode, secondBody.outletCode);
  t.deepEqual(await customerIds(first.organizationId), [original.body.id, sameOrg.body.id].sort());

  // A key of another organisation with the very same key and body: runs, and makes that organisation's customer.
  const otherOrg = await create(otherOrganization, 'shared-key', body);
  t.is(otherOrg.status, 201);
  t.is(otherOrg.headers.get('idempotent-replayed'), null);
  t.not(otherOrg.body.id, original.body.id);
  t.deepEqual(await customerIds(otherOrganization.organizationId), [otherOrg.body.id]);
  t.is(await customerCount(first.organizationId), 2);
});

test('50 concurrent creates with one key and body make exactly one customer; each answer is 201 or 409 idempotency_in_progress with Retry-After: 1', async (t) => {
  const caller = await createCaller(pool(), { rateLimits: { write: { perMinute: 6_000, burst: 500 } } });
  const body = customerBody();
  const answers = await Promise.all(Array.from({ length: 50 }, () => create(caller, 'concurrent-1', body)));

  const originals = answers.filter((res) => res.status === 201 && res.headers.get('idempotent-replayed') === null);
  const replays = answers.filter((res) => res.status === 201 && res.headers.get('idempotent-replayed') === 'true');
  const inProgress = answers.filter((res) => res.status === 409);
  t.is(originals.length, 1, 'one request ran');
  t.is(
    originals.length + replays.length + inProgress.length,
    50,
    `statuses: ${answers.map((res) => res.status).join(',')}`,
  );
  for (const replay of replays) t.is(replay.text, originals[0]!.text);
  for (const busy of inProgress) {
    t.is(busy.body.code, 'idempotency_in_progress');
    t.is(busy.headers.get('retry-after'), '1');
  }
  t.deepEqual(await customerIds(caller.organizationId), [originals[0]!.body.id]);
  t.is(await eventCount(caller.organizationId, 'customer.created'), 1);

  // Once the first request is done, the same key replays.
  const after = await create(caller, 'concurrent-1', body);
  t.is(after.status, 201);
  t.is(after.headers.get('idempotent-replayed'), 'true');
  t.is(after.text, originals[0]!.text);
});

test('callers that retry at once on 409 idempotency_in_progress all end with the one original response, never a second run', async (t) => {
  const caller = await createCaller(pool(), { rateLimits: { write: { perMinute: 600_000, burst: 100_000 } } });
  for (let round = 0; round < 8; round++) {
    const body = customerBody();
    const key = `retry-at-once-${round}`;
    const retryUntilAnswered = async () => {
      for (;;) {
        const res = await create(caller, key, body);
        if (res.status !== 409) return res;
        t.is(res.body.code, 'idempotency_in_progress');
      }
    };
    const answers = await Promise.all(Array.from({ length: 16 }, retryUntilAnswered));
    const statuses = answers.map(
      (res) =>
        `${res.status}${res.headers.get('idempotent-replayed') ? 'r' : ''}${res.status === 201 ? '' : ` ${res.body.code}`}`,
    );
    t.deepEqual(
      statuses.filter((status) => status === '201'),
      ['201'],
      `round ${round}: ${statuses.join(', ')}`,
    );
    t.true(
      answers.every(
        (res) => res.status === 201 && res.text === answers.find((a) => !a.headers.get('idempotent-replayed'))?.text,
      ),
      `round ${round}: ${statuses.join(', ')}`,
    );
  }
  t.is(await customerCount(caller.organizationId), 8);
  t.is(await eventCount(caller.organizationId, 'customer.created'), 8);
});

test('a stored result older than 24 hours is not replayed (the request runs again), and purgeExpiredIdempotencyKeys deletes such results only', async (t) => {
  const caller = await createCaller(pool());
  const body = customerBody();
  const first = await create(caller, 'old-key', body);
  t.is(first.status, 201);
  const fresh = await create(caller, 'fresh-key', customerBody());
  t.is(fresh.status, 201);

  await pool().query(
    "UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE api_key_id = $1 AND key = 'old-key'",
    [caller.keyId],
  );
  // Free the outlet code so that a re-run of the create can succeed.
  await pool().query("UPDATE customers SET outlet_code = 'UG9999999' WHERE organization_id = $1 AND id = $2", [
    caller.organizationId,
    first.body.id,
  ]);

  const rerun = await create(caller, 'old-key', body);
  t.is(rerun.status, 201);
  t.is(rerun.headers.get('idempotent-replayed'), null, 'the expired result was not replayed');
  t.not(rerun.body.id, first.body.id);
  t.is(await customerCount(caller.organizationId), 3);
  const replay = await create(caller, 'old-key', body);
  t.is(replay.headers.get('idempotent-replayed'), 'true', 'the re-run stored its own result');
  t.is(replay.body.id, rerun.body.id);

  await pool().query(
    "UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE api_key_id = $1 AND key = 'old-key'",
    [caller.keyId],
  );
  const purged = await purgeExpiredIdempotencyKeys(kyselyOver(pool()));
  t.true(purged >= 1);
  const { rows } = await pool().query<{ key: string }>(
    'SELECT key FROM idempotency_keys WHERE api_key_id = $1 ORDER BY key',
    [caller.keyId],
  );
  t.deepEqual(
    rows.map((row) => row.key),
    ['fresh-key'],
  );
});

test('a response lost after the commit is replayed to the retry with the same key', async (t) => {
  const caller = await createCaller(pool());
  const body = JSON.stringify(customerBody());
  const url = new URL(api().baseUrl);
  const request = [
    `POST ${API_BASE_PATH}/customers HTTP/1.1`,
    `Host: ${url.host}`,
    `Authorization: ${caller.auth.Authorization}`,
    'Idempotency-Key: lost-response',
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
  // The caller sends the whole request and never reads the answer; its connection breaks once the create committed.
  // (Breaking it before the service read the body would be a request never received: the body is read only after
  // the key is known, and a retry then simply runs it.)
  const socket = connect(Number(url.port), url.hostname);
  socket.on('error', () => {});
  socket.pause(); // nothing of the answer is read
  socket.write(request);

  let ids: string[] = [];
  for (let attempt = 0; attempt < 200 && ids.length === 0; attempt++) {
    ids = await customerIds(caller.organizationId);
    if (ids.length === 0) await sleep(25);
  }
  socket.destroy();
  t.is(ids.length, 1, 'the create committed although nobody read its response');

  const retry = await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': 'lost-response', 'content-type': 'application/json' },
    body,
  });
  t.is(retry.status, 201);
  t.is(retry.headers.get('idempotent-replayed'), 'true');
  t.is(retry.body.id, ids[0]);
  t.deepEqual(await customerIds(caller.organizationId), ids);
});
