import type { Router } from 'express';
import type { components } from '../../../generated/api-types.js';
import { actorOf, callerOf } from '../../platform/access/context.js';
import type { Db } from '../../platform/database/transaction.js';
import { respondIdempotently } from '../../platform/http/idempotency.js';
import { listRequestOf, sendPage } from '../../platform/lists/http.js';
import { priceFilters } from './repository.js';
import { getPrice, listPrices, setPrices } from './service.js';
import { apiRouter } from '../../platform/http/router.js';

type PricesUpsert = components['schemas']['PricesUpsert'];

/** GET /prices, GET /prices/{id}, PUT /prices (a batch of up to 500, all or nothing). */
export function priceRoutes(db: Db): Router {
  const router = apiRouter();

  router.get('/prices', async (req, res) => {
    sendPage(
      res,
      await listPrices(db, actorOf(res), listRequestOf(req), priceFilters(req.query as Record<string, unknown>)),
    );
  });

  router.put('/prices', async (req, res) => {
    const caller = callerOf(res);
    const { items } = req.body as PricesUpsert;
    await respondIdempotently(db, caller, req, res, async (tx) => ({
      status: 200,
      body: { data: await setPrices(tx, caller.actor, items) },
    }));
  });

  router.get('/prices/:id', async (req, res) => {
    res.json(await getPrice(db, actorOf(res), req.params.id as string));
  });

  return router;
}
