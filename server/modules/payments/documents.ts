// The posting functions of collections: record a payment (one receipt per invoice it pays, one for a rest left on
// the customer's account) and reverse one receipt. Each runs in the caller's transaction and writes the receipts,
// their customer account entries, the balances those move (through the customer-account module), the
// invoices' statuses and the events, or nothing at all. REST routes, the sandbox and (later) the DMS handler call
// these same functions.
//
// Lock order, the global one: the invoices' rows (lockInvoices, by id: first, so that collections racing for one
// invoice, or a collection racing its void, run one after the other on the balance the other left), the
// organisation's row FOR SHARE (the period check) and the trip's FOR SHARE (it cannot move on while its
// collection is recorded), then the customer's balance row, then the receipts' numbers, then the collection's
// external codes (their unique index; taken under the numbers' lock, so two collections of one organisation giving
// the same code meet at the numbers first and the second is 422 business_rule naming the code).
import { Decimal } from 'decimal.js';
import { sql, type Transaction } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';
import type { Actor } from '../../platform/access/actor.js';
import { planReversal, queuePostingsOf, type ReversalOptions } from '../postings/queue.js';
import { nextDocumentNumber } from '../../domain/documents/numbers.js';
import { acceptAmount, roundToCurrency, type Money } from '../../domain/money.js';
import { refuseClosedPeriod } from '../../domain/periods.js';
import { ApiError, type FieldError } from '../../platform/errors/api-error.js';
import { recordEvent, recordEvents } from '../../platform/events/outbox.js';
import { assignCodes } from '../../platform/external-codes/external-codes.js';
import { newId } from '../../platform/ids.js';
import {
  lockCustomerBalance,
  lockInvoices,
  postAccountEntries,
  settleInvoiceStatuses,
  type AccountEntry,
  type LockedInvoice,
} from '../customer-account/ledger.js';
import { paymentLifecycle, type PaymentStatus } from './lifecycle.js';
import { PAYMENT_COLLECTION } from './repository.js';

/** The resource name of receipts in events and account entries (their document_type). */
export const PAYMENT = 'payment';
export const PAYMENT_CREATED = 'payment.created';
export const PAYMENT_REVERSED = 'payment.reversed';

export type PaymentMethod = 'cash' | 'mobile_money' | 'cheque' | 'bank_transfer' | 'card';
/** Methods whose receipts must carry the payer's reference (a cheque number, a mobile money transaction id). */
export const NEEDS_REFERENCE: readonly PaymentMethod[] = ['cheque', 'mobile_money'];

export interface RecordPaymentCommand {
  customerId: string;
  method: PaymentMethod;
  /** The whole sum received; its currency is the collection's. */
  amount: Money;
  /** YYYY-MM-DD. */
  paymentDate: string;
  reference?: string | null;
  /** The in-transit trip it was collected on. */
  tripId?: string | null;
  /** Each to one open invoice of the customer, at most its balance, in the invoice's (= the collection's) currency. */
  allocations?: { invoiceId: string; amount: Money }[];
  /** The rest left on the customer's account; 0 when absent. */
  unallocated?: Money | null;
  /**
   * The caller's own numbers of the collection, by code system: they name the receipt group (every receipt recorded
   * here), not one receipt (decision 0030).
   */
  externalCodes?: Record<string, string>;
}

export interface RecordedPayment {
  receiptGroupId: string;
  /** The receipts' ids: the allocations' in their order, then the rest's. */
  ids: string[];
}

/** The collection's amounts, accepted: the whole sum, each allocation's part (in the allocations' order) and the unallocated rest. */
interface PaymentAmounts {
  total: Decimal;
  parts: Decimal[];
  rest: Decimal;
}

/** One receipt to write: an allocation's (to its invoice) or the rest's (no invoice). */
interface PlannedReceipt {
  invoiceId: string | null;
  amount: Decimal;
}

