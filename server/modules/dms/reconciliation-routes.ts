// GET /dms/{system}/reconciliations: the daily reconciliations of a connection's salesmen (reconciliation.ts), oldest
// change first, filtered by salesman and business date.
import type { Router } from 'express';
import { actorOf } from '../../platform/access/context.js';
import type { Db } from '../../platform/database/transaction.js';
import { dateProblem } from '../../platform/dates.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { apiRouter } from '../../platform/http/router.js';
import { listRequestOf, sendPage } from '../../platform/lists/http.js';
import { requireConnection } from './connections.js';
import { listReconciliations } from './reconciliation-reads.js';

export function reconciliationRoutes(db: Db): Router {
  const router = apiRouter();
  router.get('/dms/:system/reconciliations', async (req, res) => {
    const actor = actorOf(res);
    const connection = await requireConnection(db, actor.organization.id, req.params.system as string);
    const query = req.query as { salesman?: string; date?: string };
    const problem = query.date === undefined ? null : dateProblem(query.date);
    if (problem)
      throw new ApiError('invalid_field', `date ${problem}.`, [
        { field: '/query/date', code: 'invalid_field', message: problem },
      ]);
    sendPage(
      res,
      await listReconciliations(db, connection, listRequestOf(req), { salesman: query.salesman, date: query.date }),
    );
  });
  return router;
}
