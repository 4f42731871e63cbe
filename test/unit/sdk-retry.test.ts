// The SDK's retry wrapper (client-sdk/src/retry.ts), pure: no network and no real waiting. A fake `send` stands in
// for fetch, and the file's clock is a fake one (Date.now, setTimeout, clearTimeout; ava keeps its own timers), so
// every limit and every wait is asserted to the millisecond: the backoff with full jitter (Math.random fixed), the
// Retry-After in seconds or as an HTTP date, the budget that bounds waits and attempts, which answers and failures
// are retried, the one Idempotency-Key of a call, and that an attempt leaves no timer or listener behind.
// The rules are the spec's (Idempotency-Key header, last paragraph); test/sdk/retries.test.ts holds them against
// the real service, slowly.
import test, { type ExecutionContext } from 'ava';
import { getEventListeners } from 'node:events';
import * as zlib from 'node:zlib';
import { ErpConnectionError } from '../../client-sdk/src/errors.js';
import { retryingFetch, type Fetch, type RetryPolicy } from '../../client-sdk/src/retry.js';

// ---- The fake clock. A timer fires (in due order, the clock moving to its due time plus `late`) once everything
// pending in microtasks has run: an answer from the fake send is read whole before any timer can fire, and a
// stalled one waits for its attempt's timer.
interface FakeTimer {
  due: number;
  run: () => void;
}
const realSetImmediate = globalThis.setImmediate;
const START = 1_750_000_000_000; // whole seconds, so an HTTP date is exact
const clock = {
  now: START,
  /** How late every timer fires, in ms (a loaded machine). */
  late: 0,
  /** Every delay given to setTimeout, in order: attempt limits and waits. */
  delays: [] as number[],
  pending: new Set<FakeTimer>(),
  /** Called on every Date.now(). */
  onNow: undefined as undefined | (() => void),
  /** Called on every setTimeout, with its delay. */
  onSet: undefined as undefined | ((ms: number) => void),
};
Date.now = () => {
  clock.onNow?.();
  return clock.now;
};
globalThis.setTimeout = ((run: () => void, ms = 0) => {
  const timer: FakeTimer = { due: clock.now + ms, run };
  clock.delays.push(ms);
  clock.pending.add(timer);
  clock.onSet?.(ms);
  realSetImmediate(fireNext);
  return timer;
}) as unknown as typeof setTimeout;
globalThis.clearTimeout = ((timer: FakeTimer) => void clock.pending.delete(timer)) as unknown as typeof clearTimeout;
function fireNext(): void {
  const [next] = [...clock.pending].sort((a, b) => a.due - b.due);
  if (next === undefined) return;
  clock.pending.delete(next);
  clock.now = Math.max(clock.now, next.due) + clock.late;
  next.run();
}
const tick = () => new Promise<void>((resolve) => realSetImmediate(resolve));

test.beforeEach(() => {
  clock.now = START;
  clock.late = 0;
  clock.delays = [];
  clock.pending.clear();
  clock.onNow = undefined;
  clock.onSet = undefined;
  Math.random = () => 0.5;
});

// ---- The fake fetch: answers in order, recording what each attempt sent.
type Answer = Response | Error | 'stall' | ((request: Request) => Promise<Response>);
interface Sent {
  method: string;
  key: string | null;
  body: string;
  signal: AbortSignal;
}
function fakeFetch(...answers: Answer[]): { send: Fetch; sent: Sent[] } {
  const sent: Sent[] = [];
  const send: Fetch = async (request) => {
    sent.push({
      method: request.method,
      key: request.headers.get('Idempotency-Key'),
      body: await request.text(),
      signal: request.signal,
    });
    const answer = answers[sent.length - 1] ?? answers.at(-1)!;
    if (answer === 'stall') return new Promise<Response>(() => {}); // never answers, ignores its signal
    if (answer instanceof Error) throw answer;
    if (typeof answer === 'function') return answer(request);
    return answer.clone(); // an answer repeated (the last one) is a fresh copy each time
  };
  return { send, sent };
}
const policy = (overrides: Partial<RetryPolicy> = {}): RetryPolicy => ({
  maxRetries: 3,
  maxRetryTimeMs: 60_000,
  timeoutMs: 30_000,
  ...overrides,
});
const request = (method = 'GET', init: RequestInit = {}) =>
  new Request('http://erp.test/api/v1/customers', { method, ...init });
