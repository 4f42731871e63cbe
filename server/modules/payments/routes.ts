// HTTP of payments: the request becomes an actor and a typed command for the posting functions (documents.ts), or a
// list request for the reads (repository.ts). Nothing here decides a rule.
import type { Router } from 'express';
import type { components } from '../../../generated/api-types.js';
import type { Actor } from '../../platform/access/actor.js';
import { actorOf, callerOf } from '../../platform/access/context.js';
import type { Db, Tx } from '../../platform/database/transaction.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { recordIdByCode } from '../../platform/external-codes/external-codes.js';
import { respondIdempotently } from '../../platform/http/idempotency.js';
import { documentActionRoute } from '../../platform/http/document-action.js';
import type { ConnectorSettings } from '../../connectors/connections.js';
import { checkReversible } from '../postings/reversal.js';
import { apiRouter } from '../../platform/http/router.js';
import { listRequestOf, sendPage } from '../../platform/lists/http.js';
import { recordPayment, reversePayment } from './documents.js';
import {
  findCollection,
  findPayment,
  findPayments,
  listPayments,
  PAYMENT_COLLECTION,
  requirePaymentFilters,
  type PaymentFilters,
} from './repository.js';
import { toPayment, type Payment } from './representation.js';

type CreateBody = components['schemas']['PaymentCreate'];

export function paymentRoutes(db: Db, connectors: ConnectorSettings): Router {
  const router = apiRouter();

  router.post('/payments', async (req, res) => {
    const caller = callerOf(res);
    const body = req.body as CreateBody;
    await respondIdempotently(db, caller, req, res, async (tx) => {
      const recorded = await recordPayment(tx, caller.actor, {
        customerId: body.customerId,
        method: body.method,
        amount: body.amount,
        paymentDate: body.paymentDate,
        reference: body.reference ?? null,
        tripId: body.tripId ?? null,
        allocations: body.allocations ?? [],
        unallocated: body.unallocated ?? null,
        ...(body.externalCodes === undefined ? {} : { externalCodes: body.externalCodes }),
      });
      const payments = await findPayments(tx, caller.actor.organization.id, recorded.ids);
      return { status: 201, body: { payments: payments.map(toPayment) } };
    });
  });

  router.get('/payments', async (req, res) => {
    const actor = actorOf(res);
    const query = req.query as PaymentFilters;
    await requirePaymentFilters(db, actor.organization.id, query);
    const page = await listPayments(db, actor, listRequestOf(req), query);
    sendPage(res, { ...page, rows: page.rows.map(toPayment) });
  });

  // A code names a collection (decision 0030): the answer is its receipts, the shape POST /payments answered.
  router.get('/payments/by-code/:system/:code', async (req, res) => {
    const actor = actorOf(res);
    const groupId = await recordIdByCode(
      db,
      actor.organization.id,
      PAYMENT_COLLECTION,
      'collection',
      req.params.system as string,
      req.params.code as string,
    );
    const receipts = await findCollection(db, actor.organization.id, groupId);
    // A code is written in the transaction of its receipts, and receipts are never deleted: none here is a fault.
    if (receipts.length === 0)
      throw new Error(
        `the payment code ${req.params.system}/${req.params.code} names receipt group ${groupId}, which has no receipts`,
      );
    res.json({ payments: receipts.map(toPayment) });
  });

  router.get('/payments/:id', async (req, res) => {
    res.json(await read(db, actorOf(res), req.params.id as string));
  });

  documentActionRoute(router, db, '/payments/:id/reverse', reversePayment, read, (actor, id) =>
    checkReversible(db, connectors, actor.organization.id, { type: 'payment', id }, 'Reversed'),
  );

  return router;
}

/** The receipt as GET answers it; 404 not_found when the organisation has none with this id. */
export async function read(db: Db | Tx, actor: Actor, id: string): Promise<Payment> {
  const found = await findPayment(db, actor.organization.id, id);
  if (!found) throw new ApiError('not_found', `There is no payment ${id} in this organisation.`);
  return toPayment(found);
}
