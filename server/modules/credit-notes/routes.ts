// HTTP of credit notes: the request becomes an actor and a typed command for the posting functions (documents.ts),
// or a list request for the reads (repository.ts). Nothing here decides a rule.
import type { Router } from 'express';
import type { components } from '../../../generated/api-types.js';
import type { Actor } from '../../platform/access/actor.js';
import { acceptAmount } from '../../domain/money.js';
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
import { CREDIT_NOTE, cancelCreditNote, issueCreditNote } from './documents.js';
import { findCreditNote, listCreditNotes, partsOf, requireCreditNoteFilters } from './repository.js';
import { toCreditNote, type CreditNote } from './representation.js';

type CreateBody = components['schemas']['CreditNoteCreate'];

export function creditNoteRoutes(db: Db, connectors: ConnectorSettings): Router {
  const router = apiRouter();

  router.post('/credit-notes', async (req, res) => {
    const caller = callerOf(res);
    const body = req.body as CreateBody;
    const currency = caller.baseCurrency;
    await respondIdempotently(db, caller, req, res, async (tx) => {
      const posted = await issueCreditNote(tx, caller.actor, {
        customer: body.customer,
        invoiceId: body.invoiceId,
        type: body.type ?? 'adjustment',
        reason: body.reason,
        ...(body.issueDate === undefined ? {} : { issueDate: body.issueDate }),
        notes: body.notes ?? null,
        cashRefundAmount:
          body.cashRefundAmount === undefined
            ? null
            : acceptAmount(body.cashRefundAmount, '/cashRefundAmount', currency).toFixed(),
        ...(body.externalCodes === undefined ? {} : { externalCodes: body.externalCodes }),
        lines: body.lines.map((line, i) => ({
          ...(line.type === undefined ? {} : { type: line.type }),
          ...(line.product === undefined ? {} : { product: line.product }),
          ...(line.description === undefined ? {} : { description: line.description }),
          quantity: line.quantity,
          unitPrice: acceptAmount(line.unitPrice, `/lines/${i}/unitPrice`, currency).toFixed(),
          ...(line.discount === undefined
            ? {}
            : { discount: acceptAmount(line.discount, `/lines/${i}/discount`, currency).toFixed() }),
          ...(line.taxRate === undefined ? {} : { taxRate: String(line.taxRate) }),
        })),
      });
      return { status: 201, body: await read(tx, caller.actor, posted.id) };
    });
  });

  router.get('/credit-notes', async (req, res) => {
    const actor = actorOf(res);
    const query = req.query as { status?: string; customerId?: string; invoiceId?: string; externalCode?: string };
    await requireCreditNoteFilters(db, actor.organization.id, query);
    const page = await listCreditNotes(db, actor, listRequestOf(req), query);
    const parts = await partsOf(
      db,
      actor.organization.id,
      page.rows.map((row) => row.id),
    );
    sendPage(res, { ...page, rows: page.rows.map((row) => toCreditNote(row, parts.get(row.id)!, actor)) });
  });

  router.get('/credit-notes/by-code/:system/:code', async (req, res) => {
    const actor = actorOf(res);
    const id = await recordIdByCode(
      db,
      actor.organization.id,
      CREDIT_NOTE,
      'credit note',
      req.params.system as string,
      req.params.code as string,
    );
    res.json(await read(db, actor, id));
  });

  router.get('/credit-notes/:id', async (req, res) => {
    res.json(await read(db, actorOf(res), req.params.id as string));
  });

  documentActionRoute(router, db, '/credit-notes/:id/cancel', cancelCreditNote, read, (actor, id) =>
    checkReversible(db, connectors, actor.organization.id, { type: 'credit_note', id }, 'Cancelled'),
  );

  return router;
}

/** The credit note as GET answers it; 404 not_found when the organisation has none with this id. */
export async function read(db: Db | Tx, actor: Actor, id: string): Promise<CreditNote> {
  const found = await findCreditNote(db, actor.organization.id, id);
  if (!found) throw new ApiError('not_found', `There is no credit note ${id} in this organisation.`);
  return toCreditNote(found.row, found.parts, actor);
}
