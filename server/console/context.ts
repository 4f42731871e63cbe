// What every console page shares: the dependencies it is given, the signed-in member of a request, the page and
// refusal answers, the role check, and the record of a member's change in the organisation's API log.
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import type { Db } from '../platform/database/transaction.js';
import type { ApiLogWriter } from '../platform/http/api-log.js';
import type { Environment } from '../platform/config.js';
import type { EnqueueDeliveries } from '../platform/webhooks/types.js';
import type { EndpointSettings } from '../platform/webhooks/endpoints.js';
import type { ConnectorSettings } from '../connectors/connections.js';
import { newId } from '../platform/ids.js';
import { html, type Html } from './html.js';
import { CONSOLE_PATH, page } from './layout.js';
import type { ConsoleSession } from './sessions.js';
import { manages } from './access.js';

export interface ConsoleDeps {
  db: Db;
  apiLog: ApiLogWriter;
  logger: Logger;
  environment: Environment;
  /** Express's `trust proxy`, as the API's (decides the client's address and whether the request came over HTTPS). */
  trustProxy: string | false;
  /**
   * What the webhook functions need, given by the composition as the CLI's `admin webhook` gets them: the destination
   * rules, the key secrets are sealed with and the event types (add), and the job system's sender of delivery jobs
   * (enable, resend, test): the rows and their jobs are written in one transaction, a worker sends them.
   */
  webhooks: { settings: EndpointSettings; enqueue: EnqueueDeliveries };
  /** How this process reaches the external systems (the connections' sealing key, its simulators' URL), as the posting jobs do. */
  connectors: ConnectorSettings;
}

export const SESSION_COOKIE = 'console_session';
/** The sign-in form's CSRF token before there is a session (double submit: the cookie and the form must agree). */
export const SIGN_IN_COOKIE = 'console_sign_in';

export interface ConsoleLocals {
  session: ConsoleSession;
  unread: number;
}

export const sessionOf = (res: Response) => (res.locals as ConsoleLocals).session;

/** The console's HTML page with the member's header; status 200 unless given. */
export function sendPage(res: Response, title: string, body: Html, status = 200): void {
  const locals = res.locals as Partial<ConsoleLocals>;
  res
    .status(status)
    .type('text/html; charset=utf-8')
    .send(page({ title, session: locals.session ?? null, unread: locals.unread, body }).value);
}

/** The console's 404: the page's frame with one sentence saying what is not there (and, optionally, where to go). */
export function sendNotFound(res: Response, sentence: string, after: Html | string = ''): void {
  sendPage(res, 'Not found', html`<p class="error" role="alert">${sentence}</p>${after}`, 404);
}

export function cookies(req: Request): Map<string, string> {
  const found = new Map<string, string>();
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0) found.set(part.slice(0, at).trim(), decodeURIComponent(part.slice(at + 1).trim()));
  }
  return found;
}

/** Secure unless the browser is on this machine (http://localhost in development and the tests). */
function secureCookie(req: Request): boolean {
  return !['localhost', '127.0.0.1', '::1', '[::1]'].includes(req.hostname);
}

export function setCookie(
  req: Request,
  res: Response,
  name: string,
  value: string,
  maxAgeSeconds: number | null,
): void {
  const parts = [`${name}=${encodeURIComponent(value)}`, `Path=${CONSOLE_PATH}`, 'HttpOnly', 'SameSite=Strict'];
  if (secureCookie(req)) parts.push('Secure');
  if (maxAgeSeconds !== null) parts.push(`Max-Age=${maxAgeSeconds}`);
  res.append('set-cookie', parts.join('; '));
}

/** Records a member's change in the organisation's API log (`member:<id>` where a key's prefix would be). */
export function recordAction(deps: ConsoleDeps, req: Request, res: Response, status: number): void {
  const session = sessionOf(res);
  deps.apiLog.add({
    organizationId: session.organizationId,
    id: newId('log'),
    time: new Date().toISOString(),
    keyPrefix: `member:${session.memberId}`,
    method: req.method,
    path: req.originalUrl,
    status,
    durationMs: Number(process.hrtime.bigint() - (res.locals.started as bigint)) / 1e6,
    requestId: res.locals.requestId as string,
    idempotencyKey: null,
    requestBody: null,
    responseBody: null,
  });
}

export function refuse(res: Response, status: number, title: string, message: string): void {
  sendPage(
    res,
    title,
    html`<p class="error" role="alert">${message}</p><p><a href="${CONSOLE_PATH}/dms">Back to the console</a></p>`,
    status,
  );
}

/** Only the owner and the members who manage settings get past this (403 page otherwise). */
export function requireManager(_req: Request, res: Response, next: NextFunction): void {
  if (manages(sessionOf(res))) next();
  else
    refuse(res, 403, 'Not allowed', "Only the organisation's owner and the members who manage settings may do this.");
}
