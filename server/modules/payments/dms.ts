// Money from the DMS: customer collections (PY), allocated to CS invoices by number and recorded on the salesman's
// DMS day, and cheque processing (cleared: nothing moves; bounced: the collection's receipts are reversed). Both are
// mapped onto this module's posting functions (declared with the payment document type in its manifest; written with
// the DMS's kit); a reversal asks the accounting system first, as REST does. A collection's mapping is pure
// (collectionToCommand); a cheque's processing maps onto no command (it clears nothing, or reverses the receipts).
import { reversePayment, recordPayment, type RecordPaymentCommand } from './documents.js';
import { checkReversible } from '../postings/reversal.js';
import type { Db, Tx } from '../../platform/database/transaction.js';
import { Decimal } from 'decimal.js';
import type { BodyOf } from '../dms/canonical.js';
import { DmsRejection, DmsWait, waitKeys } from '../dms/reasons.js';
import { collectionReceipts, customerByCode, invoiceByNumber, reasonByCode } from '../dms/handlers/lookup.js';
import { vanDayOf } from '../dms/handlers/van-day.js';
import { requireAccounts } from '../dms/handlers/setup.js';
import type { CanonicalDocument, DmsContext, DmsRunner, DocumentHandler } from '../dms/handlers/types.js';

/** The receipts a reversal would undo, each asked about in the accounting system (held: R09 naming it). */
async function askAboutReceipts(
  runner: DmsRunner,
  context: DmsContext,
  receiptIds: readonly string[],
  what: string,
): Promise<void> {
  for (const id of receiptIds)
    await checkReversible(runner.db, runner.settings, context.actor.organization.id, { type: 'payment', id }, what);
}

/**
 * Reverses the receipts through the payments module. `waitWhilePending`: a receipt whose accounting posting is still
 * pending makes the reversal wait (R08 after 48 hours) instead of cancelling that posting: the spec's rule for a
 * bounced cheque, held by planReversal (ReversalOptions).
 */
async function reverseReceipts(
  tx: Tx,
  context: DmsContext,
  receiptIds: readonly string[],
  reason: string,
  options: { waitWhilePending?: boolean } = {},
): Promise<void> {
  for (const id of receiptIds) await reversePayment(tx, context.actor, id, reason, options);
}

/** The receipts of a collection still posted, from its first receipt (a read: in a transaction or before one). */
async function receiptsOf(tx: Db, organizationId: string, firstReceiptId: string): Promise<string[]> {
  const first = await tx
    .selectFrom('payments')
    .select('receipt_group_id')
    .where('organization_id', '=', organizationId)
    .where('id', '=', firstReceiptId)
    .executeTakeFirstOrThrow();
  const rows = await tx
    .selectFrom('payments')
    .select(['id', 'status'])
    .where('organization_id', '=', organizationId)
    .where('receipt_group_id', '=', first.receipt_group_id)
    .orderBy('id')
    .execute();
  return rows.filter((row) => row.status === 'posted').map((row) => row.id);
}

export const customerCollection: DocumentHandler = {
  async prepare(runner, context, document) {
    const receipts = await receiptsOf(runner.db, context.actor.organization.id, document.previous!.mikonoId!);
    await askAboutReceipts(runner, context, receipts, 'Reversed');
  },
  async apply(tx, context, document) {
    const organizationId = context.actor.organization.id;
    if (document.previous) {
      if (document.status !== 'cancelled')
        throw new DmsRejection(
          'R09',
          `Collection ${document.number} was ${document.previous.dmsStatus}; the only change of status the service takes is to cancelled.`,
        );
      const receipts = await receiptsOf(tx, organizationId, document.previous.mikonoId!);
      await reverseReceipts(tx, context, receipts, `Cancelled in the DMS (${document.number})`);
      return { table: 'payments', id: document.previous.mikonoId! };
    }
    const body = document.document.body as BodyOf<'DmsCustomerCollectionDocument'>;
    const customer = await customerByCode(tx, organizationId, body.customerCode!);
    const invoiceIds: string[] = [];
    for (const allocation of body.allocations ?? [])
      invoiceIds.push(await invoiceByNumber(tx, organizationId, allocation.invoiceNumber));
    const { trip } = await vanDayOf(tx, context, document, body.routeCode);
    await requireAccounts(tx, context, document, { cash: true });
    const recorded = await recordPayment(
      tx,
      context.actor,
      collectionToCommand(document, { customerId: customer.id, invoiceIds, tripId: trip.id }),
    );
    return {
      table: 'payments',
      id: recorded.ids[0]!,
      accounting: { type: 'payment', id: recorded.ids[0]! },
      provides: [waitKeys.collection(document.number)],
    };
  },
};

