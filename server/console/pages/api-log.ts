// The organisation's API log in the console (what `admin log` prints): newest first, filtered by status and request
// id, without bodies. The owner and the members who manage settings only (as for keys: the log names every key's
// calls). Console actions are in it too, as `member:<id>`.
import { Router, type Request, type Response } from 'express';
import { readApiLog } from '../../platform/http/api-log-query.js';
import { html } from '../html.js';
import { CONSOLE_PATH, when } from '../layout.js';
import { sendCsv } from '../csv.js';
import { requireManager, sendPage, sessionOf, type ConsoleDeps } from '../context.js';

export function apiLogRoutes(deps: ConsoleDeps): Router {
  const router = Router();
  router.use('/log', requireManager);
  router.get('/log', async (req: Request, res: Response, next) => {
    try {
      const session = sessionOf(res);
      const status =
        typeof req.query.status === 'string' && /^[1-5]\d\d$/.test(req.query.status)
          ? Number(req.query.status)
          : undefined;
      const requestId =
        typeof req.query.request === 'string' && /^[A-Za-z0-9_-]{1,100}$/.test(req.query.request)
          ? req.query.request
          : undefined;
      const csv = req.query.format === 'csv';
      const entries = await readApiLog(deps.db, session.organizationId, { status, requestId, limit: csv ? 1000 : 100 });
      if (csv) {
        sendCsv(
          res,
          'api-log.csv',
          ['time', 'caller', 'method', 'path', 'status', 'durationMs', 'requestId'],
          entries.map((e) => [e.time, e.keyPrefix, e.method, e.path, e.status, e.durationMs, e.requestId]),
        );
        return;
      }
      const query = new URLSearchParams({
        ...(status ? { status: String(status) } : {}),
        ...(requestId ? { request: requestId } : {}),
        format: 'csv',
      });
      sendPage(
        res,
        'API log',
        html`
<form class="filters" method="get" action="${CONSOLE_PATH}/log">
<div class="field"><label for="f-status">Status</label><input id="f-status" name="status" inputmode="numeric" size="4" value="${status ?? ''}"></div>
<div class="field"><label for="f-request">Request ID</label><input id="f-request" name="request" value="${requestId ?? ''}"></div>
<button type="submit">Show</button> <a href="${CONSOLE_PATH}/log">Clear</a></form>
<p><a href="${CONSOLE_PATH}/log?${query.toString()}">Download as CSV</a> (up to 1,000)</p>
${
  entries.length === 0
    ? html`<p>No entries.</p>`
    : html`<table>
<thead><tr><th scope="col">When</th><th scope="col">Caller</th><th scope="col">Request</th><th scope="col" class="num">Status</th><th scope="col" class="num">ms</th><th scope="col">Request ID</th></tr></thead>
<tbody>${entries.map((e) => html`<tr><td class="nowrap">${when(e.time)}</td><td>${e.keyPrefix}</td><td>${e.method} ${e.path}</td><td class="num">${e.status}</td><td class="num">${e.durationMs.toFixed(0)}</td><td>${e.requestId}</td></tr>`)}</tbody>
</table>`
}`,
      );
    } catch (error) {
      next(error);
    }
  });
  return router;
}
