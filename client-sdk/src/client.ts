// createErpClient: openapi-fetch over the generated types, with the bearer key, the retry policy of the spec
// (retry.ts) and errors thrown as ErpApiError, so a resolved call always carries its data.
import createClient, { defaultBodySerializer } from 'openapi-fetch';
import { ErpApiError } from './errors.js';
import { retryingFetch, type Fetch } from './retry.js';
import type { ErpClient, ErpPaths } from './typed-paths.js';

export interface ErpClientOptions {
  /** The API key (`..._test_...` for a sandbox, `..._live_...` for production). Not needed for /health. */
  apiKey?: string;
  /**
   * The deployment's base address, ending in /api/v1 (for example http://localhost:3000/api/v1). Required: there
   * is no hosted address to default to; each distributor runs its own deployment and tells you its address.
   */
  baseUrl: string;
  /** A fetch implementation (defaults to the global one). Called once per attempt. */
  fetch?: Fetch;
  /** Retries after the first attempt, on transport failures, 409 idempotency_in_progress, 429 and 5xx. Default 3. */
  maxRetries?: number;
  /** Time budget of one call from its start, attempts and waits included: no attempt runs past it, and a retry whose wait would end at or past it is not made. Default 60 000. */
  maxRetryTimeMs?: number;
  /** Limit of one attempt, until its whole answer (headers and body) has arrived; a timed-out attempt is retried. Default 30 000. */
  timeoutMs?: number;
}

export const DEFAULT_RETRY_POLICY = { maxRetries: 3, maxRetryTimeMs: 60_000, timeoutMs: 30_000 } as const;

export function createErpClient(options: ErpClientOptions): ErpClient {
  const baseUrl = checkedBaseUrl(options?.baseUrl);
  // Resolved per attempt, so a fetch installed on globalThis after the client was made is still used.
  const send: Fetch = options.fetch ?? ((request) => globalThis.fetch(request));
  const client = createClient<ErpPaths>({
    baseUrl,
    bodySerializer: serializeBody,
    fetch: retryingFetch(send, {
      maxRetries: options.maxRetries ?? DEFAULT_RETRY_POLICY.maxRetries,
      maxRetryTimeMs: options.maxRetryTimeMs ?? DEFAULT_RETRY_POLICY.maxRetryTimeMs,
      timeoutMs: options.timeoutMs ?? DEFAULT_RETRY_POLICY.timeoutMs,
    }),
  });
  if (options.apiKey) {
    const authorization = `Bearer ${options.apiKey}`;
    client.use({
      onRequest({ request }) {
        request.headers.set('Authorization', authorization);
        return request;
      },
    });
  }

  type Call = (
    url: string,
    init?: Record<string, unknown>,
  ) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
  const settled =
    (call: Call): Call =>
    async (url, init) => {
      const result = await call(url, init);
      if (!result.response.ok) throw new ErpApiError(result.response, result.error);
      return result;
    };
  const methods = client as unknown as Record<'GET' | 'PUT' | 'POST' | 'DELETE' | 'PATCH' | 'HEAD' | 'OPTIONS', Call>;
  return {
    GET: settled(methods.GET),
    PUT: settled(methods.PUT),
    POST: settled(methods.POST),
    DELETE: settled(methods.DELETE),
    PATCH: settled(methods.PATCH),
    HEAD: settled(methods.HEAD),
    OPTIONS: settled(methods.OPTIONS),
    use: client.use,
    eject: client.eject,
  } as unknown as ErpClient;
}

/**
 * A request body as openapi-fetch hands it over, with the request's headers. A body that is already text or bytes
 * under a Content-Type that is not JSON (a DMS XML file as application/xml) is the payload itself and goes out
 * as it is; the default serializer would send a string as a JSON string, quotes and escapes included, which no
 * XML parser reads. Everything else (JSON, form data) is openapi-fetch's default.
 */
function serializeBody(body: unknown, headers?: Headers): unknown {
  const contentType = headers?.get('Content-Type');
  const raw =
    typeof body === 'string' || body instanceof Uint8Array || body instanceof ArrayBuffer || body instanceof Blob;
  if (raw && contentType && !/^application\/(?:[\w.+-]+\+)?json\b/i.test(contentType.trim())) return body;
  return (defaultBodySerializer as (body: unknown, headers?: Headers) => unknown)(body, headers);
}

/**
 * The base address as given, once it is an absolute http(s) URL. Checked here, at construction, because a missing
 * or relative one would otherwise surface later as a confusing fetch failure on the first call (from JavaScript,
 * or from a configuration value that was not set).
 */
function checkedBaseUrl(baseUrl: unknown): string {
  const hint =
    "createErpClient needs baseUrl, the deployment's address ending in /api/v1 (for example http://localhost:3000/api/v1)";
  if (typeof baseUrl !== 'string' || baseUrl === '') throw new TypeError(hint);
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError(`${hint}; got ${JSON.stringify(baseUrl)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TypeError(`${hint}; got ${JSON.stringify(baseUrl)}`);
  return baseUrl;
}