const status = (code: number, body = `status ${code}`, headers: Record<string, string> = {}) =>
  new Response(body, { status: code, headers });
const problem = (code: number, problemCode: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ code: problemCode }), {
    status: code,
    headers: { 'content-type': 'application/problem+json', ...headers },
  });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function connectionError(t: ExecutionContext, call: Promise<Response>): Promise<ErpConnectionError> {
  const error = await t.throwsAsync(call, { instanceOf: ErpConnectionError });
  return error!;
}
/** No timer left running, and (given the call's Request) no listener left on its signal, the caller's. */
function leftNothing(t: ExecutionContext, call?: Request): void {
  t.is(clock.pending.size, 0, 'no timer is left running');
  if (call) t.is(getEventListeners(call.signal, 'abort').length, 0, "no listener is left on the caller's signal");
}

// ---- The policy.

test.serial(
  'the policy: maxRetries a whole number >= 0, maxRetryTimeMs and timeoutMs numbers of milliseconds > 0; anything else is a TypeError',
  (t) => {
    const { send } = fakeFetch(status(200));
    const refused = (overrides: Partial<RetryPolicy>, message: string) =>
      t.throws(() => retryingFetch(send, policy(overrides)), { instanceOf: TypeError, message }, message);
    refused({ maxRetries: -1 }, 'maxRetries must be a whole number >= 0 (got -1).');
    refused({ maxRetries: 1.5 }, 'maxRetries must be a whole number >= 0 (got 1.5).');
    refused({ maxRetries: Number.NaN }, 'maxRetries must be a whole number >= 0 (got NaN).');
    refused({ maxRetryTimeMs: 0 }, 'maxRetryTimeMs must be a number of milliseconds > 0 (got 0).');
    refused({ maxRetryTimeMs: -5 }, 'maxRetryTimeMs must be a number of milliseconds > 0 (got -5).');
    refused({ maxRetryTimeMs: Number.NaN }, 'maxRetryTimeMs must be a number of milliseconds > 0 (got NaN).');
    refused({ timeoutMs: 0 }, 'timeoutMs must be a number of milliseconds > 0 (got 0).');
    refused({ timeoutMs: Number.NaN }, 'timeoutMs must be a number of milliseconds > 0 (got NaN).');
    t.notThrows(
      () => retryingFetch(send, { maxRetries: 0, maxRetryTimeMs: 1, timeoutMs: 1 }),
      'the smallest limits are accepted',
    );
  },
);

// ---- The Idempotency-Key.

test.serial(
  'creates and updates (POST, PUT, PATCH) get one generated Idempotency-Key, the same on every attempt',
  async (t) => {
    for (const method of ['POST', 'PUT', 'PATCH']) {
      const { send, sent } = fakeFetch(status(503), status(503), status(201));
      const response = await retryingFetch(send, policy())(request(method, { body: '{"name":"Key Shop"}' }));
      t.is(response.status, 201, method);
      t.is(sent.length, 3, method);
      t.regex(sent[0]!.key ?? '', UUID, method);
      t.deepEqual(
        sent.map((s) => s.key),
        [sent[0]!.key, sent[0]!.key, sent[0]!.key],
        `${method}: one key for the call`,
      );
      t.deepEqual(
        sent.map((s) => s.body),
        Array(3).fill('{"name":"Key Shop"}'),
        `${method}: the body is sent whole each time`,
      );
    }
  },
);

test.serial('two calls get two different generated keys', async (t) => {
  const { send, sent } = fakeFetch(status(201));
  const fetchWithRetries = retryingFetch(send, policy());
  await fetchWithRetries(request('POST', { body: '{}' }));
  await fetchWithRetries(request('POST', { body: '{}' }));
  t.not(sent[0]!.key, sent[1]!.key);
});

test.serial('reads and deletes (GET, HEAD, DELETE) get no Idempotency-Key, on any attempt', async (t) => {
  for (const method of ['GET', 'HEAD', 'DELETE']) {
    const { send, sent } = fakeFetch(status(503, ''), status(204, null as unknown as string));
    await retryingFetch(send, policy())(request(method));
    t.deepEqual(
      sent.map((s) => s.key),
      [null, null],
      method,
    );
  }
});

