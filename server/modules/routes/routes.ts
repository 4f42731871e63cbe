import type { Router } from 'express';
import type pg from 'pg';
import { callerOf } from '../../platform/access/context.js';
import { respondIdempotently } from '../../platform/http/idempotency.js';
import { resourceRoutes } from '../../platform/resources/routes.js';
import { replaceRouteOutlets } from './outlets.js';
import { routeFilters } from './repository.js';
import { routes } from './service.js';

/** GET /routes, GET /routes/{id}, GET/PUT /routes/by-code/{system}/{code}, PUT /routes/{id}/outlets. */
export function routeRoutes(pool: pg.Pool): Router {
  const router = resourceRoutes(pool, routes, { path: '/routes', filters: routeFilters });
  router.put('/routes/:id/outlets', async (req, res) => {
    const caller = callerOf(res);
    const { customerIds } = req.body as { customerIds: string[] };
    await respondIdempotently(pool, caller, req, res, async (tx) => ({ status: 200, body: await replaceRouteOutlets(tx, caller, req.params.id as string, customerIds) }));
  });
  return router;
}
