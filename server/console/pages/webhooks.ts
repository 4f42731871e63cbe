// Webhook endpoints in the console (the owner and the members who manage settings): each endpoint with its events,
// state and failures, its delivery log (status, attempts, last answer, duration), and turning one off. Through the
// webhook module's own functions (what `admin webhook list|deliveries|disable` call), each read scoped to the
// member's organisation first. Adding, rotating, re-enabling and resending are not here yet: they send jobs, and the
// console is not given the job system.
import { Router, type Request, type Response } from 'express';
import { disableEndpoint, listDeliveries, listEndpoints, readEndpointObject } from '../../platform/webhooks/endpoints.js';
import { html } from '../html.js';
import { CONSOLE_PATH, when } from '../layout.js';
import { sendCsv } from '../csv.js';
import { recordAction, requireManager, sendNotFound, sendPage, sessionOf, type ConsoleDeps } from '../context.js';

export function webhookRoutes(deps: ConsoleDeps): Router {
  const router = Router();
  router.use('/webhooks', requireManager);
  router.get('/webhooks', async (req: Request, res: Response, next) => {
    try {
      const session = sessionOf(res);
      const endpoints = await listEndpoints(deps.db, session.organizationId);
      if (req.query.format === 'csv') {
        sendCsv(res, 'webhook-endpoints.csv', ['id', 'url', 'events', 'enabled', 'disabledReason', 'consecutiveFailures', 'createdAt'],
          endpoints.map((e) => [e.id, e.url, e.events.join(' '), e.enabled, e.disabledReason, e.consecutiveFailures, e.createdAt]));
        return;
      }
      sendPage(res, 'Webhook endpoints', html`
<p><a href="${CONSOLE_PATH}/webhooks?format=csv">Download as CSV</a></p>
${endpoints.length === 0 ? html`<p>No webhook endpoints (the operator adds them: <code>admin webhook add</code>).</p>` : html`<table>
<thead><tr><th scope="col">Address</th><th scope="col">Events</th><th scope="col">State</th><th scope="col" class="num">Failures in a row</th><th scope="col">Made</th></tr></thead>
<tbody>${endpoints.map((e) => html`<tr><td><a href="${CONSOLE_PATH}/webhooks/${e.id}">${e.url}</a></td><td>${e.events.join(', ')}</td><td${e.enabled ? '' : html` class="state-rejected"`}>${e.enabled ? 'on' : `off: ${e.disabledReason ?? ''}`}</td><td class="num">${e.consecutiveFailures}</td><td class="nowrap">${when(e.createdAt)}</td></tr>`)}</tbody>
</table>`}`);
    } catch (error) {
      next(error);
    }
  });
  router.get('/webhooks/:id', async (req: Request, res: Response, next) => {
    try {
      const session = sessionOf(res);
      const endpoint = await readEndpointObject(deps.db, session.organizationId, String(req.params.id));
      if (!endpoint) {
        sendNotFound(res, `There is no such webhook endpoint in this organisation.`);
        return;
      }
      const deliveries = await listDeliveries(deps.db, endpoint.id, req.query.format === 'csv' ? 1000 : 100);
      if (req.query.format === 'csv') {
        sendCsv(res, 'webhook-deliveries.csv', ['id', 'eventId', 'eventType', 'status', 'attempts', 'lastResponseCode', 'lastDurationMs', 'lastError', 'createdAt', 'updatedAt'],
          deliveries.map((d) => [d.id, d.eventId, d.eventType, d.status, d.attempts, d.lastResponseCode, d.lastDurationMs, d.lastError, d.createdAt, d.updatedAt]));
        return;
      }
      sendPage(res, `Webhook endpoint ${endpoint.url}`, html`
<p>${endpoint.enabled ? 'On.' : `Off since ${when(endpoint.disabledAt)}: ${endpoint.disabledReason ?? ''}.`} Events: ${endpoint.events.join(', ')}. Failures in a row: ${endpoint.consecutiveFailures}.</p>
${endpoint.enabled ? html`<form method="post" action="${CONSOLE_PATH}/webhooks/${endpoint.id}/disable"><input type="hidden" name="_csrf" value="${session.csrfToken}"><button type="submit" class="secondary">Turn this endpoint off</button></form>` : ''}
<h2>Deliveries</h2>
<p><a href="${CONSOLE_PATH}/webhooks/${endpoint.id}?format=csv">Download as CSV</a></p>
${deliveries.length === 0 ? html`<p>No deliveries yet.</p>` : html`<table>
<thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col" class="num">Attempts</th><th scope="col" class="num">Last answer</th><th scope="col" class="num">ms</th><th scope="col">Error</th><th scope="col">Updated</th></tr></thead>
<tbody>${deliveries.map((d) => html`<tr><td>${d.eventType}<br><span class="muted">${d.eventId}</span></td><td${d.status === 'failed' ? html` class="state-rejected"` : ''}>${d.status}</td><td class="num">${d.attempts}</td><td class="num">${d.lastResponseCode ?? ''}</td><td class="num">${d.lastDurationMs ?? ''}</td><td>${d.lastError ?? ''}</td><td class="nowrap">${when(d.updatedAt)}</td></tr>`)}</tbody>
</table>`}
<p><a href="${CONSOLE_PATH}/webhooks">All endpoints</a></p>`);
    } catch (error) {
      next(error);
    }
  });
  router.post('/webhooks/:id/disable', async (req: Request, res: Response, next) => {
    try {
      const session = sessionOf(res);
      const endpoint = await readEndpointObject(deps.db, session.organizationId, String(req.params.id));
      if (!endpoint) {
        sendNotFound(res, `There is no such webhook endpoint in this organisation.`);
        return;
      }
      await disableEndpoint(deps.db, endpoint.id, `turned off in the console by ${session.memberName}`);
      recordAction(deps, req, res, 303);
      res.redirect(303, `${CONSOLE_PATH}/webhooks/${endpoint.id}`);
    } catch (error) {
      next(error);
    }
  });
  return router;
}
