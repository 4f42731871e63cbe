// GET /trips/{id}/settlement and GET /settlements: reads only (settlements are closed by the operator CLI and, later,
// the DMS's route settlement).
import type { Router } from 'express';
import { actorOf } from '../../platform/access/context.js';
import type { Db } from '../../platform/database/transaction.js';
import { apiRouter } from '../../platform/http/router.js';
import { listRequestOf, sendPage } from '../../platform/lists/http.js';
import { getTripSettlement, listSettlements } from './service.js';

export function settlementRoutes(db: Db): Router {
  const router = apiRouter();

  router.get('/trips/:id/settlement', async (req, res) => {
    res.json(await getTripSettlement(db, actorOf(res), req.params.id as string));
  });

  router.get('/settlements', async (req, res) => {
    const query = req.query as Record<string, string | undefined>;
    sendPage(
      res,
      await listSettlements(db, actorOf(res), listRequestOf(req), {
        salespersonId: query.salespersonId,
        tripId: query.tripId,
      }),
    );
  });

  return router;
}