/**
 * Records a collection: one receipt per allocation and one for the unallocated rest (when more than 0), all in one
 * receipt group; the customer's account lowered by each (the invoice's balance by its allocation, the rest as a
 * credit on the account); each invoice paid down to 0 becomes paid. Refusals write nothing and name their field.
 * The steps: check the command, load the customer, the invoices (their row locks first) and the trip, check the
 * allocations against them, plan the receipts, write.
 */
export async function recordPayment(
  tx: Transaction<DB>,
  actor: Actor,
  command: RecordPaymentCommand,
): Promise<RecordedPayment> {
  const organizationId = actor.organization.id;
  const allocations = command.allocations ?? [];
  checkPaymentHeader(actor, command);
  const amounts = acceptPaymentAmounts(command);
  const customer = await tx
    .selectFrom('customers')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('id', '=', command.customerId)
    .executeTakeFirst();
  if (!customer)
    throw new ApiError('customer_not_found', `There is no customer ${command.customerId} in this organisation.`, [
      { field: '/customerId', code: 'customer_not_found', message: 'not a customer of this organisation' },
    ]);
  // The invoices' row locks first; their balances are read under them.
  const invoices = await lockInvoices(
    tx,
    organizationId,
    allocations.map((allocation) => allocation.invoiceId),
  );
  await refuseClosedPeriod(tx, organizationId, command.paymentDate, '/paymentDate');
  const salespersonId = command.tripId ? await loadCollectingTrip(tx, organizationId, command.tripId) : null;
  checkAllocations(command, invoices, amounts.parts);
  const receipts: PlannedReceipt[] = [
    ...allocations.map((allocation, i) => ({
      invoiceId: allocation.invoiceId as string | null,
      amount: amounts.parts[i]!,
    })),
    ...(amounts.rest.greaterThan(0) ? [{ invoiceId: null, amount: amounts.rest }] : []),
  ];
  return writePayment(tx, organizationId, command, receipts, salespersonId);
}

/** The reference a method needs; currencies: the collection's must be enabled (today: the base currency); every other amount must be in it. */
function checkPaymentHeader(actor: Actor, command: RecordPaymentCommand): void {
  const currency = command.amount.currency;
  if (NEEDS_REFERENCE.includes(command.method) && (command.reference ?? '').trim() === '') {
    throw new ApiError(
      'required_field',
      `A ${command.method.replace('_', ' ')} collection needs its reference (${command.method === 'cheque' ? 'the cheque number' : 'the transaction id'}).`,
      [{ field: '/reference', code: 'required_field', message: `required when method is ${command.method}` }],
    );
  }
  if (currency !== actor.organization.baseCurrency) {
    throw new ApiError(
      'currency_not_supported',
      `The organisation takes payments in its base currency ${actor.organization.baseCurrency}; got ${currency}.`,
      [
        {
          field: '/amount/currency',
          code: 'currency_not_supported',
          message: `must be ${actor.organization.baseCurrency}`,
        },
      ],
    );
  }
  const mismatched: FieldError[] = [
    ...(command.allocations ?? []).flatMap((allocation, i) =>
      allocation.amount.currency === currency
        ? []
        : [
            {
              field: `/allocations/${i}/amount/currency`,
              code: 'currency_mismatch' as const,
              message: `must be the payment's currency ${currency}`,
            },
          ],
    ),
    ...(command.unallocated && command.unallocated.currency !== currency
      ? [
          {
            field: '/unallocated/currency',
            code: 'currency_mismatch' as const,
            message: `must be the payment's currency ${currency}`,
          },
        ]
      : []),
  ];
  if (mismatched.length > 0)
    throw new ApiError('currency_mismatch', `Every amount of a payment is in its currency ${currency}.`, mismatched);
}

