// The accounting (QuickBooks) and fiscal (EFRIS) postings in the console: what failed and why, newest change first,
// filtered by status, with a retry of a failed posting through the postings module's own retry (what `admin postings
// retry` calls). The owner and the members who manage settings only: the API has no list of postings, so a member
// without that role sees them only inside the documents the API shows it.
import { Router, type Request, type Response } from 'express';
import { listPostings, retryPostings } from '../../modules/postings/operations.js';
import { html } from '../html.js';
import { CONSOLE_PATH, when } from '../layout.js';
import { sendCsv } from '../csv.js';
import { recordAction, requireManager, sendNotFound, sendPage, sessionOf, type ConsoleDeps } from '../context.js';

const STATUSES = ['pending', 'posted', 'failed', 'cancelled'] as const;

export function postingRoutes(deps: ConsoleDeps): Router {
  const router = Router();
  router.use('/postings', requireManager);
  router.get('/postings', async (req: Request, res: Response, next) => {
    try {
      const session = sessionOf(res);
      const status = typeof req.query.status === 'string' && (STATUSES as readonly string[]).includes(req.query.status) ? req.query.status : undefined;
      const csv = req.query.format === 'csv';
      const postings = await listPostings(deps.db, session.organizationId, { status, limit: csv ? 10_000 : 100 });
      if (csv) {
        sendCsv(res, 'postings.csv', ['postingId', 'documentType', 'documentNumber', 'system', 'operation', 'status', 'attempts', 'externalRef', 'reason', 'nextAttemptAt', 'updatedAt'],
          postings.map((p) => [p.postingId, p.documentType, p.documentNumber, p.system, p.operation, p.status, p.attempts, p.externalRef, p.reason, p.nextAttemptAt, p.updatedAt]));
        return;
      }
      const notice = req.query.notice === 'retried' ? html`<p class="notice" role="status">The posting is queued again; the worker tries it within a minute.</p>`
        : req.query.notice === 'nothing' ? html`<p class="notice" role="status">Nothing to retry: that posting has not failed.</p>` : html``;
      const token = html`<input type="hidden" name="_csrf" value="${session.csrfToken}">`;
      sendPage(res, 'Accounting and fiscal postings', html`${notice}
<form class="filters" method="get" action="${CONSOLE_PATH}/postings">
<div class="field"><label for="f-status">Status</label><select id="f-status" name="status"><option value="">All</option>${STATUSES.map((s) => html`<option value="${s}"${status === s ? html` selected` : ''}>${s}</option>`)}</select></div>
<button type="submit">Show</button></form>
<p><a href="${CONSOLE_PATH}/postings?${status ? `status=${status}&` : ''}format=csv">Download as CSV</a></p>
${postings.length === 0 ? html`<p>No postings${status ? ` ${status}` : ''}.</p>` : html`<table>
<thead><tr><th scope="col">Document</th><th scope="col">System</th><th scope="col">Status</th><th scope="col" class="num">Attempts</th><th scope="col">Reference</th><th scope="col">Why</th><th scope="col">Updated</th><th scope="col">Action</th></tr></thead>
<tbody>${postings.map((p) => html`<tr><td>${p.documentType} ${p.documentNumber}</td><td>${p.system} (${p.operation})</td><td${p.status === 'failed' ? html` class="state-rejected"` : ''}>${p.status}</td><td class="num">${p.attempts}</td><td>${p.externalRef ?? ''}</td><td>${p.reason ?? ''}</td><td class="nowrap">${when(p.updatedAt)}</td><td>${p.status === 'failed' ? html`<form class="inline" method="post" action="${CONSOLE_PATH}/postings/${p.postingId}/retry">${token}<button type="submit" class="secondary">Retry<span class="vh"> ${p.documentType} ${p.documentNumber} in ${p.system}</span></button></form>` : ''}</td></tr>`)}</tbody>
</table>`}`);
    } catch (error) {
      next(error);
    }
  });
  router.post('/postings/:id/retry', async (req, res, next) => {
    try {
      const session = sessionOf(res);
      const id = String(req.params.id);
      if (!/^xpo_[A-Za-z0-9]{1,64}$/.test(id)) {
        sendNotFound(res, `There is no posting ${id}.`);
        return;
      }
      const retried = await retryPostings(deps.db, session.organizationId, id);
      recordAction(deps, req, res, 303);
      res.redirect(303, `${CONSOLE_PATH}/postings?notice=${retried.length > 0 ? 'retried' : 'nothing'}`);
    } catch (error) {
      next(error);
    }
  });
  return router;
}
