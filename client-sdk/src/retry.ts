// Retries as the spec asks of clients ("Idempotency-Key header"): after transport failures, on 409
// `idempotency_in_progress`, on 429 and on 5xx, honouring Retry-After, always with the same Idempotency-Key;
// never on other 4xx. It wraps fetch (below openapi-fetch's middleware), so every attempt is a fresh clone of the
// one Request the call built: the body is sent whole each time.
//
// Each attempt reads the answer whole (headers and body) under one deadline and one abort signal, and hands on a
// Response made from those bytes (fetch's decoded bytes: Content-Encoding dropped, Content-Length their length). Were the body left to be read later, by openapi-fetch, its stream would hang on a
// signal nobody aborts any more: a server that sent headers and then stalled would hold the call forever, and the
// caller's abort would no longer reach it.
import * as zlib from 'node:zlib';
import { ErpConnectionError } from './errors.js';
import { retryAfterMs } from './retry-after.js';

export type Fetch = (request: Request) => Promise<Response>;

export interface RetryPolicy {
  /** Retries after the first attempt (so at most maxRetries + 1 attempts). */
  maxRetries: number;
  /** Time budget of the whole call from its start: no attempt runs past it, and no retry starts at or after it. */
  maxRetryTimeMs: number;
  /** Limit of one attempt, until its whole answer (headers and body) has arrived. */
  timeoutMs: number;
}

/** Methods that get a generated Idempotency-Key when the caller gave none: creates and updates. */
const KEYED_METHODS = new Set(['POST', 'PUT', 'PATCH']);
/** Exponential backoff with full jitter (a random wait in [0, min(cap, base * 2^retry))): retries spread out. */
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 8_000;
/** setTimeout fires at once (after 1 ms) for longer delays, so longer limits are clamped to this (about 24 days). */
const MAX_TIMER_MS = 2_147_483_647;
/** Statuses whose Response may not have a body (the constructor throws otherwise). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
/** Content codings fetch decodes before handing on the body. */
const DECODED_CODINGS = new Set([
  'gzip',
  'x-gzip',
  'deflate',
  'br',
  'identity',
  ...('createZstdDecompress' in zlib ? ['zstd'] : []),
]);

export function retryingFetch(send: Fetch, policy: RetryPolicy): Fetch {
  // A NaN or negative limit would silently become a 1 ms timer (or none), so a wrong option fails here instead.
  if (!Number.isInteger(policy.maxRetries) || policy.maxRetries < 0)
    throw new TypeError(`maxRetries must be a whole number >= 0 (got ${policy.maxRetries}).`);
  for (const name of ['maxRetryTimeMs', 'timeoutMs'] as const) {
    if (!(policy[name] > 0)) throw new TypeError(`${name} must be a number of milliseconds > 0 (got ${policy[name]}).`);
  }
  return async function fetchWithRetries(request: Request): Promise<Response> {
    // One key for the call, set before the first attempt, so every retry is the same request to the service.
    if (KEYED_METHODS.has(request.method) && !request.headers.has('Idempotency-Key')) {
      request.headers.set('Idempotency-Key', globalThis.crypto.randomUUID());
    }
    const started = Date.now();
    const remainingMs = () => policy.maxRetryTimeMs - (Date.now() - started);
    for (let attempt = 1; ; attempt++) {
      // The budget bounds the call, attempts included: the last attempt gets only what is left of it.
      const left = remainingMs();
      const timeout =
        left < policy.timeoutMs
          ? { ms: Math.max(0, left), why: `the rest of the call's ${policy.maxRetryTimeMs} ms budget` }
          : { ms: policy.timeoutMs, why: 'timeoutMs' };
      const outcome = await attemptOnce(send, request, timeout);
      if ('response' in outcome && !(await isRetryable(outcome.response))) return outcome.response;

      const waitMs = ('response' in outcome ? retryAfterMs(outcome.response.headers) : undefined) ?? backoffMs(attempt);
      // A retry must start before the budget ends, so that it has some time left to get its answer.
      if (attempt > policy.maxRetries || remainingMs() - waitMs <= 0) {
        // Out of retries: the last answer is the result (it becomes an ErpApiError), or the last failure.
        if ('response' in outcome) return outcome.response;
        throw new ErpConnectionError(attempt, outcome.failure);
      }
      await wait(waitMs, request.signal);
    }
  };
}

type Outcome = { response: Response } | { failure: unknown };

