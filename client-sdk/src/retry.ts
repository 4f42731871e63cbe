// Retries as the spec asks of clients ("Idempotency-Key header"): after transport failures, on 409
// `idempotency_in_progress`, on 429 and on 5xx, honouring Retry-After, always with the same Idempotency-Key;
// never on other 4xx. It wraps fetch (below openapi-fetch's middleware), so every attempt is a fresh clone of the
// one Request the call built: the body is sent whole each time.
import { ErpConnectionError } from './errors.js';
import { retryAfterMs } from './retry-after.js';

export type Fetch = (request: Request) => Promise<Response>;

export interface RetryPolicy {
  /** Retries after the first attempt (so at most maxRetries + 1 attempts). */
  maxRetries: number;
  /** Time budget of the call from its start: a retry whose wait would end past it is not made. */
  maxRetryTimeMs: number;
  /** Limit of one attempt, until the response headers arrive. */
  timeoutMs: number;
}

/** Methods that get a generated Idempotency-Key when the caller gave none: creates and updates. */
const KEYED_METHODS = new Set(['POST', 'PUT', 'PATCH']);
/** Exponential backoff with full jitter (a random wait in [0, min(cap, base * 2^retry))): retries spread out. */
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 8_000;

export function retryingFetch(send: Fetch, policy: RetryPolicy): Fetch {
  return async function fetchWithRetries(request: Request): Promise<Response> {
    // One key for the call, set before the first attempt, so every retry is the same request to the service.
    if (KEYED_METHODS.has(request.method) && !request.headers.has('Idempotency-Key')) {
      request.headers.set('Idempotency-Key', globalThis.crypto.randomUUID());
    }
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      const outcome = await attemptOnce(send, request, policy.timeoutMs);
      if ('response' in outcome && !(await isRetryable(outcome.response))) return outcome.response;

      const waitMs = ('response' in outcome ? retryAfterMs(outcome.response.headers) : undefined) ?? backoffMs(attempt);
      const withinBudget = Date.now() - started + waitMs <= policy.maxRetryTimeMs;
      if (attempt > policy.maxRetries || !withinBudget) {
        // Out of retries: the last answer is the result (it becomes an ErpApiError), or the last failure.
        if ('response' in outcome) return outcome.response;
        throw new ErpConnectionError(attempt, outcome.failure);
      }
      if ('response' in outcome) await outcome.response.body?.cancel().catch(() => {});
      await wait(waitMs, request.signal);
    }
  };
}

type Outcome = { response: Response } | { failure: unknown };

async function attemptOnce(send: Fetch, request: Request, timeoutMs: number): Promise<Outcome> {
  const controller = new AbortController();
  const callerSignal = request.signal;
  const forwardAbort = () => controller.abort(callerSignal.reason);
  if (callerSignal.aborted) throw callerSignal.reason;
  callerSignal.addEventListener('abort', forwardAbort, { once: true });
  const timer = setTimeout(() => controller.abort(new DOMException(`No response within ${timeoutMs} ms`, 'TimeoutError')), timeoutMs);
  try {
    return { response: await send(new Request(request.clone(), { signal: controller.signal })) };
  } catch (failure) {
    // The caller's own abort ends the call at once; anything else is a transport failure worth another attempt.
    if (callerSignal.aborted) throw callerSignal.reason;
    return { failure };
  } finally {
    clearTimeout(timer);
    callerSignal.removeEventListener('abort', forwardAbort);
  }
}

async function isRetryable(response: Response): Promise<boolean> {
  if (response.status === 429 || response.status >= 500) return true;
  if (response.status !== 409) return false;
  // Only the conflict that means "the first request with this key still runs"; other 409s are final.
  const problem: unknown = await response.clone().json().catch(() => undefined);
  return typeof problem === 'object' && problem !== null && (problem as { code?: unknown }).code === 'idempotency_in_progress';
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
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
