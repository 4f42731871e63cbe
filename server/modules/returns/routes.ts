// HTTP of returns: the request becomes an actor and a typed command for processReturn (documents.ts), or a list
// request for the reads (repository.ts). Nothing here decides a rule.
import type { Router } from 'express';
import type { components } from '../../../generated/api-types.js';
import type { Actor } from '../../platform/access/actor.js';
import { actorOf, callerOf } from '../../platform/access/context.js';
import type { Db, Tx } from '../../platform/database/transaction.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { respondIdempotently } from '../../platform/http/idempotency.js';
import { apiRouter } from '../../platform/http/router.js';
import { listRequestOf, sendPage } from '../../platform/lists/http.js';
import { processReturn } from './documents.js';
import { findReturn, listReturns, partsOf, requireReturnFilters } from './repository.js';
import { toReturn, type SalesReturn } from './representation.js';

type CreateBody = components['schemas']['ReturnCreate'];

export function returnRoutes(db: Db): Router {
  const router = apiRouter();

  router.post('/returns', async (req, res) => {
    const caller = callerOf(res);
    const body = req.body as CreateBody;
    await respondIdempotently(db, caller, req, res, async (tx) => {
      const processed = await processReturn(tx, caller.actor, {
        invoiceId: body.invoiceId,
        ...(body.returnDate === undefined ? {} : { returnDate: body.returnDate }),
        reason: body.reason ?? null,
        locationId: body.locationId ?? null,
        badStockLocationId: body.badStockLocationId ?? null,
        lines: body.lines.map((line) => ({
          ...(line.invoiceLineNumber === undefined ? {} : { invoiceLineNumber: line.invoiceLineNumber }),
          ...(line.productId === undefined ? {} : { productId: line.productId }),
          unit: line.unit,
          quantity: line.quantity,
          condition: line.condition,
        })),
      });
      return { status: 201, body: await read(tx, caller.actor, processed.id) };
    });
  });

  router.get('/returns', async (req, res) => {
    const actor = actorOf(res);
    const query = req.query as { customerId?: string; invoiceId?: string; externalCode?: string };
    const request = listRequestOf(req);
    await requireReturnFilters(db, actor.organization.id, query, request);
    const page = await listReturns(db, actor, request, query);
    const parts = await partsOf(
      db,
      actor.organization.id,
      page.rows.map((row) => row.id),
    );
    sendPage(res, { ...page, rows: page.rows.map((row) => toReturn(row, parts.get(row.id)!)) });
  });

  router.get('/returns/:id', async (req, res) => {
    res.json(await read(db, actorOf(res), req.params.id as string));
  });

  return router;
}

/** The return as GET answers it; 404 not_found when the organisation has none with this id. */
export async function read(db: Db | Tx, actor: Actor, id: string): Promise<SalesReturn> {
  const found = await findReturn(db, actor.organization.id, id);
  if (!found) throw new ApiError('not_found', `There is no return ${id} in this organisation.`);
  return toReturn(found.row, found.parts);
}