/** What a collection's mapping needs besides the document: the ids its handler looked up. */
export interface CollectionLookups {
  customerId: string;
  /** The invoice of each allocation, in the allocations' order. */
  invoiceIds: readonly string[];
  /** The salesman's DMS day the money is collected on. */
  tripId: string;
}

/** A DMS collection as recordPayment's command (pure): its allocations, and the rest left on the customer's account. */
export function collectionToCommand(document: CanonicalDocument, lookups: CollectionLookups): RecordPaymentCommand {
  const body = document.document.body as BodyOf<'DmsCustomerCollectionDocument'>;
  const allocations = (body.allocations ?? []).map((allocation, i) => ({
    invoiceId: lookups.invoiceIds[i]!,
    amount: { amount: allocation.amount, currency: body.currency },
  }));
  return {
    customerId: lookups.customerId,
    method: body.method,
    amount: { amount: body.amount, currency: body.currency },
    paymentDate: document.date,
    reference: body.reference ?? null,
    tripId: lookups.tripId,
    allocations,
    // The rest stays on the customer's account (the arrival check made sure the allocations do not pass the amount).
    unallocated: {
      amount: restOf(
        body.amount,
        allocations.map((a) => a.amount.amount),
      ),
      currency: body.currency,
    },
  };
}

/** amount - sum(parts), exact (decimal strings). */
function restOf(amount: string, parts: readonly string[]): string {
  return parts.reduce((rest, part) => rest.minus(part), new Decimal(amount)).toFixed();
}

export const chequeProcessing: DocumentHandler = {
  preparesFresh: true,
  async prepare(runner, context, document) {
    if (document.status !== 'bounced') return;
    const body = document.document.body as BodyOf<'DmsChequeProcessingDocument'>;
    const found = await collectionReceipts(
      runner.db,
      context.actor.organization.id,
      context.connection.distributor_code,
      body.collectionNumber,
    ).catch((error: unknown) => {
      if (error instanceof DmsWait) return null;
      throw error;
    });
    if (found) await askAboutReceipts(runner, context, found.ids, 'Reversed');
  },
  async apply(tx, context, document) {
    const organizationId = context.actor.organization.id;
    const body = document.document.body as BodyOf<'DmsChequeProcessingDocument'>;
    if (body.reasonCode) await reasonByCode(tx, organizationId, body.reasonCode, 'cheque');
    const collection = await collectionReceipts(
      tx,
      organizationId,
      context.connection.distributor_code,
      body.collectionNumber,
    );
    const method = await tx
      .selectFrom('payments')
      .select(['id', 'method', 'reference'])
      .where('organization_id', '=', organizationId)
      .where('id', 'in', collection.ids.length > 0 ? collection.ids : [''])
      .execute();
    if (method.some((receipt) => receipt.method !== 'cheque'))
      throw new DmsRejection('R09', `Collection ${body.collectionNumber} was not paid by cheque.`);
    if (document.previous?.dmsStatus === 'bounced')
      throw new DmsRejection(
        'R09',
        `Cheque ${body.chequeNumber} has bounced and its receipts are reversed; a bounced cheque cannot clear. Record a new collection.`,
      );
    if (document.status === 'cleared')
      return { table: 'payments', id: collection.ids[0] ?? document.previous?.mikonoId ?? collection.documentId };
    if (collection.ids.length === 0)
      throw new DmsRejection('R09', `The receipts of collection ${body.collectionNumber} are already reversed.`);
    const first = collection.ids[0]!;
    await reverseReceipts(
      tx,
      context,
      collection.ids,
      `Cheque ${body.chequeNumber} bounced${body.reasonCode ? ` (${body.reasonCode})` : ''} (DMS ${document.number})`,
      { waitWhilePending: true },
    );
    return { table: 'payments', id: first };
  },
};
