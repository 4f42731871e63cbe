// The accounting (QuickBooks) and fiscal (EFRIS) postings in the console: what failed and why, newest change first,
// filtered by status, with a retry of a failed posting through the postings module's own retry (what `admin postings
// retry` calls). The owner and the members who manage settings only: the API has no list of postings, so a member
// without that role sees them only inside the documents the API shows it. A posting's own page shows what the external
// system holds for it, read there now through the accounting (QuickBooks) or fiscal (EFRIS) connector: its id and
// number there, amount and state, or the fiscal number and verification code.
import { Router, type Request, type Response } from 'express';
import { listPostings, retryPostings, type PostingView } from '../../modules/postings/operations.js';
import { readHeldThere, type HeldThere } from '../../modules/postings/held.js';
import { html, type Html } from '../html.js';
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
      const status =
        typeof req.query.status === 'string' && (STATUSES as readonly string[]).includes(req.query.status)
          ? req.query.status
          : undefined;
      const csv = req.query.format === 'csv';
      const postings = await listPostings(deps.db, session.organizationId, { status, limit: csv ? 10_000 : 100 });
      if (csv) {
        sendCsv(
          res,
          'postings.csv',
          [
            'postingId',
            'documentType',
            'documentNumber',
            'system',
            'operation',
            'status',
            'attempts',
            'externalRef',
            'reason',
            'nextAttemptAt',
            'updatedAt',
          ],
          postings.map((p) => [
            p.postingId,
            p.documentType,
            p.documentNumber,
            p.system,
            p.operation,
            p.status,
            p.attempts,
            p.externalRef,
            p.reason,
            p.nextAttemptAt,
            p.updatedAt,
          ]),
        );
        return;
      }
      const notice =
        req.query.notice === 'retried'
          ? html`<p class="notice" role="status">The posting is queued again; the worker tries it within a minute.</p>`
          : req.query.notice === 'nothing'
            ? html`<p class="notice" role="status">Nothing to retry: that posting has not failed.</p>`
            : html``;
      const token = html`<input type="hidden" name="_csrf" value="${session.csrfToken}">`;
      sendPage(
        res,
        'Accounting and fiscal postings',
        html`${notice}
<form class="filters" method="get" action="${CONSOLE_PATH}/postings">
<div class="field"><label for="f-status">Status</label><select id="f-status" name="status"><option value="">All</option>${STATUSES.map((s) => html`<option value="${s}"${status === s ? html` selected` : ''}>${s}</option>`)}</select></div>
<button type="submit">Show</button></form>
<p><a href="${CONSOLE_PATH}/postings?${status ? `status=${status}&` : ''}format=csv">Download as CSV</a></p>
${
  postings.length === 0
    ? html`<p>No postings${status ? ` ${status}` : ''}.</p>`
    : html`<table>
<thead><tr><th scope="col">Document</th><th scope="col">System</th><th scope="col">Status</th><th scope="col" class="num">Attempts</th><th scope="col">Reference</th><th scope="col">Why</th><th scope="col">Updated</th><th scope="col">Action</th></tr></thead>
<tbody>${postings.map((p) => html`<tr><td><a href="${CONSOLE_PATH}/postings/${p.postingId}">${p.documentType} ${p.documentNumber}</a></td><td>${p.system} (${p.operation})</td><td${p.status === 'failed' ? html` class="state-rejected"` : ''}>${p.status}</td><td class="num">${p.attempts}</td><td>${p.externalRef ?? ''}</td><td>${p.reason ?? ''}</td><td class="nowrap">${when(p.updatedAt)}</td><td>${p.status === 'failed' ? html`<form class="inline" method="post" action="${CONSOLE_PATH}/postings/${p.postingId}/retry">${token}<button type="submit" class="secondary">Retry<span class="vh"> ${p.documentType} ${p.documentNumber} in ${p.system}</span></button></form>` : ''}</td></tr>`)}</tbody>
</table>`
}`,
      );
    } catch (error) {
      next(error);
    }
  });
  router.get('/postings/:id', async (req: Request, res: Response, next) => {
    try {
      const session = sessionOf(res);
      const id = String(req.params.id);
      const [posting] = /^xpo_[A-Za-z0-9]{1,64}$/.test(id)
        ? await listPostings(deps.db, session.organizationId, { id, limit: 1 })
        : [];
      if (!posting) {
        sendNotFound(
          res,
          `There is no posting ${id} in this organisation.`,
          html`<p><a href="${CONSOLE_PATH}/postings">All postings</a></p>`,
        );
        return;
      }
      const held = await readHeldThere(deps.db, deps.connectors, session.organizationId, posting);
      const token = html`<input type="hidden" name="_csrf" value="${session.csrfToken}">`;
      sendPage(
        res,
        `Posting of ${posting.documentType} ${posting.documentNumber} to ${systemName(posting)}`,
        html`
<h2>In the service</h2>
<dl class="facts">
<dt>Document</dt><dd>${posting.documentType} ${posting.documentNumber} <span class="muted">${posting.documentId}</span></dd>
<dt>System</dt><dd>${posting.system} (${posting.operation})</dd>
<dt>Status</dt><dd${posting.status === 'failed' ? html` class="state-rejected"` : ''}>${posting.status}</dd>
<dt>Attempts</dt><dd>${posting.attempts}</dd>
<dt>Reference there</dt><dd>${posting.externalRef ? `${posting.externalType ?? ''} ${posting.externalRef}`.trim() : 'none yet'}</dd>
${posting.reason ? html`<dt>Why</dt><dd>${posting.reason}</dd>` : ''}
<dt>Updated</dt><dd>${when(posting.updatedAt)}</dd>
</dl>
${posting.status === 'failed' ? html`<form method="post" action="${CONSOLE_PATH}/postings/${posting.postingId}/retry">${token}<button type="submit">Retry this posting</button></form>` : ''}
<h2>What ${systemName(posting)} holds</h2>
${heldFacts(held)}
<p><a href="${CONSOLE_PATH}/postings">All postings</a></p>`,
      );
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

const systemName = (posting: PostingView) =>
  posting.system === 'fiscal' ? 'the fiscal system (EFRIS)' : 'the accounting system (QuickBooks)';

/** What the system answered, in words; a read that failed is said as such (the page still answers). */
function heldFacts(held: HeldThere): Html {
  switch (held.kind) {
    case 'accounting':
      return held.held === null
        ? html`<p class="error" role="status">It holds no such document now: deleted there (or never made).</p>`
        : html`<p class="muted">Read there just now.</p><dl class="facts">
<dt>Type and id there</dt><dd>${held.held.type} ${held.held.id}</dd>
<dt>Number there</dt><dd>${held.held.docNumber ?? 'none'}</dd>
<dt>Date</dt><dd>${held.held.txnDate ?? ''}</dd>
<dt>Amount</dt><dd>${held.held.total}${held.held.currency ? ` ${held.held.currency}` : ''}</dd>
${held.held.balance === null ? '' : html`<dt>Open balance</dt><dd>${held.held.balance}${held.held.currency ? ` ${held.held.currency}` : ''}</dd>`}
<dt>State there</dt><dd${held.held.state === 'voided' ? html` class="state-rejected"` : ''}>${held.held.state}</dd>
</dl>`;
    case 'fiscal':
      return held.receipt === null
        ? html`<p class="error" role="status">It holds no document with this fiscal number.</p>`
        : html`<p class="muted">Read there just now.</p><dl class="facts">
<dt>Fiscal document number (FDN)</dt><dd>${held.receipt.fdn}</dd>
<dt>Verification code</dt><dd>${held.receipt.verificationCode}</dd>
<dt>Its id there</dt><dd>${held.receipt.fiscalId}</dd>
${held.receipt.qrCode ? html`<dt>Verification address</dt><dd>${held.receipt.qrCode}</dd>` : ''}
</dl>`;
    case 'nothing-sent':
    case 'no-connection':
      return html`<p>${held.why}</p>`;
    case 'unanswered':
      return html`<p class="error" role="status">It could not be read just now: ${held.why}</p>`;
  }
}
