// A closed settlement as the accounting system takes it (its posting subject): one journal entry of the trip's cash,
// dated the trip's business date: its cash expenses (allowances, receipted purchases) and its difference. The cash
// the crew collected was booked by the receipts' own postings; what they spent and what they were short comes out of
// cash on hand here (an overage goes in). Nothing to book (no expense, no difference) is not_applicable. The cash
// line goes to the organisation's cash account (`admin accounts set --cash`), else to `Cash on hand`; the other
// accounts keep these names. Writes `settlement.updated`.
import { getAccounts } from '../../platform/access/accounts.js';
import { Decimal } from 'decimal.js';
import { sql } from 'kysely';
import { recordEvent } from '../../platform/events/outbox.js';
import type { AccountingJournalEntry } from '../../connectors/types.js';
import type { PostingBlock, PostingSubject } from '../postings/subject.js';
import { SETTLEMENT, SETTLEMENT_UPDATED } from './documents.js';

export const JOURNAL_ACCOUNTS = {
  expenses: 'Trip expenses',
  shortages: 'Cash shortages',
  overages: 'Cash overages',
  cash: 'Cash on hand',
} as const;

export const settlementPosting: PostingSubject = {
  async accounting(tx, organizationId, id) {
    const row = await tx
      .selectFrom('settlements as s')
      .innerJoin('trips as t', (join) =>
        join.onRef('t.organization_id', '=', 's.organization_id').onRef('t.id', '=', 's.trip_id'),
      )
      .select(['s.currency', 's.cash_expenses', 's.variance', 't.number as trip_number'])
      // The business date as its calendar string: pg would make a DATE a Date at local midnight.
      .select(sql<string>`to_char(t.business_date, 'YYYY-MM-DD')`.as('business_day'))
      .where('s.organization_id', '=', organizationId)
      .where('s.id', '=', id)
      .executeTakeFirstOrThrow();
    const expenses = new Decimal(row.cash_expenses);
    const variance = new Decimal(row.variance);
    if (expenses.isZero() && variance.isZero())
      return { kind: 'skip', reason: 'Nothing to book: the trip had no cash expenses and no cash difference.' };
    const what = `Trip ${row.trip_number} settlement`;
    const lines: AccountingJournalEntry['lines'] = [];
    if (expenses.greaterThan(0))
      lines.push({
        account: JOURNAL_ACCOUNTS.expenses,
        side: 'debit',
        amount: expenses.toFixed(),
        description: `${what}: expenses paid from trip cash`,
      });
    if (variance.lessThan(0))
      lines.push({
        account: JOURNAL_ACCOUNTS.shortages,
        side: 'debit',
        amount: variance.negated().toFixed(),
        description: `${what}: cash short`,
      });
    if (variance.greaterThan(0))
      lines.push({
        account: JOURNAL_ACCOUNTS.overages,
        side: 'credit',
        amount: variance.toFixed(),
        description: `${what}: cash over`,
      });
    // Cash on hand moves by what left it (expenses, a shortage) less what came in over (an overage).
    const cash = expenses.minus(variance);
    const cashAccount = (await getAccounts(tx, organizationId)).cashAccount ?? JOURNAL_ACCOUNTS.cash;
    if (!cash.isZero())
      lines.push({
        account: cashAccount,
        side: cash.greaterThan(0) ? 'credit' : 'debit',
        amount: cash.abs().toFixed(),
        description: `${what}: cash on hand`,
      });
    const entry: AccountingJournalEntry = {
      docNumber: `STL-${row.trip_number}`,
      txnDate: row.business_day,
      currency: row.currency,
      description: what,
      lines,
    };
    return { kind: 'call', call: (connector, requestId) => connector.postJournalEntry(requestId, entry) };
  },

  async setPosting(tx, organizationId, id, block: PostingBlock) {
    await tx
      .updateTable('settlements')
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
    await recordEvent(tx, organizationId, SETTLEMENT_UPDATED, SETTLEMENT, id);
  },
};
