import type { Router } from 'express';
import type { Db } from '../../platform/database/transaction.js';
import { callerOf } from '../../platform/access/context.js';
import { respondIdempotently } from '../../platform/http/idempotency.js';
import { resourceRoutes } from '../../platform/resources/routes.js';
import { replaceRouteOutlets } from './outlets.js';
import { routeFilters } from './repository.js';
import { routes } from './service.js';

/** GET /routes, GET /routes/{id}, GET/PUT /routes/by-code/{system}/{code}, PUT /routes/{id}/outlets. */
export function routeRoutes(db: Db): Router {
  const router = resourceRoutes(db, routes, { path: '/routes', filters: routeFilters });
  router.put('/routes/:id/outlets', async (req, res) => {
    const caller = callerOf(res);
    const { customerIds } = req.body as { customerIds: string[] };
    await respondIdempotently(db, caller, req, res, async (tx) => ({
      status: 200,
      body: await replaceRouteOutlets(tx, caller.actor, req.params.id as string, customerIds),
    }));
  });
  return router;
}
