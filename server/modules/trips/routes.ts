import type { Router } from 'express';
import { actorOf } from '../../platform/access/context.js';
import type { Db } from '../../platform/database/transaction.js';
import { listRequestOf, sendPage } from '../../platform/lists/http.js';
import { apiRouter } from '../../platform/http/router.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { timestampProblem, toUtc } from '../../platform/dates.js';
import { getTrip, listTripLocations, listTrips } from './service.js';

/** GET /trips, GET /trips/{id}, GET /trips/{id}/locations: reads only (trips are moved by the CLI, the sandbox, the DMS). */
export function tripRoutes(db: Db): Router {
  const router = apiRouter();

  router.get('/trips', async (req, res) => {
    const query = req.query as Record<string, string | undefined>;
    sendPage(
      res,
      await listTrips(db, actorOf(res), listRequestOf(req), {
        status: query.status,
        salespersonId: query.salespersonId,
        routeId: query.routeId,
        vanLocationId: query.vanLocationId,
        businessDate: query.businessDate,
      }),
    );
  });

  router.get('/trips/:id', async (req, res) => {
    res.json(await getTrip(db, actorOf(res), req.params.id as string));
  });

  router.get('/trips/:id/locations', async (req, res) => {
    const query = req.query as Record<string, unknown>;
    const since = query.since as string | undefined;
    const problem = since === undefined ? null : timestampProblem(since);
    if (problem)
      throw new ApiError('invalid_field', `since ${problem}.`, [
        { field: '/query/since', code: 'invalid_field', message: problem },
      ]);
    sendPage(
      res,
      await listTripLocations(db, actorOf(res), req.params.id as string, {
        limit: query.limit === undefined ? undefined : Number(query.limit),
        cursor: query.cursor as string | undefined,
        since: since === undefined ? undefined : toUtc(since),
      }),
    );
  });

  return router;
}
