// A real HTTP receiver for webhook tests: records every request (headers and raw body) and answers as the test
// says (status, delay). Signatures are checked with verifySignature below, written from the spec alone (not
// with the service's signing code), the way a partner's Stripe-style verifier would.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
  at: number;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Resolves when at least `count` requests have arrived (rejects after timeoutMs). */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(
  answer: (index: number, request: Received) => { status: number; delayMs?: number } = () => ({ status: 200 }),
): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const request: Received = { headers: req.headers, raw, body, at: Date.now() };
      const index = received.push(request) - 1;
      for (const waiter of waiters.filter((w) => received.length >= w.count)) waiter.resolve();
      const { status, delayMs = 0 } = answer(index, request);
      setTimeout(() => {
        if (!res.destroyed) res.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    waitFor(count, timeoutMs = 15_000) {
      if (received.length >= count) return Promise.resolve(received);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${received.length} of ${count} requests within ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(received);
          },
        });
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The spec's verification: split on commas, t and every v1; HMAC-SHA256 of `<t>.<raw body>`; any v1 matches; |now - t| <= 300 s. */
export function verifySignature(
  header: string | undefined,
  raw: string,
  secret: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): { valid: boolean; matches: number; signatures: number } {
  if (!header) return { valid: false, matches: 0, signatures: 0 };
  let t: string | undefined;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const [key, value] = [part.slice(0, part.indexOf('=')), part.slice(part.indexOf('=') + 1)];
    if (key === 't') t = value;
    if (key === 'v1') v1.push(value);
  }
  if (!t || !/^\d+$/.test(t) || Math.abs(nowSeconds - Number(t)) > 300)
    return { valid: false, matches: 0, signatures: v1.length };
  const expected = Buffer.from(
    createHmac('sha256', Buffer.from(secret, 'utf8'))
      .update(Buffer.from(`${t}.${raw}`, 'utf8'))
      .digest('hex'),
    'utf8',
  );
  const matches = v1.filter(
    (candidate) => candidate.length === expected.length && timingSafeEqual(Buffer.from(candidate, 'utf8'), expected),
  ).length;
  return { valid: matches > 0, matches, signatures: v1.length };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until check returns a truthy value (or fails after timeoutMs). */
export async function eventually<T>(
  check: () => Promise<T | null | undefined | false>,
  timeoutMs = 15_000,
  what = 'the condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not hold within ${timeoutMs} ms`);
    await sleep(100);
  }
}
