// Trip settlements: the closing of a trip's sheet (sheet.ts; read over REST through service.ts) by the operator CLI
// and the DMS's route settlement through the posting functions below, each `(tx, actor, command)` and one
// transaction: the settlement and its expenses, the figures frozen, `settlement.closed`, then the trip closed by the
// trips module's own move (`trip.closed`).
//
// Decisions (README, Settlements):
// - Settling closes the settlement AND the trip; a trip closes only after its settlement (closeTrip refuses without
//   one). A trip with nothing sold, collected or credited on it is closed with a settlement of zero
//   (closeTripWithNothingToSettle, `admin trip close`), so every closed trip has its sheet.
// - Only a returned trip is settled (409 invalid_state otherwise, a second settle included: the trip is closed).
// - Expenses are crew allowances and receipted purchases paid from trip cash; a purchase names its receipt. Fuel is
//   never paid from trip cash: an expense whose kind or description says fuel (fuel, diesel, petrol, gasoline) is 422
//   business_rule naming it.
// - Lock order: the trip's row first (FOR UPDATE: a second settle waits, then finds the trip closed), then numbers.
import { queuePostings } from '../postings/queue.js';
import { Decimal } from 'decimal.js';
import type { Actor } from '../../platform/access/actor.js';
import { minorUnits, MAX_AMOUNT } from '../../domain/money.js';
import type { Tx } from '../../platform/database/transaction.js';
import { ApiError, type FieldError } from '../../platform/errors/api-error.js';
import { recordEvent } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';
import { findTrip, type TripRow } from '../trips/repository.js';
import { refuseClosedPeriod } from '../../domain/periods.js';
import { closeTrip, refuseHandMoveOfDmsTrip, requireDeliveryModule } from '../trips/documents.js';
import { findSettlement, settlementOfTrip } from './repository.js';
import { readSheet, type Settlement } from './sheet.js';

export const SETTLEMENT = 'settlement';
export const SETTLEMENT_CLOSED = 'settlement.closed';
export const SETTLEMENT_UPDATED = 'settlement.updated';
/** At most this many sheets on a page of GET /settlements (the spec's limit). */
export const MAX_SHEETS_PER_PAGE = 5;
export const MAX_EXPENSES = 100;
export const EXPENSE_KINDS = ['allowance', 'purchase'] as const;
export type ExpenseKind = (typeof EXPENSE_KINDS)[number];
/** Words that say an expense is fuel, which is never paid from trip cash. */
const FUEL = /\b(fuel|diesel|petrol|gasoline|gas oil)\b/i;

export interface SettlementExpense {
  kind: string;
  /** A decimal string in the organisation's base currency, more than 0. */
  amount: string;
  description: string;
  /** Required for a purchase. */
  receiptReference?: string | null;
}

export interface SettleTripCommand {
  tripId: string;
  /** The cash handed in: a decimal string in the organisation's base currency, 0 or more. */
  handedIn: string;
  expenses: SettlementExpense[];
  notes?: string | null;
}

/**
 * Closes the settlement of a returned trip: the cash handed in and the expenses paid from trip cash are recorded with
 * the sheet's expected cash and variance as they are now (frozen), `settlement.closed` is recorded, and the trip is
 * closed (`trip.closed`). Returns the sheet as GET /trips/{id}/settlement then answers.
 */
