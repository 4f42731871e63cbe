// The operator console: server-rendered pages for an organisation's members under /console, beside the API (not
// under /api/v1: it has no key, no JSON and no spec). Sign-in with an e-mail and a password, a session cookie
// (HttpOnly, SameSite=Strict, Secure unless on this machine), a CSRF token in every form, no script. Every change a
// member makes through it is written to the organisation's API log under `member:<id>`, as a key's calls are.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { newId } from '../platform/ids.js';
import { html, type Html } from './html.js';
import { CONSOLE_PATH, STYLESHEET } from './layout.js';
import { endSession, LOCK_MS, resumeSession, sameToken, signIn } from './sessions.js';
import {
  cookies,
  recordAction,
  refuse,
  sendPage,
  sessionOf,
  SESSION_COOKIE,
  setCookie,
  SIGN_IN_COOKIE,
  type ConsoleDeps,
} from './context.js';
import { dmsRoutes } from './pages/dms.js';
import { notificationRoutes, unreadCount } from './pages/notifications.js';
import { keyRoutes } from './pages/keys.js';
import { postingRoutes } from './pages/postings.js';
import { apiLogRoutes } from './pages/api-log.js';
import { reconciliationRoutes } from './pages/reconciliation.js';
import { webhookRoutes } from './pages/webhooks.js';
import { tripRoutes } from './pages/trips.js';
import { memberRoutes } from './pages/members.js';

function signInForm(csrf: string, values: { email?: string; organization?: string }, message: Html | null): Html {
  return html`${message}
<form method="post" action="${CONSOLE_PATH}/sign-in">
<input type="hidden" name="_csrf" value="${csrf}">
<p><label for="email">E-mail</label><br><input id="email" name="email" type="email" autocomplete="username" required value="${values.email ?? ''}"></p>
<p><label for="password">Password</label><br><input id="password" name="password" type="password" autocomplete="current-password" required></p>
<p><label for="organization">Organisation ID <span class="muted">(only if your e-mail belongs to several organisations)</span></label><br><input id="organization" name="organization" value="${values.organization ?? ''}"></p>
<p><button type="submit">Sign in</button></p>
</form>`;
}

