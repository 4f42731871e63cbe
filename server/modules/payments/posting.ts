// A receipt as the accounting system takes it (its posting subject): a QuickBooks Payment linked to its invoice's
// Invoice (LinkedTxn), or unapplied for the rest on the account. A receipt of an invoice whose own posting is still
// pending waits for it: QuickBooks cannot link a payment to an invoice it does not hold. An invoice that was not posted
// (failed, no connection at the time) leaves the receipt unapplied there, said in the memo. Writes `payment.updated`.
import { getAccounts } from '../../platform/access/accounts.js';
import { sql } from 'kysely';
import { recordEvent } from '../../platform/events/outbox.js';
import type { AccountingPayment, AccountingPaymentMethod, AccountingType } from '../../connectors/types.js';
import type { PostingBlock, PostingSubject } from '../postings/subject.js';
import { PAYMENT } from './documents.js';

export const PAYMENT_UPDATED = 'payment.updated';

export const paymentPosting: PostingSubject = {
  async accounting(tx, organizationId, id) {
    const payment = await tx
      .selectFrom('payments as p')
      .innerJoin('customers as c', (join) =>
        join.onRef('c.organization_id', '=', 'p.organization_id').onRef('c.id', '=', 'p.customer_id'),
      )
      .leftJoin('invoices as i', (join) =>
        join.onRef('i.organization_id', '=', 'p.organization_id').onRef('i.id', '=', 'p.invoice_id'),
      )
      .select([
        'p.number',
        'p.method',
        'p.amount',
        'p.currency',
        'p.customer_id',
        'c.name as customer_name',
        'i.number as invoice_number',
        'i.posting_status as invoice_posting',
        'i.accounting_ref as invoice_ref',
      ])
      // The date as its calendar string: pg would make a DATE a Date at local midnight, which can shift the day.
      .select(sql<string>`to_char(p.payment_date, 'YYYY-MM-DD')`.as('payment_day'))
      .where('p.organization_id', '=', organizationId)
      .where('p.id', '=', id)
      .executeTakeFirstOrThrow();
    if (payment.invoice_posting === 'pending')
      return {
        kind: 'wait',
        reason: `Waiting for invoice ${payment.invoice_number} to be posted to the accounting system, to link this receipt to it.`,
      };
    const linked = payment.invoice_posting === 'posted' && payment.invoice_ref !== null;
    const document: AccountingPayment = {
      docNumber: payment.number,
      txnDate: payment.payment_day,
      currency: payment.currency,
      customer: { id: payment.customer_id, name: payment.customer_name },
      method: payment.method as AccountingPaymentMethod,
      total: String(payment.amount),
      links: linked
        ? [
            {
              invoice: { type: 'Invoice' satisfies AccountingType, id: payment.invoice_ref! },
              amount: String(payment.amount),
            },
          ]
        : [],
      // Cash goes to the organisation's cash account; other methods to QuickBooks' default (Undeposited Funds).
      depositAccount: payment.method === 'cash' ? (await getAccounts(tx, organizationId)).cashAccount : null,
    };
    return { kind: 'call', call: (connector, requestId) => connector.postPayment(requestId, document) };
  },

  async setPosting(tx, organizationId, id, block: PostingBlock) {
    await tx
      .updateTable('payments')
      .set((eb) => ({
        posting_status: block.status,
        accounting_ref: block.accountingRef,
        accounting_type: block.accountingType,
        posting_reason: block.reason,
        updated_at: eb.fn<Date>('now'),
      }))
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .execute();
    await recordEvent(tx, organizationId, PAYMENT_UPDATED, PAYMENT, id);
  },
};
