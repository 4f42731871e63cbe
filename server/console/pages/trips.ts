// Trips and their settlement sheets in the console, for an accountant: the organisation's trips newest first, and a
// trip's sheet (sales, collections, credit notes, expenses, cash expected and handed in, the van's stock per product
// by name and unit) in the organisation's currency. Through the trips and settlements modules' own reads with the
// member as the actor (trips:read, held by every role), as `GET /trips` and `GET /trips/{id}/settlement` give them.
import { Router, type Request, type Response } from 'express';
import { listTrips } from '../../modules/trips/service.js';
import { getTripSettlement } from '../../modules/settlements/service.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { html, type Html } from '../html.js';
import { CONSOLE_PATH, when } from '../layout.js';
import { sendCsv } from '../csv.js';
import { memberActor } from '../access.js';
import { sendPage, sessionOf, type ConsoleDeps } from '../context.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** An amount as an accountant reads it: grouped thousands, the currency after it (`1,234,500 UGX`). */
function money(value: { amount: string; currency: string } | null | undefined): string {
  if (!value) return '';
  const [whole, fraction] = value.amount.replace('-', '').split('.');
  const grouped = whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${value.amount.startsWith('-') ? '-' : ''}${grouped}${fraction ? `.${fraction}` : ''} ${value.currency}`;
}

function refused(res: Response, error: unknown): boolean {
  if (!(error instanceof ApiError)) return false;
  sendPage(
    res,
    'Not available',
    html`<p class="error" role="alert">${error.message}</p><p><a href="${CONSOLE_PATH}/trips">All trips</a></p>`,
    error.code === 'not_found' ? 404 : 422,
  );
  return true;
}

export function tripRoutes(deps: ConsoleDeps): Router {
  const router = Router();
  router.get('/trips', async (req: Request, res: Response, next) => {
    try {
      const session = sessionOf(res);
      const actor = await memberActor(deps.db, session);
      const date = typeof req.query.date === 'string' && DATE.test(req.query.date) ? req.query.date : undefined;
      const page = await listTrips(deps.db, actor, { limit: 100 }, { businessDate: date });
      const people = new Map(
        (
          await deps.db
            .selectFrom('salespeople')
            .select(['id', 'salesman_code', 'name'])
            .where('organization_id', '=', session.organizationId)
            .execute()
        ).map((p) => [p.id, `${p.salesman_code} ${p.name}`]),
      );
      if (req.query.format === 'csv') {
        sendCsv(
          res,
          'trips.csv',
          ['id', 'number', 'businessDate', 'status', 'salesperson', 'departedAt', 'returnedAt', 'closedAt'],
          page.rows.map((trip) => [
            trip.id,
            trip.number,
            trip.businessDate,
            trip.status,
            trip.salespersonId ? (people.get(trip.salespersonId) ?? trip.salespersonId) : '',
            trip.departedAt,
            trip.returnedAt,
            trip.closedAt,
          ]),
        );
        return;
      }
      sendPage(
        res,
        'Trips and settlement sheets',
        html`
<form class="filters" method="get" action="${CONSOLE_PATH}/trips">
<div class="field"><label for="f-date">Business date</label><input id="f-date" name="date" type="date" value="${date ?? ''}"></div>
<button type="submit">Show</button> <a href="${CONSOLE_PATH}/trips">Clear</a></form>
<p><a href="${CONSOLE_PATH}/trips?${date ? `date=${date}&` : ''}format=csv">Download as CSV</a> (the newest 100)</p>
${
  page.rows.length === 0
    ? html`<p>No trips${date ? ` on ${date}` : ''}.</p>`
    : html`<table>
<thead><tr><th scope="col">Trip</th><th scope="col">Business date</th><th scope="col">Salesman</th><th scope="col">Status</th><th scope="col">Returned</th></tr></thead>
<tbody>${page.rows.map((trip) => html`<tr><td><a href="${CONSOLE_PATH}/trips/${trip.id}">${trip.number}</a></td><td class="nowrap">${trip.businessDate}</td><td>${trip.salespersonId ? (people.get(trip.salespersonId) ?? '') : ''}</td><td>${trip.status}</td><td class="nowrap">${when(trip.returnedAt)}</td></tr>`)}</tbody>
</table>`
}`,
      );
    } catch (error) {
      if (!refused(res, error)) next(error);
    }
  });
  router.get('/trips/:id', async (req: Request, res: Response, next) => {
    try {
      const session = sessionOf(res);
      const sheet = await getTripSettlement(deps.db, await memberActor(deps.db, session), String(req.params.id));
      const products = new Map(
        (
          await deps.db
            .selectFrom('products')
            .select(['id', 'product_code', 'name'])
            .where('organization_id', '=', session.organizationId)
            .where('id', 'in', sheet.stock.length > 0 ? sheet.stock.map((line) => line.productId) : [''])
            .execute()
        ).map((p) => [p.id, `${p.product_code} ${p.name}`]),
      );
      if (req.query.format === 'csv') {
        sendCsv(
          res,
          `settlement-${sheet.tripNumber}.csv`,
          ['product', 'unit', 'loaded', 'sold', 'returned', 'returnedDamaged', 'counted', 'difference'],
          sheet.stock.map((line) => [
            products.get(line.productId) ?? line.productId,
            line.unit,
            line.loaded,
            line.sold,
            line.returned,
            line.returnedDamaged,
            line.counted,
            line.difference,
          ]),
        );
        return;
      }
      const row = (label: string, value: Html | string) =>
        html`<tr><th scope="row">${label}</th><td class="num">${value}</td></tr>`;
      sendPage(
        res,
        `Trip ${sheet.tripNumber}, ${sheet.businessDate}`,
        html`
<p>Trip ${sheet.tripStatus}; settlement ${sheet.status}${sheet.closedAt ? ` (closed ${when(sheet.closedAt)})` : ''}. Amounts in ${sheet.currency}.</p>
<h2>Money</h2>
<table>
<tbody>
${row(`Sales (${sheet.sales.invoiceCount} invoices)`, money(sheet.sales.total))}
${row('of which cash', money(sheet.sales.cash))}
${row('of which mobile money', money(sheet.sales.mobileMoney))}
${row('of which on credit', money(sheet.sales.credit))}
${row(`Collections (${sheet.collections.receiptCount} receipts)`, money(sheet.collections.total))}
${row(`Credit notes (${sheet.creditNotes.count})`, money(sheet.creditNotes.total))}
${row('Cash refunds', money(sheet.creditNotes.cashRefunds))}
${row('Cash expected from sales', money(sheet.cashExpectedFromSales))}
${row('Cash expenses', money(sheet.cashExpenses))}
${row('Cash expected', money(sheet.cashExpected))}
${row('Handed in', sheet.handedIn ? money(sheet.handedIn) : 'not yet')}
${row('Difference', sheet.variance ? money(sheet.variance) : '')}
</tbody></table>
${
  sheet.expenses.length > 0
    ? html`<h2>Expenses</h2><table><thead><tr><th scope="col">Kind</th><th scope="col">What</th><th scope="col" class="num">Amount</th><th scope="col">Receipt</th></tr></thead>
<tbody>${sheet.expenses.map((e) => html`<tr><td>${e.kind}</td><td>${e.description}</td><td class="num">${money(e.amount)}</td><td>${e.receiptReference ?? ''}</td></tr>`)}</tbody></table>`
    : ''
}
<h2>Van stock</h2>
<p><a href="${CONSOLE_PATH}/trips/${sheet.tripId}?format=csv">Download the stock lines as CSV</a></p>
${
  sheet.stock.length === 0
    ? html`<p>No stock moved on this trip.</p>`
    : html`<table>
<thead><tr><th scope="col">Product</th><th scope="col">Unit</th><th scope="col" class="num">Loaded</th><th scope="col" class="num">Sold</th><th scope="col" class="num">Returned</th><th scope="col" class="num">Returned damaged</th><th scope="col" class="num">Counted</th><th scope="col" class="num">Difference</th></tr></thead>
<tbody>${sheet.stock.map((line) => html`<tr><td>${products.get(line.productId) ?? line.productId}</td><td>${line.unit}</td><td class="num">${line.loaded}</td><td class="num">${line.sold}</td><td class="num">${line.returned}</td><td class="num">${line.returnedDamaged}</td><td class="num">${line.counted ?? ''}</td><td class="num">${line.difference ?? ''}</td></tr>`)}</tbody>
</table>`
}
<p><a href="${CONSOLE_PATH}/trips">All trips</a></p>`,
      );
    } catch (error) {
      if (!refused(res, error)) next(error);
    }
  });
  return router;
}
