// DMS daily reconciliation in the console: per salesman and business day, whether it balanced, and each difference
// in words with the documents it names (linked to their pages), the route settlement's cash, credit and closing stock,
// and the day's counts and values per document type beside the DMS's daily totals. What `GET /dms/reconciliations` gives a key with dms:flags:read (every role holds it).
import { Router, type Request, type Response } from 'express';
import { findReconciliation } from '../../modules/dms/reconciliation-reads.js';
import { html } from '../html.js';
import { CONSOLE_PATH, when } from '../layout.js';
import { sendCsv } from '../csv.js';
import { sendNotFound, sendPage, sessionOf, type ConsoleDeps } from '../context.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const CODE = /^[A-Za-z0-9_.\-/]{1,64}$/;

export function reconciliationRoutes(deps: ConsoleDeps): Router {
  const router = Router();
  router.get('/reconciliation', async (req: Request, res: Response, next) => {
    try {
      const session = sessionOf(res);
      const salesman =
        typeof req.query.salesman === 'string' && CODE.test(req.query.salesman) ? req.query.salesman : undefined;
      const date = typeof req.query.date === 'string' && DATE.test(req.query.date) ? req.query.date : undefined;
      const differencesOnly = req.query.status === 'differences';
      let query = deps.db
        .selectFrom('dms_reconciliations')
        .select(['id', 'salesman_code', 'business_date', 'status', 'difference_count', 'checked_at'])
        .where('organization_id', '=', session.organizationId);
      if (salesman) query = query.where('salesman_code', '=', salesman);
      if (date) query = query.where('business_date', '=', date);
      if (differencesOnly) query = query.where('status', '=', 'differences');
      const csv = req.query.format === 'csv';
      const rows = await query
        .orderBy('business_date', 'desc')
        .orderBy('salesman_code')
        .limit(csv ? 10_000 : 200)
        .execute();
      if (csv) {
        sendCsv(
          res,
          'reconciliation.csv',
          ['id', 'salesmanCode', 'businessDate', 'status', 'differenceCount', 'checkedAt'],
          rows.map((r) => [
            r.id,
            r.salesman_code,
            r.business_date,
            r.status,
            r.difference_count,
            r.checked_at.toISOString(),
          ]),
        );
        return;
      }
      const params = new URLSearchParams({
        ...(salesman ? { salesman } : {}),
        ...(date ? { date } : {}),
        ...(differencesOnly ? { status: 'differences' } : {}),
        format: 'csv',
      });
      sendPage(
        res,
        'DMS reconciliation',
        html`
<form class="filters" method="get" action="${CONSOLE_PATH}/reconciliation">
<div class="field"><label for="f-salesman">Salesman code</label><input id="f-salesman" name="salesman" value="${salesman ?? ''}"></div>
<div class="field"><label for="f-date">Business date</label><input id="f-date" name="date" type="date" value="${date ?? ''}"></div>
<div class="field"><label for="f-status">Result</label><select id="f-status" name="status"><option value="">All</option><option value="differences"${differencesOnly ? html` selected` : ''}>With differences</option></select></div>
<button type="submit">Show</button> <a href="${CONSOLE_PATH}/reconciliation">Clear</a></form>
<p><a href="${CONSOLE_PATH}/reconciliation?${params.toString()}">Download as CSV</a></p>
${
  rows.length === 0
    ? html`<p>No reconciled days${salesman || date || differencesOnly ? ' under these filters' : ' yet (a day is reconciled after its cut-off)'}.</p>`
    : html`<table>
<thead><tr><th scope="col">Business date</th><th scope="col">Salesman</th><th scope="col">Result</th><th scope="col" class="num">Differences</th><th scope="col">Checked</th></tr></thead>
<tbody>${rows.map((r) => html`<tr><td><a href="${CONSOLE_PATH}/reconciliation/${r.id}">${r.business_date}</a></td><td>${r.salesman_code}</td><td${r.status === 'differences' ? html` class="state-rejected"` : ''}>${r.status}</td><td class="num">${r.difference_count}</td><td class="nowrap">${when(r.checked_at)}</td></tr>`)}</tbody>
</table>`
}`,
      );
    } catch (error) {
      next(error);
    }
  });
  router.get('/reconciliation/:id', async (req: Request, res: Response, next) => {
    try {
      const session = sessionOf(res);
      const day = await findReconciliation(deps.db, session.organizationId, String(req.params.id));
      if (!day) {
        sendNotFound(res, `There is no such reconciled day in this organisation.`);
        return;
      }
      const compared = day.comparedWith;
      const settlement = compared.routeSettlement
        ? await routeSettlementLines(deps, session.organizationId, compared.routeSettlement.documentId)
        : null;
      sendPage(
        res,
        `Salesman ${day.salesmanCode}, ${day.businessDate}`,
        html`
<p>${day.status === 'balanced' ? 'Balanced: no difference.' : `${day.differenceCount} difference(s).`} Checked ${when(day.checkedAt)}. Compared with:
${compared.routeSettlement ? html`route settlement ${compared.routeSettlement.documentNumber}` : 'no route settlement'},
${compared.dailyTotals ? html`daily totals ${compared.dailyTotals.documentNumber}` : 'no daily totals'}.</p>
<h2>Differences</h2>
${
  day.differences.length === 0
    ? html`<p>None.</p>`
    : html`<table>
<thead><tr><th scope="col">Kind</th><th scope="col">In words</th><th scope="col">Document</th></tr></thead>
<tbody>${day.differences.map((d) => html`<tr><td>${d.kind}</td><td>${d.message}</td><td>${d.documentId ? html`<a href="${CONSOLE_PATH}/dms/${d.documentId}">${d.documentType ?? ''} ${d.documentNumber ?? d.documentId}</a>` : d.documentNumber ? `${d.documentType ?? ''} ${d.documentNumber}` : (d.productCode ?? '')}</td></tr>`)}</tbody>
</table>`
}
${
  settlement
    ? html`<h2>The route settlement ${compared.routeSettlement!.documentNumber}</h2>
<p>Cash handed in: <strong>${settlement.cashHandedIn} ${settlement.currency}</strong>. Credit left on the day's sales: <strong>${settlement.credit ?? 'not given'}${settlement.credit ? ` ${settlement.currency}` : ''}</strong>.</p>
${
  settlement.closingStock === null
    ? html`<p>No closing stock counted: the books were taken as the count.</p>`
    : html`<table>
<thead><tr><th scope="col">Product</th><th scope="col" class="num">Counted on the van (base units)</th></tr></thead>
<tbody>${settlement.closingStock.map((line) => html`<tr><td>${line.product}</td><td class="num">${line.quantity}</td></tr>`)}</tbody>
</table>`
}`
    : ''
}
<h2>Documents of the day by type</h2>
${
  day.totals.length === 0
    ? html`<p>None.</p>`
    : html`<table>
<thead><tr><th scope="col">Type</th><th scope="col" class="num">Received</th><th scope="col" class="num">Posted</th><th scope="col" class="num">Rejected</th><th scope="col" class="num">Pending</th><th scope="col" class="num">Value posted</th><th scope="col" class="num">DMS count</th><th scope="col" class="num">DMS value</th></tr></thead>
<tbody>${day.totals.map((t) => html`<tr><td>${t.documentType}</td><td class="num">${t.counts.received}</td><td class="num">${t.counts.posted}</td><td class="num">${t.counts.rejected}</td><td class="num">${t.counts.pending}</td><td class="num">${t.values.posted}</td><td class="num">${t.dms?.count ?? ''}</td><td class="num">${t.dms?.value ?? ''}</td></tr>`)}</tbody>
</table>`
}
<p><a href="${CONSOLE_PATH}/reconciliation">All reconciled days</a></p>`,
      );
    } catch (error) {
      next(error);
    }
  });
  return router;
}