test.serial("a caller's own Idempotency-Key is kept, on every attempt", async (t) => {
  const { send, sent } = fakeFetch(status(503), status(201));
  await retryingFetch(send, policy())(request('POST', { body: '{}', headers: { 'Idempotency-Key': 'my-key-1' } }));
  t.deepEqual(
    sent.map((s) => s.key),
    ['my-key-1', 'my-key-1'],
  );
});

// ---- Which answers are retried.

test.serial('429 and every 5xx (500 included) are retried', async (t) => {
  for (const code of [429, 500, 502, 503, 504, 599]) {
    const { send, sent } = fakeFetch(status(code), status(200, 'done'));
    const response = await retryingFetch(send, policy())(request());
    t.is(sent.length, 2, String(code));
    t.is(await response.text(), 'done', String(code));
  }
});

test.serial(
  '2xx, 3xx and 4xx other than 409 and 429 are final: one attempt, the answer handed on with its body',
  async (t) => {
    for (const code of [200, 201, 302, 400, 401, 403, 404, 422, 499]) {
      const { send, sent } = fakeFetch(status(code, `answer ${code}`), status(200, 'a retry'));
      const response = await retryingFetch(send, policy())(request());
      t.is(sent.length, 1, String(code));
      t.is(response.status, code);
      t.is(await response.text(), `answer ${code}`, String(code));
    }
  },
);

test.serial(
  '409 is retried only when its code is idempotency_in_progress; any other 409 is final, its body intact, and so is a 400 or 422 with that code',
  async (t) => {
    const busy = fakeFetch(problem(409, 'idempotency_in_progress'), status(201, 'created'));
    t.is(await (await retryingFetch(busy.send, policy())(request('POST', { body: '{}' }))).text(), 'created');
    t.is(busy.sent.length, 2);
    for (const code of [400, 422]) {
      const { send, sent } = fakeFetch(problem(code, 'idempotency_in_progress'), status(201, 'a retry'));
      t.is(
        (await retryingFetch(send, policy())(request('POST', { body: '{}' }))).status,
        code,
        `${code} is final whatever its code`,
      );
      t.is(sent.length, 1, String(code));
    }
    for (const body of ['{"code":"conflict"}', '{}', 'null', '"idempotency_in_progress"', '{"code":', 'not json']) {
      const { send, sent } = fakeFetch(status(409, body), status(201, 'a retry'));
      const response = await retryingFetch(send, policy())(request('POST', { body: '{}' }));
      t.is(sent.length, 1, body);
      t.is(response.status, 409, body);
      t.is(await response.text(), body, body);
    }
  },
);

test.serial(
  'a transport failure is retried; after the last attempt the call rejects with ErpConnectionError carrying the attempts and the last failure',
  async (t) => {
    const failures = [new TypeError('first'), new TypeError('second'), new TypeError('third')];
    const { send, sent } = fakeFetch(...failures);
    const error = await connectionError(t, retryingFetch(send, policy({ maxRetries: 2 }))(request()));
    t.is(sent.length, 3);
    t.is(error.attempts, 3);
    t.is(error.cause, failures[2]);
    const recovered = fakeFetch(new TypeError('fetch failed'), status(200, 'ok'));
    t.is(await (await retryingFetch(recovered.send, policy())(request())).text(), 'ok');
  },
);

test.serial('maxRetries: at most maxRetries + 1 attempts, then the last answer is the result', async (t) => {
  const { send, sent } = fakeFetch(status(503, 'one'), status(503, 'two'), status(503, 'three'), status(503, 'four'));
  const response = await retryingFetch(send, policy({ maxRetries: 2 }))(request());
  t.is(sent.length, 3);
  t.is(response.status, 503);
  t.is(await response.text(), 'three');
  const once = fakeFetch(status(503, 'only'), status(200));
  t.is(await (await retryingFetch(once.send, policy({ maxRetries: 0 }))(request())).text(), 'only');
  t.is(once.sent.length, 1, 'maxRetries 0: no retry');
});

// ---- How long to wait.