export async function settleTrip(tx: Tx, actor: Actor, command: SettleTripCommand): Promise<Settlement> {
  requireDeliveryModule(actor);
  const organizationId = actor.organization.id;
  const currency = actor.organization.baseCurrency;
  // The books first: a settlement books the trip's cash on its business date, so a closed period refuses it. The
  // organisation's row (FOR SHARE) comes before the trip's in every operation's lock order (a collection on the trip
  // takes them in that order too); the business date never changes, so it is read before the trip's lock.
  const dated = await findTrip(tx, organizationId, command.tripId);
  if (!dated) throw new ApiError('not_found', `No trip ${command.tripId} in this organisation.`);
  await refuseClosedPeriod(tx, organizationId, dated.business_date, '/tripId');
  const trip = await lockTrip(tx, organizationId, command.tripId);
  refuseHandMoveOfDmsTrip(actor, trip);
  const existing = await settlementOfTrip(tx, organizationId, trip.id);
  if (existing)
    throw new ApiError(
      'invalid_state',
      `Trip ${trip.number} is settled already (settlement ${existing.id}, closed ${existing.closed_at.toISOString()}); a settlement is closed once.`,
    );
  if (trip.status !== 'returned')
    throw new ApiError(
      'invalid_state',
      `Trip ${trip.number} is ${trip.status}; a trip is settled once it has returned (its van counted).`,
    );

  const { handedIn, expenses } = checkCommand(command, currency);
  const cashExpenses = expenses.reduce((total, expense) => total.plus(expense.amount), new Decimal(0));
  const sheet = await readSheet(tx, organizationId, trip, null, currency);
  const cashExpected = new Decimal(sheet.cashExpectedFromSales.amount).minus(cashExpenses);
  const variance = handedIn.minus(cashExpected);

  const id = newId('stl');
  // Its journal entry (expenses and difference) in the accounting system, queued with it.
  const { posting_status, posting_reason } = await queuePostings(tx, organizationId, {
    type: 'settlement',
    id,
    number: `STL-${trip.number}`,
  });
  await tx
    .insertInto('settlements')
    .values({
      organization_id: organizationId,
      id,
      trip_id: trip.id,
      status: 'closed',
      currency,
      posting_status,
      posting_reason,
      handed_in: handedIn.toFixed(),
      cash_expenses: cashExpenses.toFixed(),
      cash_expected: cashExpected.toFixed(),
      variance: variance.toFixed(),
      notes: command.notes?.trim() ? command.notes.trim() : null,
    })
    .execute();
  if (expenses.length > 0) {
    await tx
      .insertInto('settlement_expenses')
      .values(
        expenses.map((expense, i) => ({
          organization_id: organizationId,
          settlement_id: id,
          line_number: i + 1,
          kind: expense.kind,
          description: expense.description,
          amount: expense.amount.toFixed(),
          receipt_reference: expense.receiptReference,
        })),
      )
      .execute();
  }
  await recordEvent(tx, organizationId, SETTLEMENT_CLOSED, SETTLEMENT, id);
  await closeTrip(tx, actor, trip.id);
  return readSheet(
    tx,
    organizationId,
    (await findTrip(tx, organizationId, trip.id))!,
    await findSettlement(tx, organizationId, id),
    currency,
  );
}

/**
 * Closes a returned trip that has nothing to settle (no invoice, receipt or credit note on it): its settlement is
 * closed at zero (nothing handed in, no expenses) and the trip with it. A trip with money on it is 409 invalid_state:
 * it is settled with the cash handed in (settleTrip).
 */
export async function closeTripWithNothingToSettle(tx: Tx, actor: Actor, tripId: string): Promise<Settlement> {
  requireDeliveryModule(actor);
  const organizationId = actor.organization.id;
  const trip = await lockTrip(tx, organizationId, tripId);
  refuseHandMoveOfDmsTrip(actor, trip);
  if (trip.status === 'returned') {
    const sheet = await readSheet(tx, organizationId, trip, null, actor.organization.baseCurrency);
    const documents =
      sheet.sales.invoiceCount +
      sheet.collections.receiptCount +
      sheet.collections.otherCurrencyReceipts +
      sheet.creditNotes.count;
    if (documents > 0) {
      throw new ApiError(
        'invalid_state',
        `Trip ${trip.number} has ${sheet.sales.invoiceCount} invoice(s), ${sheet.collections.receiptCount + sheet.collections.otherCurrencyReceipts} receipt(s) and ${sheet.creditNotes.count} credit note(s) on it: settle it with the cash handed in (admin trip settle), which closes it.`,
      );
    }
  }
  return settleTrip(tx, actor, { tripId, handedIn: '0', expenses: [] });
}