/** Amounts: decimal strings within the currency's minor units; the receipt and each allocation more than 0; one allocation per invoice; the parts add up to the whole. */
function acceptPaymentAmounts(command: RecordPaymentCommand): PaymentAmounts {
  const allocations = command.allocations ?? [];
  const currency = command.amount.currency;
  const total = positive(acceptAmount(command.amount, '/amount', currency), '/amount/amount');
  const parts = allocations.map((allocation, i) =>
    positive(acceptAmount(allocation.amount, `/allocations/${i}/amount`, currency), `/allocations/${i}/amount/amount`),
  );
  const rest = command.unallocated ? acceptAmount(command.unallocated, '/unallocated', currency) : new Decimal(0);
  // One allocation per invoice: a second names the invoice again (the first is kept).
  const seen = new Set<string>();
  const duplicates = allocations.flatMap((allocation, i): FieldError[] => {
    if (!seen.has(allocation.invoiceId)) {
      seen.add(allocation.invoiceId);
      return [];
    }
    return [
      {
        field: `/allocations/${i}/invoiceId`,
        code: 'duplicate_allocation',
        message: `invoice ${allocation.invoiceId} is already allocated to above; send one allocation with the sum`,
      },
    ];
  });
  if (duplicates.length > 0)
    throw new ApiError('business_rule', 'A payment allocates to each invoice once.', duplicates);
  const allocated = parts.reduce((sum, part) => sum.plus(part), new Decimal(0));
  if (!allocated.plus(rest).equals(total)) {
    const missing = total.minus(allocated);
    throw new ApiError(
      'unallocated_amount',
      `The allocations (${fmt(allocated, currency)}) plus the unallocated rest (${fmt(rest, currency)}) must equal the amount ${fmt(total, currency)} ${currency}.`,
      [
        {
          field: '/unallocated',
          code: 'unallocated_amount',
          message: missing.isNegative()
            ? `the allocations are ${fmt(missing.negated(), currency)} more than the amount`
            : `must be ${fmt(missing, currency)} (the amount less the allocations)`,
        },
      ],
    );
  }
  return { total, parts, rest };
}

/** The trip's salesperson. FOR SHARE: the trip cannot return or close while a collection on it is being recorded (its settlement counts it). */
async function loadCollectingTrip(tx: Transaction<DB>, organizationId: string, tripId: string): Promise<string | null> {
  const trip = await tx
    .selectFrom('trips')
    .select(['status', 'salesperson_id'])
    .where('organization_id', '=', organizationId)
    .where('id', '=', tripId)
    .forShare()
    .executeTakeFirst();
  if (trip?.status !== 'in_transit') {
    throw new ApiError(
      'no_open_trip',
      trip
        ? `The trip ${tripId} is ${trip.status}; a collection is recorded on a trip in transit.`
        : `There is no trip ${tripId} in this organisation.`,
      [
        {
          field: '/tripId',
          code: 'no_open_trip',
          message: trip ? `the trip is ${trip.status}, not in_transit` : 'not a trip of this organisation',
        },
      ],
    );
  }
  return trip.salesperson_id;
}

/** Each allocation to an open invoice of this customer, in the collection's currency, at most its balance (read under its lock). */
function checkAllocations(
  command: RecordPaymentCommand,
  invoices: ReadonlyMap<string, LockedInvoice>,
  parts: readonly Decimal[],
): void {
  const currency = command.amount.currency;
  const notFound: FieldError[] = [];
  const wrongCurrency: FieldError[] = [];
  const over: FieldError[] = [];
  (command.allocations ?? []).forEach((allocation, i) => {
    const invoice = invoices.get(allocation.invoiceId);
    if (!invoice || invoice.customer_id !== command.customerId) {
      notFound.push({
        field: `/allocations/${i}/invoiceId`,
        code: 'invoice_not_found',
        message: invoice ? 'an invoice of another customer' : 'not an invoice of this organisation',
      });
    } else if (invoice.currency !== currency) {
      wrongCurrency.push({
        field: `/allocations/${i}/invoiceId`,
        code: 'currency_mismatch',
        message: `the invoice is in ${invoice.currency}, the payment in ${currency}`,
      });
    } else if (invoice.status !== 'open') {
      over.push({
        field: `/allocations/${i}/amount`,
        code: 'over_allocation',
        message: `invoice ${invoice.number} is ${invoice.status}: nothing is left to pay`,
      });
    } else if (parts[i]!.greaterThan(invoice.balance)) {
      over.push({
        field: `/allocations/${i}/amount`,
        code: 'over_allocation',
        message: `more than the balance of invoice ${invoice.number}, ${fmt(invoice.balance, currency)} ${currency}`,
      });
    }
  });
  if (notFound.length > 0)
    throw new ApiError(
      'invoice_not_found',
      "An allocation names an invoice that is not this customer's in this organisation.",
      notFound,
    );
  if (wrongCurrency.length > 0)
    throw new ApiError(
      'currency_mismatch',
      `A payment in ${currency} allocates only to invoices in ${currency}.`,
      wrongCurrency,
    );
  if (over.length > 0)
    throw new ApiError('over_allocation', 'An allocation is more than what its invoice still owes.', over);
}

