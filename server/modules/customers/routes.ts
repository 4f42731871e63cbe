// HTTP of customers: parameters in, service call, representation out. No SQL here.
import { Router } from 'express';
import type pg from 'pg';
import { callerOf } from '../../platform/access/context.js';
import { respondIdempotently } from '../../platform/http/idempotency.js';
import { listRequestOf, sendPage } from '../../platform/lists/http.js';
import { changeCustomer, createCustomer, getCustomer, getCustomerByCode, listCustomerPage, upsertCustomerByCode } from './service.js';

export function customerRoutes(pool: pg.Pool): Router {
  const router = Router();

  router.get('/customers', async (req, res) => {
    const query = req.query as Record<string, string | undefined>;
    const page = await listCustomerPage(pool, callerOf(res), listRequestOf(req), {
      status: query.status, channel: query.channel, routeId: query.routeId, region: query.region, externalCode: query.externalCode,
    });
    sendPage(res, page);
  });

  router.post('/customers', async (req, res) => {
    const caller = callerOf(res);
    await respondIdempotently(pool, caller, req, res, async (tx) => ({ status: 201, body: await createCustomer(tx, caller, req.body) }));
  });

  router.get('/customers/by-code/:system/:code', async (req, res) => {
    res.json(await getCustomerByCode(pool, callerOf(res), req.params.system!, req.params.code!));
  });

  router.put('/customers/by-code/:system/:code', async (req, res) => {
    const caller = callerOf(res);
    await respondIdempotently(pool, caller, req, res, async (tx) => {
      const { created, customer } = await upsertCustomerByCode(tx, caller, req.params.system!, req.params.code!, req.body);
      return { status: created ? 201 : 200, body: customer };
    });
  });

  router.get('/customers/:id', async (req, res) => {
    res.json(await getCustomer(pool, callerOf(res), req.params.id!));
  });

  router.patch('/customers/:id', async (req, res) => {
    const caller = callerOf(res);
    await respondIdempotently(pool, caller, req, res, async (tx) => ({ status: 200, body: await changeCustomer(tx, caller, req.params.id!, req.body) }));
  });

  return router;
}