/** The trip's row locked (FOR UPDATE) for the settlement's transaction, then read; 404 when it is not the organisation's. */
async function lockTrip(tx: Tx, organizationId: string, tripId: string): Promise<TripRow> {
  const locked = await tx
    .selectFrom('trips')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('id', '=', tripId)
    .forUpdate()
    .executeTakeFirst();
  if (!locked) throw new ApiError('not_found', `No trip ${tripId} in this organisation.`);
  return (await findTrip(tx, organizationId, tripId))!;
}

interface CheckedExpense {
  kind: ExpenseKind;
  amount: Decimal;
  description: string;
  receiptReference: string | null;
}

/** The command's amounts and expenses, each problem naming its field (`/handedIn`, `/expenses/0/amount`). */
function checkCommand(command: SettleTripCommand, currency: string): { handedIn: Decimal; expenses: CheckedExpense[] } {
  const problems: FieldError[] = [];
  const amount = (value: string, field: string, positive: boolean): Decimal => {
    const problem = !/^-?\d{1,20}(\.\d{1,20})?$/.test(value)
      ? 'a decimal amount such as 125000 or 18.50'
      : new Decimal(value).isNegative()
        ? 'must not be negative'
        : positive && new Decimal(value).isZero()
          ? 'must be more than 0'
          : new Decimal(value).greaterThanOrEqualTo(MAX_AMOUNT)
            ? `must be less than ${MAX_AMOUNT.toFixed()}`
            : new Decimal(value).decimalPlaces() > minorUnits(currency)
              ? `${currency} has ${minorUnits(currency)} decimal places`
              : null;
    if (problem) problems.push({ field, code: 'invalid_field', message: problem });
    return problem ? new Decimal(0) : new Decimal(value);
  };
  const handedIn = amount(command.handedIn, '/handedIn', false);
  if (command.expenses.length > MAX_EXPENSES)
    problems.push({ field: '/expenses', code: 'invalid_field', message: `at most ${MAX_EXPENSES} expenses` });
  const expenses = command.expenses.map((expense, i): CheckedExpense => {
    const field = (name: string) => `/expenses/${i}/${name}`;
    const description = expense.description.trim();
    const receiptReference = expense.receiptReference?.trim() ? expense.receiptReference.trim() : null;
    if (FUEL.test(expense.kind) || FUEL.test(description)) {
      problems.push({
        field: field(FUEL.test(expense.kind) ? 'kind' : 'description'),
        code: 'business_rule',
        message:
          'fuel is never paid from trip cash (it is a vehicle cost, booked apart); only crew allowances and receipted purchases are',
      });
    } else if (!(EXPENSE_KINDS as readonly string[]).includes(expense.kind)) {
      problems.push({ field: field('kind'), code: 'invalid_field', message: `one of ${EXPENSE_KINDS.join(', ')}` });
    }
    if (description === '' || description.length > 200)
      problems.push({
        field: field('description'),
        code: 'invalid_field',
        message: 'say what was paid for, 1 to 200 characters',
      });
    if (receiptReference !== null && receiptReference.length > 64)
      problems.push({ field: field('receiptReference'), code: 'invalid_field', message: 'at most 64 characters' });
    if (expense.kind === 'purchase' && receiptReference === null)
      problems.push({
        field: field('receiptReference'),
        code: 'business_rule',
        message: 'a purchase paid from trip cash names its receipt',
      });
    return {
      kind: expense.kind as ExpenseKind,
      amount: amount(expense.amount, field('amount'), true),
      description,
      receiptReference,
    };
  });
  if (command.notes && command.notes.length > 500)
    problems.push({ field: '/notes', code: 'invalid_field', message: 'at most 500 characters' });
  if (problems.length > 0) {
    const code = problems.some((p) => p.code === 'business_rule') ? 'business_rule' : 'invalid_field';
    throw new ApiError(
      code,
      `The settlement cannot be closed: ${problems.map((p) => `${p.field.slice(1)}: ${p.message}`).join('; ')}.`,
      problems,
    );
  }
  return { handedIn, expenses };
}
