// HTTP of the stock module: the request becomes an actor and a typed command for the posting functions
// (documents.ts), or a list request for the reads (repository.ts). Nothing here decides a rule.
import type { Request, Router } from 'express';
import type { components } from '../../../generated/api-types.js';
import { acceptAmount } from '../../domain/money.js';
import { actorOf, callerOf } from '../../platform/access/context.js';
import { timestampProblem, toUtc } from '../../platform/dates.js';
import type { Db } from '../../platform/database/transaction.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { respondIdempotently } from '../../platform/http/idempotency.js';
import { apiRouter } from '../../platform/http/router.js';
import { listRequestOf, sendPage } from '../../platform/lists/http.js';
import type { ListRequest } from '../../platform/lists/page.js';
import { organizationToday } from '../../platform/access/organizations.js';
import { postStockAdjustment, postStockTransfer, type StockDocument } from './documents.js';
import {
  findStockDocument,
  listEmptiesMovements,
  listStockLevels,
  listStockMovements,
  requireStockFilters,
} from './repository.js';
import { toEmptiesMovement, toStockDocument, toStockLevel, toStockMovement } from './representation.js';
import type { Actor } from '../../platform/access/actor.js';
import type { Tx } from '../../platform/database/transaction.js';

type AdjustmentBody = components['schemas']['StockAdjustmentCreate'];
type TransferBody = components['schemas']['StockTransferCreate'];

export function stockRoutes(db: Db): Router {
  const router = apiRouter();

  router.post('/stock-adjustments', async (req, res) => {
    const caller = callerOf(res);
    const body = req.body as AdjustmentBody;
    await respondIdempotently(db, caller, req, res, async (tx) => {
      const document = await postStockAdjustment(tx, caller.actor, {
        // Dated the day it is posted, on the distributor's clock: refused while the books are closed through today.
        date: { day: await organizationToday(tx, caller.organizationId), field: '' },
        reasonCode: body.reasonCode,
        note: body.note ?? null,
        lines: body.lines.map((line, i) => ({
          productId: line.productId,
          locationId: line.locationId,
          unit: line.unit,
          ...(line.quantity === undefined ? {} : { quantity: line.quantity }),
          ...(line.countedQuantity === undefined ? {} : { countedQuantity: line.countedQuantity }),
          ...(line.unitCost === undefined
            ? {}
            : { unitCost: acceptAmount(line.unitCost, `/lines/${i}/unitCost`, caller.baseCurrency).toFixed() }),
        })),
      });
      return { status: 201, body: await represent(tx, caller.actor, document) };
    });
  });

  router.post('/stock-transfers', async (req, res) => {
    const caller = callerOf(res);
    const body = req.body as TransferBody;
    await respondIdempotently(db, caller, req, res, async (tx) => {
      const document = await postStockTransfer(tx, caller.actor, {
        date: { day: await organizationToday(tx, caller.organizationId), field: '' },
        fromLocationId: body.fromLocationId,
        toLocationId: body.toLocationId,
        note: body.note ?? null,
        lines: body.lines,
      });
      return { status: 201, body: await represent(tx, caller.actor, document) };
    });
  });

  router.get('/stock-levels', async (req, res) => {
    const actor = actorOf(res);
    const query = req.query as { productId?: string; locationId?: string };
    await requireStockFilters(db, actor.organization.id, query);
    const page = await listStockLevels(db, actor, listRequestOf(req), query);
    sendPage(res, { ...page, rows: page.rows.map(toStockLevel) });
  });

  router.get('/stock-movements', async (req, res) => {
    const actor = actorOf(res);
    const query = req.query as { productId?: string; locationId?: string; documentId?: string };
    await requireStockFilters(db, actor.organization.id, query);
    const page = await listStockMovements(db, actor, feedRequestOf(req), query);
    sendPage(res, { ...page, rows: page.rows.map((row) => toStockMovement(row, actor)) });
  });

  router.get('/empties-movements', async (req, res) => {
    const actor = actorOf(res);
    const query = req.query as {
      type?: string;
      customerId?: string;
      productId?: string;
      locationId?: string;
      tripId?: string;
    };
    await requireStockFilters(db, actor.organization.id, query);
    const page = await listEmptiesMovements(db, actor, listRequestOf(req), query);
    sendPage(res, { ...page, rows: page.rows.map(toEmptiesMovement) });
  });

  return router;
}

/** The posted document as GET would read it (the movements with their products' units and, for payments:read, costs). */
async function represent(tx: Tx, actor: Actor, document: StockDocument) {
  const found = await findStockDocument(tx, actor, document.id);
  return toStockDocument(found!.document, found!.movements, actor);
}

/** The list request of a feed that takes `since` (the spec's name on stock movements) or `updatedSince`, not both. */
function feedRequestOf(req: Request): ListRequest {
  const { since, updatedSince } = req.query as { since?: string; updatedSince?: string };
  if (since === undefined) return listRequestOf(req);
  if (updatedSince !== undefined) {
    throw new ApiError('invalid_field', 'Give since or updatedSince, not both: they are the same feed.', [
      { field: '/query/since', code: 'invalid_field', message: 'given together with updatedSince' },
      { field: '/query/updatedSince', code: 'invalid_field', message: 'given together with since' },
    ]);
  }
  const problem = timestampProblem(since);
  if (problem)
    throw new ApiError('invalid_field', `since ${problem}.`, [
      { field: '/query/since', code: 'invalid_field', message: problem },
    ]);
  return { ...listRequestOf(req), updatedSince: toUtc(since) };
}
