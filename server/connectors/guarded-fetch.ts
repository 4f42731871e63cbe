// The `fetch` the accounting and fiscal clients call their systems with: the webhook destination rules applied to a
// connection's base URL at every call (server/platform/webhooks/destination.ts: https, no credentials in the URL, no
// private, link-local or other inside address, loopback only for the simulators or with WEBHOOK_ALLOW_LOOPBACK). The
// name is resolved once, every address checked, and the connection made to exactly the address checked, so DNS
// rebinding cannot turn a public name into an inside address between the check and the call. A redirect is never
// followed (node:http never does): the 3xx answer is handed to the client, which fails the call saying so. An
// operator sets the base URL, but a connection to an inside address (the cloud's metadata service, the database) or
// a redirect to one would otherwise send the company's token and documents there.
// See docs/decisions/0026-installation-secrets-public-base-url-connector-destinations.md.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import {
  resolveDestination,
  type DestinationPolicy,
  type DestinationRefused,
} from '../platform/webhooks/destination.js';
import type { ConnectorFailure } from './types.js';

/** More than any answer of QuickBooks or EFRIS the clients read; a larger one is cut off and fails the call. */
export const CONNECTOR_RESPONSE_CAP_BYTES = 16 * 1024 * 1024;

/** Statuses whose Response may carry no body. */
const NULL_BODY = new Set([101, 204, 205, 304]);

export function guardedFetch(policy: DestinationPolicy): typeof fetch {
  return async (input, init = {}) => {
    const destination = await resolveDestination(String(input instanceof Request ? input.url : input), policy);
    const { url } = destination;
    const pinned: LookupFunction = (_hostname, options, callback) => {
      const cb = callback as (...args: unknown[]) => void;
      if ((options as { all?: boolean }).all) cb(null, [{ address: destination.address, family: destination.family }]);
      else cb(null, destination.address, destination.family);
    };
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    const body =
      typeof init.body === 'string'
        ? init.body
        : init.body == null
          ? undefined
          : (() => {
              throw new Error('guardedFetch sends string bodies only');
            })();
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const transport = url.protocol === 'https:' ? https : http;
    return new Promise<Response>((resolve, reject) => {
      const request = transport.request(
        {
          protocol: url.protocol,
          hostname: url.hostname.replace(/^\[|\]$/g, ''),
          port: url.port || undefined,
          path: `${url.pathname}${url.search}`,
          method: init.method ?? 'GET',
          headers,
          lookup: pinned,
          agent: false, // no pooled socket from an earlier check: every call connects to the address just checked
          signal: init.signal ?? undefined,
        },
        (response) => {
          const chunks: Buffer[] = [];
          let read = 0;
          response.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > CONNECTOR_RESPONSE_CAP_BYTES) {
              response.destroy();
              reject(new Error(`the answer exceeded ${CONNECTOR_RESPONSE_CAP_BYTES} bytes`));
              return;
            }
            chunks.push(chunk);
          });
          response.on('error', reject);
          response.on('end', () => {
            const status = response.statusCode ?? 0;
            const answerHeaders = new Headers();
            for (const [name, value] of Object.entries(response.headers)) {
              if (value === undefined) continue;
              for (const one of Array.isArray(value) ? value : [value]) answerHeaders.append(name, one);
            }
            try {
              resolve(
                new Response(NULL_BODY.has(status) ? null : Buffer.concat(chunks), { status, headers: answerHeaders }),
              );
            } catch (error) {
              reject(error); // a status outside 200-599: not an answer the clients understand
            }
          });
        },
      );
      request.on('error', (error: Error) =>
        reject(error.name === 'AbortError' && init.signal?.reason instanceof Error ? init.signal.reason : error),
      );
      request.end(body);
    });
  };
}

/**
 * The connection's base URL breaks the destination rules (an inside address, plain http, credentials in the URL): refused
 * for good, as the same URL would be again; the operator corrects the connection and retries the postings.
 */
export function refusedDestination(system: string, error: DestinationRefused): ConnectorFailure {
  return {
    kind: 'rejected',
    code: 'destination_refused',
    message: `${system} was not called: the connection's base URL is refused (${error.message}). Correct it with \`admin connector set --base-url\`.`,
  };
}

/** A redirect is never followed: the call fails naming where it pointed, for the operator to correct the base URL. */
export function redirected(system: string, response: globalThis.Response): ConnectorFailure {
  const location = response.headers.get('location');
  return {
    kind: 'rejected',
    code: 'redirect',
    message: `${system} answered HTTP ${response.status} redirecting to ${location ?? '(no Location)'}; redirects are not followed. Correct the connection's base URL with \`admin connector set --base-url\`.`,
  };
}
