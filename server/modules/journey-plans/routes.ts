import type { Router } from 'express';
import type { components } from '../../../generated/api-types.js';
import { actorOf, callerOf } from '../../platform/access/context.js';
import type { Db } from '../../platform/database/transaction.js';
import { respondIdempotently } from '../../platform/http/idempotency.js';
import { listRequestOf, sendPage } from '../../platform/lists/http.js';
import { getJourneyPlan, listJourneyPlans, replaceJourneyPlan } from './service.js';
import { apiRouter } from '../../platform/http/router.js';

/** GET/PUT /journey-plans, GET /journey-plans/{id}. */
export function journeyPlanRoutes(db: Db): Router {
  const router = apiRouter();

  router.get('/journey-plans', async (req, res) => {
    sendPage(
      res,
      await listJourneyPlans(db, actorOf(res), listRequestOf(req), req.query as Record<string, string | undefined>),
    );
  });

  router.put('/journey-plans', async (req, res) => {
    const caller = callerOf(res);
    await respondIdempotently(db, caller, req, res, async (tx) => {
      const { created, plan } = await replaceJourneyPlan(
        tx,
        caller.actor,
        req.body as components['schemas']['JourneyPlanReplace'],
      );
      return { status: created ? 201 : 200, body: plan };
    });
  });

  router.get('/journey-plans/:id', async (req, res) => {
    res.json(await getJourneyPlan(db, actorOf(res), req.params.id as string));
  });

  return router;
}