test.serial('the backoff is full jitter: floor(random × min(8000, 500 × 2^(retry − 1))) ms', async (t) => {
  const { send } = fakeFetch(new TypeError('fetch failed'));
  const error = await connectionError(
    t,
    retryingFetch(send, policy({ maxRetries: 6, maxRetryTimeMs: 10_000_000 }))(request()),
  );
  t.is(error.attempts, 7);
  // Each attempt's limit (30 000) and, between them, the wait: half of 500, 1000, 2000, 4000, 8000, 8000 (the cap).
  t.deepEqual(clock.delays, [30_000, 250, 30_000, 500, 30_000, 1000, 30_000, 2000, 30_000, 4000, 30_000, 4000, 30_000]);

  clock.delays = [];
  Math.random = () => 0.9999;
  await connectionError(t, retryingFetch(send, policy({ maxRetries: 1 }))(request()));
  t.deepEqual(clock.delays, [30_000, 499, 30_000], 'rounded down: under the ceiling');

  clock.delays = [];
  Math.random = () => 0;
  await connectionError(t, retryingFetch(send, policy({ maxRetries: 1 }))(request()));
  t.deepEqual(clock.delays, [30_000, 0, 30_000]);
  leftNothing(t);
});

test.serial(
  'Retry-After in seconds is waited instead of the backoff, on 429, 409 idempotency_in_progress and 5xx',
  async (t) => {
    for (const answer of [
      status(429, '', { 'Retry-After': '7' }),
      problem(409, 'idempotency_in_progress', { 'Retry-After': '7' }),
      status(503, '', { 'Retry-After': ' 7 ' }),
    ]) {
      clock.delays = [];
      const { send } = fakeFetch(answer, status(200));
      t.is((await retryingFetch(send, policy())(request('POST', { body: '{}' }))).status, 200);
      t.deepEqual(clock.delays, [30_000, 7000, 30_000], String(answer.status));
    }
  },
);

test.serial(
  'Retry-After as an HTTP date waits until that date; one already past retries at once; an unreadable one falls back to the backoff',
  async (t) => {
    const cases: Array<[string, number]> = [
      [new Date(START + 12_000).toUTCString(), 12_000],
      [new Date(START - 5000).toUTCString(), 0],
      ['soon', 250],
    ];
    for (const [retryAfter, wait] of cases) {
      clock.delays = [];
      clock.now = START;
      const { send } = fakeFetch(status(503, '', { 'Retry-After': retryAfter }), status(200));
      t.is((await retryingFetch(send, policy())(request())).status, 200);
      t.deepEqual(clock.delays, [30_000, wait, 30_000], retryAfter);
    }
  },
);

test.serial('a retry is made only when its wait ends before the budget does', async (t) => {
  const ending = fakeFetch(status(503, 'last', { 'Retry-After': '10' }), status(200));
  const response = await retryingFetch(ending.send, policy({ maxRetryTimeMs: 10_000, timeoutMs: 5000 }))(request());
  t.is(ending.sent.length, 1, 'a wait ending exactly at the budget is not made');
  t.is(await response.text(), 'last');
  t.deepEqual(clock.delays, [5000]);

  clock.delays = [];
  const inTime = fakeFetch(status(503, '', { 'Retry-After': '9' }), status(200));
  t.is((await retryingFetch(inTime.send, policy({ maxRetryTimeMs: 10_000, timeoutMs: 5000 }))(request())).status, 200);
  t.is(inTime.sent.length, 2, 'a wait ending 1 s before the budget is made');
  t.deepEqual(clock.delays, [5000, 9000, 1000], 'and the retry gets the rest of the budget, 1000 ms, as its limit');
});

test.serial(
  'the budget bounds the backoff of a failure too: no retry whose wait would end at or past it',
  async (t) => {
    Math.random = () => 0.999;
    const { send, sent } = fakeFetch(new TypeError('fetch failed'));
    // The first wait would be floor(0.999 × 500) = 499 ms: with 499 ms of budget it is not made, with 500 it is.
    await connectionError(
      t,
      retryingFetch(send, policy({ maxRetries: 3, maxRetryTimeMs: 499, timeoutMs: 30_000 }))(request()),
    );
    t.is(sent.length, 1);
    clock.delays = [];
    const second = fakeFetch(new TypeError('fetch failed'), status(200));
    t.is(
      (await retryingFetch(second.send, policy({ maxRetries: 3, maxRetryTimeMs: 500, timeoutMs: 30_000 }))(request()))
        .status,
      200,
    );
    t.deepEqual(clock.delays, [500, 499, 1]);
  },
);

// ---- How long an attempt may take.

