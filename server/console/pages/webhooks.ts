// Webhook endpoints in the console (the owner and the members who manage settings): each endpoint with its events,
// state and failures, its delivery log (status, attempts, last answer, duration); adding one (its signing secret
// shown once, on the answer to the form), rotating its secret (the new one shown once), turning it off and on again
// (its failed deliveries sent again), sending it a webhook.test, and resending a delivery. Through the webhook
// module's own functions (what `admin webhook add|rotate-secret|disable|enable|test|resend` call), each read scoped
// to the member's organisation first; the ones that make deliveries due send their jobs in the same transaction
// (the composition gives the console the job system's sender, as the CLI opens one), and a worker sends them.
import { Router, type Request, type Response } from 'express';
import {
  addEndpoint,
  disableEndpoint,
  enableEndpoint,
  listDeliveries,
  listEndpoints,
  readDelivery,
  readEndpointObject,
  resendDelivery,
  rotateSecret,
  testEndpoint,
  ALL_EVENTS,
  type EndpointSummary,
} from '../../platform/webhooks/endpoints.js';
import { DestinationRefused } from '../../platform/webhooks/destination.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { html, type Html } from '../html.js';
import { CONSOLE_PATH, when } from '../layout.js';
import { sendCsv } from '../csv.js';
import { recordAction, requireManager, sendNotFound, sendPage, sessionOf, type ConsoleDeps } from '../context.js';

const ONCE =
  'Copy it now: it is shown this once and never again (it is stored sealed). Give it to the receiver, which checks the Service-Signature header with it.';
/** How long the old secret keeps signing after a rotation unless the form says otherwise (the CLI's default). */
const DEFAULT_OVERLAP_HOURS = 24;
const NOTICES: Record<string, string> = {
  enabled: 'The endpoint is on again; its failed deliveries are sent again.',
  resent: 'The delivery is sent again (the same event id); the worker sends it within a minute.',
  tested: 'A webhook.test event is queued for this endpoint.',
  disabled: 'The endpoint is off: no event is sent to it until it is turned on again.',
};

