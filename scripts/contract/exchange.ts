// One HTTP exchange with the deployment. A 429 is not the deployment breaking its contract but the key's rate
// limit doing its job, so it is waited out (Retry-After, at most 60 s) and the request sent again, at most twice;
// the answer after that is the one judged. A connection that the deployment closed while it sat idle in the pool
// (its keep-alive timeout and the client's crossing, which a loaded machine makes likely) is not an answer either:
// the request is sent once more on a new connection. That is safe: every write carries an Idempotency-Key.
export interface OutgoingRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

export interface Answer {
  status: number;
  headers: Headers;
  bodyText: string;
  /** Milliseconds of the last attempt, from sending to the end of the body. */
  ms: number;
  /** Seconds spent waiting out 429s. */
  waitedSeconds: number;
}

const MAX_RATE_LIMIT_RETRIES = 2;
const MAX_WAIT_SECONDS = 60;

/** Throws when there is no answer (connection refused, DNS, timeout), with the cause in the message. */
export async function exchange(request: OutgoingRequest, timeoutMs: number): Promise<Answer> {
  let waitedSeconds = 0;
  let staleConnectionRetried = false;
  for (let attempt = 0; ; attempt += 1) {
    const started = performance.now();
    let response: Response;
    let bodyText: string;
    try {
      response = await fetch(request.url, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'manual',
      });
      bodyText = await response.text();
    } catch (error) {
      if (!staleConnectionRetried && isStaleConnection(error)) {
        staleConnectionRetried = true;
        attempt -= 1;
        continue;
      }
      throw new Error(describeFetchError(error, timeoutMs));
    }
    const ms = Math.round(performance.now() - started);
    if (response.status !== 429 || attempt === MAX_RATE_LIMIT_RETRIES)
      return { status: response.status, headers: response.headers, bodyText, ms, waitedSeconds };
    const seconds = Math.min(MAX_WAIT_SECONDS, Math.max(1, Number(response.headers.get('retry-after')) || 1));
    waitedSeconds += seconds;
    await new Promise((done) => setTimeout(done, seconds * 1000));
  }
}

/** A reused pooled connection the other side had already closed: reset, or closed before any answer. */
function isStaleConnection(error: unknown): boolean {
  const code = (error as { cause?: { code?: string } } | undefined)?.cause?.code;
  return code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE';
}

export function describeFetchError(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return `no answer within ${timeoutMs} ms`;
  const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  if (cause?.code) return `${cause.code}${cause.message ? ` (${cause.message})` : ''}`;
  return error instanceof Error ? error.message : String(error);
}