test.serial(
  "an attempt's limit is timeoutMs, or what is left of the budget when that is less; a timed-out attempt is retried",
  async (t) => {
    const { send, sent } = fakeFetch('stall');
    const error = await connectionError(
      t,
      retryingFetch(send, policy({ maxRetries: 3, maxRetryTimeMs: 10_000, timeoutMs: 8000 }))(request()),
    );
    // 8000 (timeoutMs), a wait of 250, then the 1750 ms left; after it nothing is left for a retry.
    t.deepEqual(clock.delays, [8000, 250, 1750]);
    t.is(sent.length, 2);
    t.is(error.attempts, 2);
    const cause = error.cause as DOMException;
    t.is(cause.name, 'TimeoutError');
    t.is(cause.message, "No complete answer within 1750 ms (the rest of the call's 10000 ms budget)");
    t.is(
      sent[0]!.signal.reason.message,
      'No complete answer within 8000 ms (timeoutMs)',
      'the first attempt had timeoutMs',
    );
    t.true(sent[1]!.signal.aborted, 'fetch is told to stop');
    leftNothing(t);
  },
);

test.serial('an attempt with exactly timeoutMs of budget left has the limit timeoutMs', async (t) => {
  const { send } = fakeFetch('stall');
  const error = await connectionError(
    t,
    retryingFetch(send, policy({ maxRetries: 0, maxRetryTimeMs: 5000, timeoutMs: 5000 }))(request()),
  );
  t.is((error.cause as Error).message, 'No complete answer within 5000 ms (timeoutMs)');
});

test.serial(
  'an attempt that starts with its budget already spent (its wait fired late) gets 0 ms, not a negative limit',
  async (t) => {
    clock.late = 800; // the 250 ms wait ends 1050 ms in: 50 ms past the budget
    const { send } = fakeFetch(new TypeError('fetch failed'), 'stall');
    const error = await connectionError(
      t,
      retryingFetch(send, policy({ maxRetries: 3, maxRetryTimeMs: 1000, timeoutMs: 1000 }))(request()),
    );
    t.deepEqual(clock.delays, [1000, 250, 0]);
    t.is((error.cause as Error).message, "No complete answer within 0 ms (the rest of the call's 1000 ms budget)");
  },
);

test.serial(
  'limits and waits beyond what setTimeout holds are clamped to 2^31 − 1 ms (they would fire at once otherwise)',
  async (t) => {
    const { send } = fakeFetch(status(503, '', { 'Retry-After': '3000000' }), status(200));
    const response = await retryingFetch(
      send,
      policy({ maxRetryTimeMs: 10_000_000_000, timeoutMs: 3_000_000_000 }),
    )(request());
    t.is(response.status, 200);
    t.deepEqual(clock.delays, [2_147_483_647, 2_147_483_647, 2_147_483_647]);
  },
);

test.serial(
  'the answer is read whole within the limit: a body that stalls after its first bytes times out, is cancelled, and the attempt is retried',
  async (t) => {
    const cancelled: unknown[] = [];
    const stallingBody = () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('{"par'));
          },
          cancel(reason) {
            cancelled.push(reason);
          },
        }),
        { status: 200 },
      );
    const { send, sent } = fakeFetch(async () => stallingBody());
    const error = await connectionError(t, retryingFetch(send, policy({ maxRetries: 1, timeoutMs: 1000 }))(request()));
    t.is(sent.length, 2);
    t.is((error.cause as Error).message, 'No complete answer within 1000 ms (timeoutMs)');
    t.is(cancelled.length, 2, 'each stalled body is cancelled');
    t.is((cancelled[1] as Error).name, 'TimeoutError');
    leftNothing(t);
  },
);

test.serial(
  'a fetch that ignores its signal cannot hold the call: the attempt ends at its limit, and an answer arriving later has its body cancelled',
  async (t) => {
    let cancelled = false;
    const late: Array<(response: Response) => void> = [];
    const { send } = fakeFetch(() => new Promise<Response>((resolve) => late.push(resolve)));
    const error = await connectionError(t, retryingFetch(send, policy({ maxRetries: 1, timeoutMs: 1000 }))(request()));
    t.is(error.attempts, 2);
    late[0]!(
      new Response(
        new ReadableStream({
          cancel() {
            cancelled = true;
          },
        }),
      ),
    );
    late[1]!(new Response(null, { status: 204 })); // no body to cancel
    await tick();
    t.true(cancelled);
  },
);

// ---- The caller's abort.