const token = (csrf: string) => html`<input type="hidden" name="_csrf" value="${csrf}">`;
const list = (body: Record<string, unknown>, name: string) => {
  const value = body[name];
  return (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter(
    (v): v is string => typeof v === 'string',
  );
};

async function endpointsPage(
  deps: ConsoleDeps,
  req: Request,
  res: Response,
  shown: Html | null,
  status = 200,
  values: { url?: string; events?: string[] } = {},
): Promise<void> {
  const session = sessionOf(res);
  const endpoints = await listEndpoints(deps.db, session.organizationId);
  if (req.method === 'GET' && req.query.format === 'csv') {
    sendCsv(
      res,
      'webhook-endpoints.csv',
      ['id', 'url', 'events', 'enabled', 'disabledReason', 'consecutiveFailures', 'createdAt'],
      endpoints.map((e) => [
        e.id,
        e.url,
        e.events.join(' '),
        e.enabled,
        e.disabledReason,
        e.consecutiveFailures,
        e.createdAt,
      ]),
    );
    return;
  }
  const chosen = new Set(values.events ?? []);
  const types = deps.webhooks.settings.eventTypes;
  sendPage(
    res,
    'Webhook endpoints',
    html`${shown}
<p><a href="${CONSOLE_PATH}/webhooks?format=csv">Download as CSV</a></p>
${
  endpoints.length === 0
    ? html`<p>No webhook endpoints yet.</p>`
    : html`<table>
<thead><tr><th scope="col">Address</th><th scope="col">Events</th><th scope="col">State</th><th scope="col" class="num">Failures in a row</th><th scope="col">Made</th></tr></thead>
<tbody>${endpoints.map((e) => html`<tr><td><a href="${CONSOLE_PATH}/webhooks/${e.id}">${e.url}</a></td><td>${e.events.join(', ')}</td><td${e.enabled ? '' : html` class="state-rejected"`}>${e.enabled ? 'on' : `off: ${e.disabledReason ?? ''}`}</td><td class="num">${e.consecutiveFailures}</td><td class="nowrap">${when(e.createdAt)}</td></tr>`)}</tbody>
</table>`
}
<h2>Add an endpoint</h2>
<form method="post" action="${CONSOLE_PATH}/webhooks">${token(session.csrfToken)}
<p><label for="wh-url">Address (https; private and loopback addresses are refused)</label><br><input id="wh-url" name="url" type="url" required maxlength="2000" size="60" value="${values.url ?? ''}"></p>
<fieldset><legend>Events</legend>
<div><input type="checkbox" id="ev-all" name="event" value="${ALL_EVENTS}"${chosen.has(ALL_EVENTS) ? html` checked` : ''}> <label for="ev-all">Every event (*)</label></div>
${types.map((type) => html`<div><input type="checkbox" id="ev-${type.replace(/\./g, '-')}" name="event" value="${type}"${chosen.has(type) ? html` checked` : ''}> <label for="ev-${type.replace(/\./g, '-')}">${type}</label></div>`)}
</fieldset>
<p><button type="submit">Add the endpoint</button></p>
</form>`,
    status,
  );
}

async function endpointPage(
  deps: ConsoleDeps,
  req: Request,
  res: Response,
  endpoint: EndpointSummary,
  shown: Html | null,
  status = 200,
): Promise<void> {
  const session = sessionOf(res);
  const deliveries = await listDeliveries(
    deps.db,
    endpoint.id,
    req.method === 'GET' && req.query.format === 'csv' ? 1000 : 100,
  );
  if (req.method === 'GET' && req.query.format === 'csv') {
    sendCsv(
      res,
      'webhook-deliveries.csv',
      [
        'id',
        'eventId',
        'eventType',
        'status',
        'attempts',
        'lastResponseCode',
        'lastDurationMs',
        'lastError',
        'createdAt',
        'updatedAt',
      ],
      deliveries.map((d) => [
        d.id,
        d.eventId,
        d.eventType,
        d.status,
        d.attempts,
        d.lastResponseCode,
        d.lastDurationMs,
        d.lastError,
        d.createdAt,
        d.updatedAt,
      ]),
    );
    return;
  }
  const notice =
    typeof req.query.notice === 'string' && NOTICES[req.query.notice]
      ? html`<p class="notice" role="status">${NOTICES[req.query.notice]!}</p>`
      : null;
  const csrf = token(session.csrfToken);
  const action = (path: string) => `${CONSOLE_PATH}/webhooks/${endpoint.id}/${path}`;
  sendPage(
    res,
    `Webhook endpoint ${endpoint.url}`,
    html`${shown ?? notice}
<p>${endpoint.enabled ? 'On.' : `Off since ${when(endpoint.disabledAt)}: ${endpoint.disabledReason ?? ''}.`} Events: ${endpoint.events.join(', ')}. Failures in a row: ${endpoint.consecutiveFailures}.${endpoint.previousSecretExpiresAt ? ` The previous signing secret also signs until ${when(endpoint.previousSecretExpiresAt)}.` : ''}</p>
${
  endpoint.enabled
    ? html`<form class="inline" method="post" action="${action('test')}">${csrf}<button type="submit">Send a test event</button></form>
<form class="inline" method="post" action="${action('disable')}">${csrf}<button type="submit" class="secondary">Turn this endpoint off</button></form>`
    : html`<form method="post" action="${action('enable')}">${csrf}<button type="submit">Turn this endpoint on again and resend its failed deliveries</button></form>`
}
<h2>Signing secret</h2>
<form method="post" action="${action('rotate')}">${csrf}
<p><label for="overlap">Hours the current secret keeps signing beside the new one (0: it stops now)</label><br><input id="overlap" name="overlapHours" type="number" min="0" max="8760" step="1" required value="${DEFAULT_OVERLAP_HOURS}"></p>
<p><button type="submit" class="secondary">Make a new signing secret</button></p>
</form>
<h2>Deliveries</h2>
<p><a href="${CONSOLE_PATH}/webhooks/${endpoint.id}?format=csv">Download as CSV</a></p>
${
  deliveries.length === 0
    ? html`<p>No deliveries yet.</p>`
    : html`<table>
<thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col" class="num">Attempts</th><th scope="col" class="num">Last answer</th><th scope="col" class="num">ms</th><th scope="col">Error</th><th scope="col">Updated</th><th scope="col">Action</th></tr></thead>
<tbody>${deliveries.map((d) => html`<tr><td>${d.eventType}<br><span class="muted">${d.eventId}</span></td><td${d.status === 'failed' ? html` class="state-rejected"` : ''}>${d.status}</td><td class="num">${d.attempts}</td><td class="num">${d.lastResponseCode ?? ''}</td><td class="num">${d.lastDurationMs ?? ''}</td><td>${d.lastError ?? ''}</td><td class="nowrap">${when(d.updatedAt)}</td><td><form class="inline" method="post" action="${action(`deliveries/${d.id}/resend`)}">${csrf}<button type="submit" class="secondary">Resend<span class="vh"> ${d.eventType} ${d.eventId}</span></button></form></td></tr>`)}</tbody>
</table>`
}
<p><a href="${CONSOLE_PATH}/webhooks">All endpoints</a></p>`,
    status,
  );
}

/** The member's organisation's endpoint of the request, or the 404 page (and null). */
async function endpointOf(deps: ConsoleDeps, req: Request, res: Response): Promise<EndpointSummary | null> {
  const endpoint = await readEndpointObject(deps.db, sessionOf(res).organizationId, String(req.params.id));
  if (!endpoint) sendNotFound(res, 'There is no such webhook endpoint in this organisation.');
  return endpoint;
}

export function webhookRoutes(deps: ConsoleDeps): Router {
  const router = Router();
  router.use('/webhooks', requireManager);
  router.get('/webhooks', (req, res, next) => {
    endpointsPage(deps, req, res, null).catch(next);
  });
  router.post('/webhooks', async (req, res, next) => {
    try {
      const session = sessionOf(res);
      const body = req.body as Record<string, unknown>;
      const url = typeof body.url === 'string' ? body.url.trim().slice(0, 2000) : '';
      const events = list(body, 'event');
      if (url === '' || events.length === 0) {
        recordAction(deps, req, res, 422);
        await endpointsPage(
          deps,
          req,
          res,
          html`<p class="error" role="alert">Give the endpoint's address and choose at least one event.</p>`,
          422,
          { url, events },
        );
        return;
      }
      let added: { id: string; secret: string };
      try {
        added = await addEndpoint(deps.db, deps.webhooks.settings, {
          organizationId: session.organizationId,
          url,
          events: events.includes(ALL_EVENTS) ? [ALL_EVENTS] : events,
        });
      } catch (error) {
        // The address (scheme, resolved addresses) or the events refused: the reason said, nothing stored.
        if (!(error instanceof ApiError) && !(error instanceof DestinationRefused)) throw error;
        const why = error instanceof ApiError ? error.detail : error.message;
        recordAction(deps, req, res, 422);
        await endpointsPage(
          deps,
          req,
          res,
          html`<p class="error" role="alert">The endpoint was not added: ${why}</p>`,
          422,
          { url, events },
        );
        return;
      }
      recordAction(deps, req, res, 201);
      const endpoint = (await readEndpointObject(deps.db, session.organizationId, added.id))!;
      await endpointPage(
        deps,
        req,
        res,
        endpoint,
        html`<div class="notice" role="status"><p>The endpoint is added. Its signing secret:</p><p class="secret">${added.secret}</p><p>${ONCE}</p></div>`,
        201,
      );
    } catch (error) {
      next(error);
    }
  });
  router.get('/webhooks/:id', async (req, res, next) => {
    try {
      const endpoint = await endpointOf(deps, req, res);
      if (endpoint) await endpointPage(deps, req, res, endpoint, null);
    } catch (error) {
      next(error);
    }
  });
  router.post('/webhooks/:id/rotate', async (req, res, next) => {
    try {
      const endpoint = await endpointOf(deps, req, res);
      if (!endpoint) return;
      const raw = (req.body as Record<string, unknown>).overlapHours;
      const hours = typeof raw === 'string' && /^\d{1,4}$/.test(raw.trim()) ? Number(raw) : NaN;
      if (!(hours >= 0 && hours <= 8760)) {
        recordAction(deps, req, res, 422);
        await endpointPage(
          deps,
          req,
          res,
          endpoint,
          html`<p class="error" role="alert">Give the hours the current secret keeps signing: a whole number from 0 to 8760.</p>`,
          422,
        );
        return;
      }
      const rotated = await rotateSecret(deps.db, deps.webhooks.settings.secretKey, endpoint.id, hours);
      recordAction(deps, req, res, 200);
      const after = (await readEndpointObject(deps.db, endpoint.organizationId, endpoint.id))!;
      await endpointPage(
        deps,
        req,
        res,
        after,
        html`<div class="notice" role="status"><p>A new signing secret signs from now on${rotated.previousSecretExpiresAt ? `; the previous one also signs until ${when(rotated.previousSecretExpiresAt)}` : '; the previous one no longer signs'}:</p><p class="secret">${rotated.secret}</p><p>${ONCE}</p></div>`,
      );
    } catch (error) {
      next(error);
    }
  });
  router.post('/webhooks/:id/disable', async (req, res, next) => {
    try {
      const session = sessionOf(res);
      const endpoint = await endpointOf(deps, req, res);
      if (!endpoint) return;
      await disableEndpoint(deps.db, endpoint.id, `turned off in the console by ${session.memberName}`);
      recordAction(deps, req, res, 303);
      res.redirect(303, `${CONSOLE_PATH}/webhooks/${endpoint.id}?notice=disabled`);
    } catch (error) {
      next(error);
    }
  });
  router.post('/webhooks/:id/enable', async (req, res, next) => {
    try {
      const endpoint = await endpointOf(deps, req, res);
      if (!endpoint) return;
      await enableEndpoint(deps.db, deps.webhooks.enqueue, endpoint.id);
      recordAction(deps, req, res, 303);
      res.redirect(303, `${CONSOLE_PATH}/webhooks/${endpoint.id}?notice=enabled`);
    } catch (error) {
      next(error);
    }
  });
  router.post('/webhooks/:id/test', async (req, res, next) => {
    try {
      const endpoint = await endpointOf(deps, req, res);
      if (!endpoint) return;
      if (!endpoint.enabled) {
        recordAction(deps, req, res, 409);
        await endpointPage(
          deps,
          req,
          res,
          endpoint,
          html`<p class="error" role="alert">The endpoint is off: turn it on before sending it a test event.</p>`,
          409,
        );
        return;
      }
      await testEndpoint(deps.db, deps.webhooks.enqueue, endpoint.id);
      recordAction(deps, req, res, 303);
      res.redirect(303, `${CONSOLE_PATH}/webhooks/${endpoint.id}?notice=tested`);
    } catch (error) {
      next(error);
    }
  });
  router.post('/webhooks/:id/deliveries/:delivery/resend', async (req, res, next) => {
    try {
      const endpoint = await endpointOf(deps, req, res);
      if (!endpoint) return;
      const delivery = await readDelivery(deps.db, endpoint.organizationId, endpoint.id, String(req.params.delivery));
      if (!delivery) {
        sendNotFound(res, 'There is no such delivery of this endpoint.');
        return;
      }
      await resendDelivery(deps.db, deps.webhooks.enqueue, delivery.id);
      recordAction(deps, req, res, 303);
      res.redirect(303, `${CONSOLE_PATH}/webhooks/${endpoint.id}?notice=resent`);
    } catch (error) {
      next(error);
    }
  });
  return router;
}