/** Writes the receipts: the customer's balance lock, their numbers and postings, their rows, the group's codes, the account entries, the invoices' statuses, the events. */
async function writePayment(
  tx: Transaction<DB>,
  organizationId: string,
  command: RecordPaymentCommand,
  planned: readonly PlannedReceipt[],
  salespersonId: string | null,
): Promise<RecordedPayment> {
  const currency = command.amount.currency;
  await lockCustomerBalance(tx, organizationId, command.customerId, currency);
  const receiptGroupId = newId('rcg');
  const receipts = planned.map((receipt) => ({ ...receipt, id: newId('pmt') }));
  const numbers: string[] = [];
  for (let i = 0; i < receipts.length; i += 1)
    numbers.push(await nextDocumentNumber(tx, organizationId, PAYMENT, 'RCT'));
  const reference = command.reference?.trim() || null;
  // Each receipt's accounting posting, queued with it (a QuickBooks Payment per receipt, linked to its invoice).
  const blocks = await queuePostingsOf(
    tx,
    organizationId,
    receipts.map((receipt, i) => ({ type: 'payment' as const, id: receipt.id, number: numbers[i]! })),
  );
  await tx
    .insertInto('payments')
    .values(
      receipts.map((receipt, i) => ({
        organization_id: organizationId,
        id: receipt.id,
        number: numbers[i]!,
        receipt_group_id: receiptGroupId,
        customer_id: command.customerId,
        posting_status: blocks[i]!.posting_status,
        posting_reason: blocks[i]!.posting_reason,
        status: paymentLifecycle.initial,
        method: command.method,
        invoice_id: receipt.invoiceId,
        amount: receipt.amount.toFixed(),
        currency,
        payment_date: command.paymentDate,
        reference,
        trip_id: command.tripId ?? null,
        salesperson_id: salespersonId,
      })),
    )
    .execute();
  // The codes name the group; a code another collection holds is 422 business_rule naming /externalCodes/{system},
  // which rolls back everything above with it.
  const codes = command.externalCodes;
  if (codes && Object.keys(codes).length > 0)
    await assignCodes(tx, organizationId, PAYMENT_COLLECTION, receiptGroupId, codes);
  await postAccountEntries(
    tx,
    organizationId,
    receipts.map(
      (receipt): AccountEntry => ({
        customerId: command.customerId,
        type: receipt.invoiceId === null ? 'payment_unallocated' : 'payment_allocation',
        documentType: PAYMENT,
        documentId: receipt.id,
        lineNumber: null,
        invoiceId: receipt.invoiceId,
        amount: receipt.amount.negated().toFixed(),
        currency,
      }),
    ),
  );
  await settleInvoiceStatuses(
    tx,
    organizationId,
    (command.allocations ?? []).map((allocation) => allocation.invoiceId),
  );
  await recordEvents(
    tx,
    organizationId,
    PAYMENT_CREATED,
    PAYMENT,
    receipts.map((receipt) => receipt.id),
  );
  return { receiptGroupId, ids: receipts.map((receipt) => receipt.id) };
}

