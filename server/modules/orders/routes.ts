// HTTP of the orders module: the request becomes an actor and a typed command for the posting functions
// (documents.ts), or a list request for the reads (service.ts). Nothing here decides a rule.
import type { Router } from 'express';
import type { components } from '../../../generated/api-types.js';
import { actorOf, callerOf } from '../../platform/access/context.js';
import type { Db } from '../../platform/database/transaction.js';
import { recordIdByCode } from '../../platform/external-codes/external-codes.js';
import { respondIdempotently } from '../../platform/http/idempotency.js';
import { apiRouter } from '../../platform/http/router.js';
import { listRequestOf, sendPage } from '../../platform/lists/http.js';
import { cancelOrder, createOrder } from './documents.js';
import { ORDER_RESOURCE } from './repository.js';
import { getOrder, listOrders } from './service.js';

type CreateBody = components['schemas']['OrderCreate'];
type CancelBody = components['schemas']['OrderCancel'];

export function orderRoutes(db: Db): Router {
  const router = apiRouter();

  router.post('/orders', async (req, res) => {
    const caller = callerOf(res);
    const body = req.body as CreateBody;
    await respondIdempotently(db, caller, req, res, async (tx) => ({
      status: 201,
      body: await createOrder(tx, caller.actor, {
        ...(body.customerId === undefined ? {} : { customerId: body.customerId }),
        ...(body.customer === undefined ? {} : { customer: body.customer }),
        orderDate: body.orderDate,
        ...(body.currency === undefined ? {} : { currency: body.currency }),
        salespersonId: body.salespersonId ?? null,
        locationId: body.locationId ?? null,
        note: body.note ?? null,
        ...(body.externalCodes === undefined ? {} : { externalCodes: body.externalCodes }),
        lines: body.lines.map((line) => ({
          ...(line.productId === undefined ? {} : { productId: line.productId }),
          ...(line.product === undefined ? {} : { product: line.product }),
          unit: line.unit,
          quantity: line.quantity,
          ...(line.unitPrice === undefined ? {} : { unitPrice: line.unitPrice }),
          ...(line.discount === undefined ? {} : { discount: line.discount }),
        })),
      }),
    }));
  });

  router.get('/orders', async (req, res) => {
    const query = req.query as { status?: string; customerId?: string; externalCode?: string };
    sendPage(
      res,
      await listOrders(db, actorOf(res), listRequestOf(req), {
        status: query.status,
        customerId: query.customerId,
        externalCode: query.externalCode,
      }),
    );
  });

  router.get('/orders/by-code/:system/:code', async (req, res) => {
    const actor = actorOf(res);
    const id = await recordIdByCode(
      db,
      actor.organization.id,
      ORDER_RESOURCE,
      'order',
      req.params.system as string,
      req.params.code as string,
    );
    res.json(await getOrder(db, actor, id));
  });

  router.get('/orders/:id', async (req, res) => {
    res.json(await getOrder(db, actorOf(res), req.params.id as string));
  });

  router.post('/orders/:id/cancel', async (req, res) => {
    const caller = callerOf(res);
    const body = req.body as CancelBody;
    await respondIdempotently(db, caller, req, res, async (tx) => ({
      status: 200,
      body: await cancelOrder(tx, caller.actor, { orderId: req.params.id as string, reason: body.reason }),
    }));
  });

  return router;
}
