// The one shape of a document's action over HTTP (POST /invoices/{id}/void, /payments/{id}/reverse,
// /credit-notes/{id}/cancel): a `reason` in the body, the module's posting function and the read of the document as
// GET answers it, in one idempotent transaction, answered 200 with the document. The rule is the module's; this only
// carries the request to it.
import type { Router } from 'express';
import type { Actor } from '../access/actor.js';
import { callerOf } from '../access/context.js';
import type { Db, Tx } from '../database/transaction.js';
import { respondIdempotently } from './idempotency.js';

export function documentActionRoute<Document>(
  router: Router,
  db: Db,
  path: `/${string}/:id/${string}`,
  act: (tx: Tx, actor: Actor, id: string, reason: string) => Promise<unknown>,
  read: (tx: Tx, actor: Actor, id: string) => Promise<Document>,
  /** Asked before the transaction (outside it: it may call an external system), and may refuse the action. */
  before?: (actor: Actor, id: string) => Promise<void>,
): void {
  router.post(path, async (req, res) => {
    const caller = callerOf(res);
    const id = req.params.id as string;
    const { reason } = req.body as { reason: string };
    if (before) await before(caller.actor, id);
    await respondIdempotently(db, caller, req, res, async (tx) => {
      await act(tx, caller.actor, id, reason);
      return { status: 200, body: await read(tx, caller.actor, id) };
    });
  });
}