test.serial("a caller's signal already aborted: the call rejects with its reason and sends nothing", async (t) => {
  const { send, sent } = fakeFetch(status(200));
  const reason = new Error('caller gave up');
  const error = await t.throwsAsync(
    retryingFetch(send, policy())(request('GET', { signal: AbortSignal.abort(reason) })),
  );
  t.is(error, reason);
  t.is(sent.length, 0);
});

test.serial(
  "the caller's abort while an attempt waits for its answer ends the call at once with its reason: no retry, fetch told to stop, nothing left behind",
  async (t) => {
    for (const when of ['as fetch is called', 'a moment later'] as const) {
      const caller = new AbortController();
      const reason = new Error(`abort ${when}`);
      const sent: Request[] = [];
      const send: Fetch = (request) => {
        sent.push(request);
        if (when === 'as fetch is called') caller.abort(reason);
        else queueMicrotask(() => caller.abort(reason));
        return new Promise<Response>(() => {}); // never answers, ignores its signal
      };
      t.timeout(10_000);
      const call = request('GET', { signal: caller.signal });
      const error = await t.throwsAsync(retryingFetch(send, policy())(call));
      t.is(error, reason, when);
      t.is(sent.length, 1, when);
      t.is(sent[0]!.signal.reason, reason, `${when}: the attempt's signal carries the caller's reason`);
      leftNothing(t, call);
    }
  },
);

test.serial(
  "the caller's abort during the last attempt rejects with its own reason, not as a connection failure",
  async (t) => {
    const caller = new AbortController();
    const reason = new Error('abort on the only attempt');
    const send: Fetch = () => {
      queueMicrotask(() => caller.abort(reason));
      return new Promise<Response>(() => {});
    };
    const call = request('GET', { signal: caller.signal });
    const error = await t.throwsAsync(retryingFetch(send, policy({ maxRetries: 0 }))(call));
    t.is(error, reason);
    leftNothing(t, call);
  },
);

test.serial(
  "the caller's abort while the body is being read ends the call at once with its reason, and the body is cancelled",
  async (t) => {
    const caller = new AbortController();
    const reason = new Error('abort while reading');
    let cancelledWith: unknown;
    // No byte comes: only the signal can end the read, and the body is then cancelled (fetch closes its connection).
    const body = new ReadableStream<Uint8Array>({
      cancel(why) {
        cancelledWith = why;
      },
    });
    const { send, sent } = fakeFetch(async () => {
      const response = new Response(body);
      // The abort lands just as the wrapper takes the body, before it reads a byte.
      Object.defineProperty(response, 'body', {
        get() {
          caller.abort(reason);
          return body;
        },
      });
      return response;
    });
    t.timeout(10_000);
    const call = request('GET', { signal: caller.signal });
    const error = await t.throwsAsync(retryingFetch(send, policy())(call));
    t.is(error, reason);
    t.is(sent.length, 1);
    t.is(cancelledWith, reason, "the body is cancelled with the caller's reason");
    leftNothing(t, call);
  },
);

test.serial(
  "the caller's abort during the wait before a retry ends the call at once: the wait is dropped, nothing left behind",
  async (t) => {
    const caller = new AbortController();
    const reason = new Error('abort while waiting');
    clock.onSet = (ms) => {
      if (ms === 5000) queueMicrotask(() => caller.abort(reason));
    };
    const { send, sent } = fakeFetch(status(503, '', { 'Retry-After': '5' }), status(200));
    const call = request('GET', { signal: caller.signal });
    const error = await t.throwsAsync(retryingFetch(send, policy())(call));
    t.is(error, reason);
    t.is(sent.length, 1);
    t.deepEqual(clock.delays, [30_000, 5000]);
    t.is(clock.now, START, 'the wait was not waited');
    leftNothing(t, call);
  },
);

test.serial("the caller's abort after an answer, before the wait starts: no wait is started", async (t) => {
  const caller = new AbortController();
  const reason = new Error('abort after the answer');
  const { send, sent } = fakeFetch(async () => {
    clock.onNow = () => {
      clock.onNow = undefined;
      caller.abort(reason);
    }; // the next look at the clock: reading Retry-After
    return status(503, '', { 'Retry-After': '5' });
  });
  const call = request('GET', { signal: caller.signal });
  const error = await t.throwsAsync(retryingFetch(send, policy())(call));
  t.is(error, reason);
  t.is(sent.length, 1);
  t.deepEqual(clock.delays, [30_000], "only the attempt's limit was set");
  leftNothing(t, call);
});