export function consoleApp(deps: ConsoleDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');
  app.set('trust proxy', deps.trustProxy);
  const router = express.Router();

  router.use((_req, res, next) => {
    res.locals.started = process.hrtime.bigint();
    res.locals.requestId = newId('req');
    res.set({
      'x-request-id': res.locals.requestId as string,
      // No script, no frame, no other origin; forms post only here.
      'content-security-policy':
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'same-origin',
      'cache-control': 'no-store',
    });
    next();
  });
  router.use(express.urlencoded({ extended: false, limit: '32kb', parameterLimit: 50 }));

  router.get('/style.css', (_req, res) => {
    res.set('cache-control', 'public, max-age=3600').type('text/css; charset=utf-8').send(STYLESHEET);
  });

  router.get('/sign-in', (req, res) => {
    const csrf = randomBytes(24).toString('base64url');
    setCookie(req, res, SIGN_IN_COOKIE, csrf, 3600);
    const message =
      req.query.ended === 'idle'
        ? html`<p class="notice" role="status">Your session ended. Sign in again.</p>`
        : req.query.ended === 'out'
          ? html`<p class="notice" role="status">You are signed out.</p>`
          : null;
    sendPage(res, 'Sign in', signInForm(csrf, {}, message));
  });

  router.post('/sign-in', async (req, res, next) => {
    try {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const expected = cookies(req).get(SIGN_IN_COOKIE);
      if (!expected || !sameToken(body._csrf, expected)) {
        refuse(
          res,
          403,
          'Sign in',
          'The form has expired or did not come from this console. Open the sign-in page again.',
        );
        return;
      }
      const email = typeof body.email === 'string' ? body.email.slice(0, 254) : '';
      const password = typeof body.password === 'string' ? body.password : '';
      const organization =
        typeof body.organization === 'string' && body.organization.trim() !== ''
          ? body.organization.trim().slice(0, 100)
          : undefined;
      const result = await signIn(deps.db, { email, password, organizationId: organization });
      if (result.kind !== 'signed-in') {
        const message =
          result.kind === 'locked'
            ? `Too many failed sign-ins: this account is locked for ${LOCK_MS / 60000} minutes after the last one. Try again later.`
            : result.kind === 'ambiguous'
              ? "This e-mail belongs to several organisations: give the organisation's ID as well."
              : 'The e-mail or the password is wrong.';
        sendPage(
          res,
          'Sign in',
          signInForm(expected, { email, organization }, html`<p class="error" role="alert">${message}</p>`),
          result.kind === 'locked' ? 429 : 401,
        );
        return;
      }
      setCookie(req, res, SIGN_IN_COOKIE, '', 0);
      setCookie(req, res, SESSION_COOKIE, result.token, null);
      res.locals.session = result.session;
      recordAction(deps, req, res, 303);
      res.redirect(303, `${CONSOLE_PATH}/dms`);
    } catch (error) {
      next(error);
    }
  });

  // Everything below needs a live session; every POST below needs the session's CSRF token.
  router.use(async (req, res, next) => {
    try {
      const token = cookies(req).get(SESSION_COOKIE);
      const session = token ? await resumeSession(deps.db, token) : null;
      if (!session) {
        if (token) setCookie(req, res, SESSION_COOKIE, '', 0);
        if (req.method === 'GET') res.redirect(303, `${CONSOLE_PATH}/sign-in${token ? '?ended=idle' : ''}`);
        else refuse(res, 401, 'Signed out', 'You are not signed in (or your session ended). Sign in again.');
        return;
      }
      res.locals.session = session;
      if (
        req.method === 'POST' &&
        !sameToken((req.body as Record<string, unknown> | undefined)?._csrf, session.csrfToken)
      ) {
        refuse(
          res,
          403,
          'Refused',
          'The form did not come from this session of the console (its security token is missing or old). Open the page again and repeat.',
        );
        return;
      }
      res.locals.unread = await unreadCount(deps.db, session);
      next();
    } catch (error) {
      next(error);
    }
  });

  router.get('/', (_req, res) => res.redirect(303, `${CONSOLE_PATH}/dms`));
  router.post('/sign-out', async (req, res, next) => {
    try {
      recordAction(deps, req, res, 303);
      await endSession(deps.db, sessionOf(res));
      setCookie(req, res, SESSION_COOKIE, '', 0);
      res.redirect(303, `${CONSOLE_PATH}/sign-in?ended=out`);
    } catch (error) {
      next(error);
    }
  });

  router.use(dmsRoutes(deps));
  router.use(notificationRoutes(deps));
  router.use(keyRoutes(deps));
  router.use(reconciliationRoutes(deps));
  router.use(tripRoutes(deps));
  router.use(postingRoutes(deps));
  router.use(apiLogRoutes(deps));
  router.use(webhookRoutes(deps));
  router.use(memberRoutes(deps));

  router.use((_req, res) => refuse(res, 404, 'Not found', 'There is no such page in the console.'));
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  router.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    // A form the body parser refused (too large, too many fields, malformed): the client's, said as such.
    const status = (error as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      if (!res.headersSent)
        refuse(
          res,
          status,
          'Refused',
          'The form could not be read (too large or malformed). Open the page again and repeat.',
        );
      return;
    }
    deps.logger.error({ err: error }, 'console request failed');
    if (!res.headersSent)
      refuse(
        res,
        500,
        'Something went wrong',
        'The console could not do that. Nothing was changed unless the page says so; try again, and tell your administrator if it repeats.',
      );
  });

  app.use(CONSOLE_PATH, router);
  return app;
}

/** The service's request handler with the console in front: /console and below go to the console, the rest to the API. */
export function withConsole(
  api: (req: IncomingMessage, res: ServerResponse) => void,
  deps: ConsoleDeps,
): (req: IncomingMessage, res: ServerResponse) => void {
  const app = consoleApp(deps);
  return (req, res) => {
    const url = req.url ?? '';
    if (url === CONSOLE_PATH || url.startsWith(`${CONSOLE_PATH}/`) || url.startsWith(`${CONSOLE_PATH}?`)) app(req, res);
    else api(req, res);
  };
}