async function attemptOnce(send: Fetch, request: Request, timeout: { ms: number; why: string }): Promise<Outcome> {
  const callerSignal = request.signal;
  callerSignal.throwIfAborted();
  // One signal for the attempt, from its start until the last byte of the answer: the caller's abort or the
  // deadline, whichever comes first.
  const controller = new AbortController();
  const forwardAbort = () => controller.abort(callerSignal.reason);
  callerSignal.addEventListener('abort', forwardAbort, { once: true });
  const timer = setTimeout(
    () =>
      controller.abort(new DOMException(`No complete answer within ${timeout.ms} ms (${timeout.why})`, 'TimeoutError')),
    Math.min(timeout.ms, MAX_TIMER_MS),
  );
  const signal = controller.signal;
  try {
    // Raced with the signal too, so that even a fetch that ignores its signal cannot hold the call.
    const response = await untilAborted(
      send(new Request(request.clone(), { signal })),
      signal,
      (late) => void late.body?.cancel().catch(() => {}),
    );
    return { response: await buffered(response, signal, request.method) };
  } catch (failure) {
    // The caller's own abort ends the call at once; anything else (no answer, a timeout, a body cut off or
    // stalled) is a transport failure worth another attempt: it is the same request with the same key.
    if (callerSignal.aborted) throw callerSignal.reason;
    return { failure };
  } finally {
    clearTimeout(timer);
    callerSignal.removeEventListener('abort', forwardAbort);
  }
}

/** The same answer with its body read into memory under `signal`, so nothing of the attempt is left pending. */
async function buffered(response: Response, signal: AbortSignal, method: string): Promise<Response> {
  const bytes = response.body === null ? null : await readAll(response.body, signal);
  const body = NULL_BODY_STATUSES.has(response.status) ? null : bytes;
  const headers = new Headers(response.headers);
  if (body !== null && method !== 'HEAD') {
    // fetch hands on the body decoded, with the headers of the encoded one: the copy's headers describe its bytes.
    if (decodedByFetch(headers.get('content-encoding'))) headers.delete('content-encoding');
    headers.set('content-length', String(body.byteLength));
  }
  const copy = new Response(body, { status: response.status, statusText: response.statusText, headers });
  // The constructor cannot set these; middleware may log them.
  Object.defineProperties(copy, { url: { value: response.url }, redirected: { value: response.redirected } });
  return copy;
}

/**
 * Whether fetch decoded every coding of this Content-Encoding (Node's fetch, undici, decodes gzip, deflate, br and,
 * where node:zlib has it, zstd; with any other coding it decodes nothing and the bytes are as sent).
 */
function decodedByFetch(contentEncoding: string | null): boolean {
  if (contentEncoding === null) return false;
  return contentEncoding
    .toLowerCase()
    .split(',')
    .every((coding) => DECODED_CODINGS.has(coding.trim()));
}

async function readAll(body: ReadableStream<Uint8Array>, signal: AbortSignal): Promise<Uint8Array<ArrayBuffer>> {
  const reader = body.getReader();
  // Cancelling ends a pending read (also from a fetch that ignores the signal); the loop then throws the reason.
  const stop = () => void reader.cancel(signal.reason).catch(() => {});
  signal.addEventListener('abort', stop, { once: true });
  try {
    const chunks: Uint8Array[] = [];
    let length = 0;
    for (;;) {
      signal.throwIfAborted();
      const { done, value } = await reader.read();
      signal.throwIfAborted();
      if (done) break;
      chunks.push(value);
      length += value.byteLength;
    }
    const bytes = new Uint8Array(length);
    let offset = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return bytes;
  } catch (error) {
    stop();
    throw error;
  } finally {
    signal.removeEventListener('abort', stop);
  }
}

/** `promise`, or a rejection with the signal's reason once it aborts; a value that comes too late goes to `discard`. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal, discard: (value: T) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        if (signal.aborted) discard(value);
        else resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

async function isRetryable(response: Response): Promise<boolean> {
  if (response.status === 429 || response.status >= 500) return true;
  if (response.status !== 409) return false;
  // Only the conflict that means "the first request with this key still runs"; other 409s are final.
  const problem: unknown = await response
    .clone()
    .json()
    .catch(() => undefined);
  return (
    typeof problem === 'object' &&
    problem !== null &&
    (problem as { code?: unknown }).code === 'idempotency_in_progress'
  );
}

function backoffMs(attempt: number): number {
  return Math.floor(Math.random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (attempt - 1)));
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.min(ms, MAX_TIMER_MS),
    );
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