/**
 * Reverses one posted receipt (its siblings in the receipt group stay posted): a reversing account entry puts the
 * amount back on the invoice (open again if it was paid) or, for an unallocated rest, on the account; status
 * reversed with the reason, by a guarded UPDATE, so that of two reversals racing only one passes.
 */
export async function reversePayment(
  tx: Transaction<DB>,
  actor: Actor,
  paymentId: string,
  reason: string,
  options: ReversalOptions = {},
): Promise<{ id: string }> {
  const organizationId = actor.organization.id;
  if (reason.trim() === '')
    throw new ApiError('invalid_field', 'Say why the receipt is reversed.', [
      { field: '/reason', code: 'invalid_field', message: 'say why the receipt is reversed' },
    ]);
  const payment = await tx
    .selectFrom('payments')
    .select(['id', 'number', 'status', 'customer_id', 'invoice_id', 'amount', 'currency'])
    // The date as its calendar string: pg would make a DATE a Date at local midnight, which can shift the day.
    .select(sql<string>`to_char(payment_date, 'YYYY-MM-DD')`.as('payment_day'))
    .where('organization_id', '=', organizationId)
    .where('id', '=', paymentId)
    .executeTakeFirst();
  if (!payment) throw new ApiError('not_found', `There is no payment ${paymentId} in this organisation.`);
  // Its invoice's row lock first, as every operation on an invoice's balance takes it.
  if (payment.invoice_id !== null) await lockInvoices(tx, organizationId, [payment.invoice_id]);
  const status = payment.status as PaymentStatus;
  const { to, event } = paymentLifecycle.next(status, 'reverse', paymentId); // 409 invalid_state once reversed
  // A reversal dated in a closed period would change closed books.
  await refuseClosedPeriod(tx, organizationId, payment.payment_day, '/paymentDate');
  // The accounting side (the spec's reversal rules): a posting not yet made is cancelled, one under way makes this
  // wait (409), one the accounting system holds gets its void there queued.
  const reversal = await planReversal(
    tx,
    organizationId,
    { type: 'payment', id: paymentId, number: payment.number },
    'Reversed',
    options,
  );
  const { numUpdatedRows } = await tx
    .updateTable('payments')
    .set((eb) => ({
      status: to,
      reversal_reason: reason,
      reversed_at: eb.fn<Date>('now'),
      updated_at: eb.fn<Date>('now'),
      ...(reversal.posting ? { posting_status: reversal.posting.status, posting_reason: reversal.posting.reason } : {}),
    }))
    .where('organization_id', '=', organizationId)
    .where('id', '=', paymentId)
    .where('status', '=', status)
    .executeTakeFirst();
  if (numUpdatedRows === 0n)
    throw new ApiError(
      'invalid_state',
      `The payment ${payment.number} is not ${status} any more: another request changed it first. Read it again.`,
    );

  await lockCustomerBalance(tx, organizationId, payment.customer_id, payment.currency);
  await postAccountEntries(tx, organizationId, [
    {
      customerId: payment.customer_id,
      type: payment.invoice_id === null ? 'payment_unallocated_reversal' : 'payment_allocation_reversal',
      documentType: PAYMENT,
      documentId: paymentId,
      lineNumber: null,
      invoiceId: payment.invoice_id,
      amount: new Decimal(payment.amount).toFixed(),
      currency: payment.currency,
    },
  ]);
  if (payment.invoice_id !== null) await settleInvoiceStatuses(tx, organizationId, [payment.invoice_id]);
  await recordEvent(tx, organizationId, event, PAYMENT, paymentId);
  return { id: paymentId };
}

function positive(amount: Decimal, field: string): Decimal {
  if (amount.isZero())
    throw new ApiError('invalid_field', `${field.slice(1)}: must be more than 0.`, [
      { field, code: 'invalid_field', message: 'must be more than 0' },
    ]);
  return amount;
}

const fmt = (amount: Decimal.Value, currency: string) => roundToCurrency(amount, currency);