test.serial("a call with retries leaves nothing behind: no timer and no listener on the caller's signal", async (t) => {
  const caller = new AbortController();
  const { send } = fakeFetch(new TypeError('fetch failed'), status(503, '', { 'Retry-After': '1' }), status(200));
  const call = request('GET', { signal: caller.signal });
  t.is((await retryingFetch(send, policy())(call)).status, 200);
  t.deepEqual(clock.delays, [30_000, 250, 30_000, 1000, 30_000]);
  leftNothing(t, call);
});

// ---- The answer handed on.

test.serial(
  'the answer handed on is a copy read whole: status, status text, headers, URL, redirected and every chunk of the body',
  async (t) => {
    const chunks = ['ab', 'cde', 'f'].map((c) => new TextEncoder().encode(c));
    const { send } = fakeFetch(async () => {
      const response = new Response(
        new ReadableStream({
          start(controller) {
            for (const c of chunks) controller.enqueue(c);
            controller.close();
          },
        }),
        {
          status: 201,
          statusText: 'Created',
          headers: { 'X-Request-Id': 'req_1', 'Content-Length': '99' },
        },
      );
      Object.defineProperties(response, {
        url: { value: 'http://erp.test/api/v1/customers/1' },
        redirected: { value: true },
      });
      return response;
    });
    const response = await retryingFetch(send, policy())(request());
    t.is(response.status, 201);
    t.is(response.statusText, 'Created');
    t.is(response.headers.get('x-request-id'), 'req_1');
    t.is(response.headers.get('content-length'), '6', 'the length of the bytes handed on');
    t.is(response.url, 'http://erp.test/api/v1/customers/1');
    t.true(response.redirected);
    t.is(await response.text(), 'abcdef');
  },
);

test.serial(
  'Content-Encoding is dropped when fetch decoded every coding in it (gzip, x-gzip, deflate, br, identity), kept otherwise',
  async (t) => {
    const zstdDecoded = 'createZstdDecompress' in zlib; // Node's fetch decodes zstd where node:zlib has it
    const cases: Array<[string, boolean]> = [
      ['gzip', true],
      ['x-gzip', true],
      ['deflate', true],
      ['br', true],
      ['identity', true],
      ['GZIP', true],
      ['gzip, br', true],
      [' gzip ,  deflate ', true],
      ['compress', false],
      ['gzip, compress', false],
      ['zstd', zstdDecoded],
    ];
    for (const [coding, dropped] of cases) {
      const { send } = fakeFetch(status(200, 'hello', { 'Content-Encoding': coding, 'Content-Length': '40' }));
      const response = await retryingFetch(send, policy())(request());
      t.is(response.headers.get('content-encoding'), dropped ? null : coding.trim(), coding);
      t.is(response.headers.get('content-length'), '5', coding);
      t.is(await response.text(), 'hello', coding);
    }
  },
);

test.serial('an answer without a body, and any answer to HEAD, keeps its headers as sent', async (t) => {
  const none = fakeFetch(
    async () => new Response(null, { status: 200, headers: { 'Content-Encoding': 'gzip', 'Content-Length': '12' } }),
  );
  const empty = await retryingFetch(none.send, policy())(request());
  t.is(empty.headers.get('content-encoding'), 'gzip');
  t.is(empty.headers.get('content-length'), '12');
  t.is(empty.body, null);
  t.is(none.sent.length, 1);

  const head = fakeFetch(status(200, 'abc', { 'Content-Encoding': 'gzip', 'Content-Length': '1234' }));
  const response = await retryingFetch(head.send, policy())(request('HEAD'));
  t.is(response.headers.get('content-encoding'), 'gzip');
  t.is(response.headers.get('content-length'), '1234');
});

test.serial('a 204, 205 or 304 answer is handed on without a body even when fetch gave it one', async (t) => {
  for (const code of [204, 205, 304]) {
    const { send, sent } = fakeFetch(async () => {
      const response = new Response('stray bytes', { status: 200, headers: { 'Content-Length': '11' } });
      Object.defineProperty(response, 'status', { value: code });
      return response;
    });
    const response = await retryingFetch(send, policy())(request());
    t.is(response.status, code);
    t.is(response.body, null, String(code));
    t.is(response.headers.get('content-length'), '11', `${code}: headers as sent`);
    t.is(sent.length, 1, String(code));
  }
});
