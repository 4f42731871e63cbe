// One POST of a delivery, to the address the destination guard checked: the connection's `lookup` returns that
// address only, so a name cannot resolve elsewhere between the check and the connection (DNS rebinding).
// Redirects are not followed (node:http never does; a 3xx is a failure), the whole exchange has a deadline, and
// at most a capped amount of the response body is read before the socket is dropped.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { assertOutsideTransaction } from '../database/transaction.js';
import type { Destination } from './destination.js';

export const DELIVERY_TIMEOUT_MS = 10_000;
export const RESPONSE_BODY_CAP_BYTES = 64 * 1024;

export interface SendOutcome {
  ok: boolean;
  /** The HTTP status, or null when no response came (refused, timed out, connection error). */
  status: number | null;
  durationMs: number;
  /** Why it failed, for the delivery log (never holds the request's headers). */
  error: string | null;
}

export function postJson(
  destination: Destination,
  body: string,
  headers: Record<string, string>,
  timeoutMs = DELIVERY_TIMEOUT_MS,
): Promise<SendOutcome> {
  // A send inside a transaction would be repeated by a deadlock retry and could not be taken back by a rollback.
  assertOutsideTransaction('a webhook delivery');
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 10) / 10;
  const pinned: LookupFunction = (_hostname, options, callback) => {
    const cb = callback as (...args: unknown[]) => void;
    if ((options as { all?: boolean }).all) cb(null, [{ address: destination.address, family: destination.family }]);
    else cb(null, destination.address, destination.family);
  };
  const { url } = destination;
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<SendOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: Omit<SendOutcome, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve({ ...outcome, durationMs: elapsed() });
    };
    const request = transport.request(
      {
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'erp-integration-webhooks/1',
          ...headers,
        },
        lookup: pinned,
        agent: false, // no pooled socket from an earlier check: every delivery connects to the address just checked
      },
      (response) => {
        const status = response.statusCode ?? 0;
        let read = 0;
        const done = () => {
          finish(
            status >= 200 && status < 300
              ? { ok: true, status, error: null }
              : { ok: false, status, error: `HTTP ${status}` },
          );
          response.destroy();
        };
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read >= RESPONSE_BODY_CAP_BYTES) done(); // enough: the body is not used, only drained politely
        });
        response.on('end', done);
        response.on('error', done);
        response.on('close', done);
      },
    );
    const deadline = setTimeout(() => {
      finish({ ok: false, status: null, error: `no answer within ${timeoutMs / 1000} s` });
      request.destroy();
    }, timeoutMs);
    request.on('error', (error: Error & { code?: string }) =>
      finish({ ok: false, status: null, error: error.code ?? error.message }),
    );
    request.end(body);
  });
}
