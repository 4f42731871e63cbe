// Real network pieces for the SDK tests: a fetch that records every attempt, a TCP proxy that loses the first
// answer, and a bare HTTP server that stands in for a failing deployment (503s, hangs, other answers).
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, createServer as createTcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface Attempt {
  method: string;
  url: string;
  idempotencyKey: string | null;
  body: string;
  at: number;
  /** The status answered, or the failure's name when no answer came. */
  outcome?: number | string;
}

/** The global fetch, recording each call the SDK makes (one per attempt). */
export function countingFetch(onResponse?: (response: Response, attempt: Attempt) => Promise<void> | void) {
  const attempts: Attempt[] = [];
  const fetch = async (request: Request): Promise<Response> => {
    const attempt: Attempt = {
      method: request.method,
      url: request.url,
      idempotencyKey: request.headers.get('Idempotency-Key'),
      body: await request.clone().text(),
      at: Date.now(),
    };
    attempts.push(attempt);
    try {
      const response = await globalThis.fetch(request);
      attempt.outcome = response.status;
      await onResponse?.(response, attempt);
      return response;
    } catch (error) {
      attempt.outcome = (error as Error).name;
      throw error;
    }
  };
  return { fetch, attempts };
}

export interface LossyProxy {
  /** Base address of the proxy (http://127.0.0.1:port). */
  url: string;
  connections: () => number;
  close(): Promise<void>;
}

/**
 * A TCP proxy to `target` that, on its first connection, forwards the request but drops the connection as soon
 * as the answer starts to come back: the service did the work, the client never hears of it.
 */
export async function lossyProxy(target: string): Promise<LossyProxy> {
  const { hostname, port } = new URL(target);
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = createTcpServer((client) => {
    const index = ++connections;
    const upstream = connect(Number(port), hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    if (index === 1) upstream.once('data', () => client.destroy());
    else upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface StandIn {
  /** Base address to give the SDK (ends in /api/v1). */
  baseUrl: string;
  requests: IncomingMessage[];
  close(): Promise<void>;
}

/** A bare HTTP server answering every request with `answer` (which may also never answer). */
export async function standIn(
  answer: (request: IncomingMessage, response: ServerResponse, index: number) => void,
): Promise<StandIn> {
  const requests: IncomingMessage[] = [];
  const server = createHttpServer((request, response) => {
    const index = requests.push(request) - 1;
    request.resume();
    request.on('end', () => answer(request, response, index));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A problem document answer, as the service would send it. */
export function problem(
  response: ServerResponse,
  status: number,
  code: string,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, {
    'content-type': 'application/problem+json',
    'x-request-id': `standin-${code}`,
    ...headers,
  });
  response.end(
    JSON.stringify({
      type: `/api/v1/errors/${code}`,
      title: code,
      status,
      code,
      detail: `Stand-in ${code}.`,
      requestId: `standin-${code}`,
    }),
  );
}

/**
 * How `promise` ended, or 'pending' when it had not after `ms`: a call that hangs becomes a failed assertion
 * instead of a test that times out. Not a speed check: `ms` is far above what the rule under test allows.
 */
export async function settledWithin<T>(
  promise: Promise<T>,
  ms: number,
): Promise<{ value: T } | { error: unknown } | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<'pending'>((resolve) => {
    timer = setTimeout(() => resolve('pending'), ms);
  });
  try {
    return await Promise.race([
      promise.then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
      pending,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Sends 200 headers and the start of a JSON body, then nothing more: a server that stalls mid-answer. */
export function stallBody(response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
  response.write('{"status":');
}