/** The route settlement's cash, credit and closing stock as the DMS sent them, its products named. */
async function routeSettlementLines(
  deps: ConsoleDeps,
  organizationId: string,
  documentId: string,
): Promise<{
  currency: string;
  cashHandedIn: string;
  credit: string | null;
  closingStock: { product: string; quantity: number }[] | null;
} | null> {
  const row = await deps.db
    .selectFrom('dms_documents')
    .select('content')
    .where('organization_id', '=', organizationId)
    .where('id', '=', documentId)
    .executeTakeFirst();
  const body = (
    row?.content as
      | {
          body?: { cashHandedIn?: string; credit?: string; closingStock?: { productCode: string; quantity: number }[] };
        }
      | undefined
  )?.body;
  if (!body || typeof body.cashHandedIn !== 'string') return null;
  const organization = await deps.db
    .selectFrom('organizations')
    .select('base_currency')
    .where('id', '=', organizationId)
    .executeTakeFirstOrThrow();
  const codes = Array.isArray(body.closingStock) ? body.closingStock.map((line) => line.productCode) : [];
  const names = new Map(
    codes.length === 0
      ? []
      : (
          await deps.db
            .selectFrom('products')
            .select(['product_code', 'name'])
            .where('organization_id', '=', organizationId)
            .where('product_code', 'in', codes)
            .execute()
        ).map((p) => [p.product_code, `${p.product_code} ${p.name}`]),
  );
  return {
    currency: organization.base_currency,
    cashHandedIn: body.cashHandedIn,
    credit: typeof body.credit === 'string' ? body.credit : null,
    closingStock: Array.isArray(body.closingStock)
      ? body.closingStock.map((line) => ({
          product: names.get(line.productCode) ?? line.productCode,
          quantity: line.quantity,
        }))
      : null,
  };
}
