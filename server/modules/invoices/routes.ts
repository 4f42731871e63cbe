// HTTP of invoices: the request becomes an actor and a typed command for the posting functions (documents.ts), or a
// list request for the reads (repository.ts). Nothing here decides a rule.
import type { Router } from 'express';
import type { components } from '../../../generated/api-types.js';
import type { Actor } from '../../platform/access/actor.js';
import { acceptAmount } from '../../domain/money.js';
import { actorOf, callerOf } from '../../platform/access/context.js';
import type { Db, Tx } from '../../platform/database/transaction.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { codesOf, recordIdByCode } from '../../platform/external-codes/external-codes.js';
import { respondIdempotently } from '../../platform/http/idempotency.js';
import { documentActionRoute } from '../../platform/http/document-action.js';
import type { ConnectorSettings } from '../../connectors/connections.js';
import { checkReversible } from '../postings/reversal.js';
import { apiRouter } from '../../platform/http/router.js';
import { listRequestOf, sendPage } from '../../platform/lists/http.js';
import { createInvoice, voidInvoice } from './documents.js';
import { findInvoice, INVOICE_RESOURCE, linesOf, listInvoices, requireInvoiceFilters } from './repository.js';
import { toInvoice, type Invoice } from './representation.js';

type CreateBody = components['schemas']['InvoiceCreate'];

export function invoiceRoutes(db: Db, connectors: ConnectorSettings): Router {
  const router = apiRouter();

  router.post('/invoices', async (req, res) => {
    const caller = callerOf(res);
    const body = req.body as CreateBody;
    await respondIdempotently(db, caller, req, res, async (tx) => {
      const posted = await createInvoice(tx, caller.actor, {
        customerId: body.customerId,
        locationId: body.locationId,
        issueDate: body.issueDate,
        dueDate: body.dueDate ?? null,
        salespersonId: body.salespersonId ?? null,
        orderId: body.orderId ?? null,
        payment: body.payment ?? null,
        ...(body.externalCodes === undefined ? {} : { externalCodes: body.externalCodes }),
        currency: caller.baseCurrency,
        lines: body.lines.map((line, i) => ({
          ...(line.kind === undefined ? {} : { kind: line.kind }),
          productId: line.productId,
          unit: line.unit,
          quantity: line.quantity,
          unitPrice: acceptAmount(line.unitPrice, `/lines/${i}/unitPrice`, caller.baseCurrency).toFixed(),
          ...(line.discount === undefined
            ? {}
            : { discount: acceptAmount(line.discount, `/lines/${i}/discount`, caller.baseCurrency).toFixed() }),
        })),
      });
      return { status: 201, body: await read(tx, caller.actor, posted.id) };
    });
  });

  router.get('/invoices', async (req, res) => {
    const actor = actorOf(res);
    const query = req.query as { customerId?: string; status?: string; externalCode?: string };
    await requireInvoiceFilters(db, actor.organization.id, query);
    const page = await listInvoices(db, actor, listRequestOf(req), query);
    const ids = page.rows.map((row) => row.id);
    const [lines, codes] = [
      await linesOf(db, actor.organization.id, ids),
      await codesOf(db, actor.organization.id, INVOICE_RESOURCE, ids),
    ];
    sendPage(res, {
      ...page,
      rows: page.rows.map((row) =>
        toInvoice(row, lines.get(row.id)?.lines ?? [], lines.get(row.id)?.truncated ?? false, codes.get(row.id) ?? {}),
      ),
    });
  });

  router.get('/invoices/by-code/:system/:code', async (req, res) => {
    const actor = actorOf(res);
    const id = await recordIdByCode(
      db,
      actor.organization.id,
      INVOICE_RESOURCE,
      'invoice',
      req.params.system as string,
      req.params.code as string,
    );
    res.json(await read(db, actor, id));
  });

  router.get('/invoices/:id', async (req, res) => {
    res.json(await read(db, actorOf(res), req.params.id as string));
  });

  documentActionRoute(router, db, '/invoices/:id/void', voidInvoice, read, (actor, id) =>
    checkReversible(db, connectors, actor.organization.id, { type: 'invoice', id }, 'Voided'),
  );

  return router;
}

/** The invoice as GET answers it; 404 not_found when the organisation has none with this id. */
export async function read(db: Db | Tx, actor: Actor, id: string): Promise<Invoice> {
  const found = await findInvoice(db, actor.organization.id, id);
  if (!found) throw new ApiError('not_found', `There is no invoice ${id} in this organisation.`);
  return toInvoice(found.invoice, found.lines, found.linesTruncated, found.externalCodes);
}
