// The posting functions of credit notes: issue (applied at once) and cancel. Each runs in the caller's transaction
// and writes the credit note, its lines, its customer account entries (through the customer-account module), the
// balances they move, its number, its codes and its events, or nothing at all. REST routes, the returns module
// (a return's credit note) and (later) the DMS handler call these same functions.
//
// Lock order, the global one: the invoice's row (lockInvoices) first, then the customer's balance row
// (lockCustomerBalance), then the document number. A cancel takes the invoice's row, then the credit note's row (its
// guarded UPDATE), then the balance.
import { Decimal } from 'decimal.js';
import { sql } from 'kysely';
import type { Actor } from '../../platform/access/actor.js';
import { planReversal, queuePostings, type InitialBlocks } from '../postings/queue.js';
import { nextDocumentNumber } from '../../domain/documents/numbers.js';
import {
  documentTotals,
  lineAmounts,
  MAX_AMOUNT,
  roundToCurrency,
  type DocumentTotals,
  type LineAmounts,
} from '../../domain/money.js';
import { refuseClosedPeriod } from '../../domain/periods.js';
import type { Tx } from '../../platform/database/transaction.js';
import { dateProblem } from '../../platform/dates.js';
import { ApiError, type FieldError } from '../../platform/errors/api-error.js';
import { recordEvent } from '../../platform/events/outbox.js';
import {
  assignCodes,
  findRecordIdByCode,
  isCodeSystem,
  normaliseCode,
} from '../../platform/external-codes/external-codes.js';
import { newId } from '../../platform/ids.js';
import {
  lockCustomerBalance,
  lockInvoices,
  postAccountEntries,
  settleInvoiceStatuses,
  type AccountEntry,
  type AccountEntryType,
  type LockedInvoice,
} from '../customer-account/ledger.js';
import { creditNoteLifecycle, type CreditNoteStatus } from './lifecycle.js';
import { organizationToday } from '../../platform/access/organizations.js';

/** The resource name of credit notes in events, external codes and account entries (their document_type). */
export const CREDIT_NOTE = 'credit_note';
export const CREDIT_NOTE_CREATED = 'credit_note.created';
export const CREDIT_NOTE_CANCELLED = 'credit_note.cancelled';

/** A record by the service's id, or by its code in a code system (`dms` when absent): exactly one of id and code. */
export interface RecordRef {
  id?: string;
  code?: string;
  system?: string;
}

export interface CreditNoteLineCommand {
  /** `product` (the default) or `adjustment` (an amount credited without a product). */
  type?: 'product' | 'adjustment';
  product?: RecordRef;
  /** The product's name when absent; required on an adjustment line. */
  description?: string;
  /** More than 0, at most 4 decimals. */
  quantity: number;
  /** Per unit, excluding tax, in the base currency (a decimal string already checked for its currency). */
  unitPrice: string;
  discount?: string;
  /**
   * Percent. An adjustment line's rate (0 when absent). On an adjustment credit note a product line takes its
   * product's current rate and may not give one; a return's credit note gives its invoice lines' rates.
   */
  taxRate?: string;
}

export interface IssueCreditNoteCommand {
  customer: RecordRef;
  invoiceId: string;
  /** `adjustment` (the default) over REST; `return` only from processReturn, with its returnId. */
  type?: 'adjustment' | 'return';
  returnId?: string | null;
  reason: string | null;
  /** YYYY-MM-DD; today (UTC) when absent. */
  issueDate?: string;
  notes?: string | null;
  /** Paid out in cash from the part not applied to the invoice (a decimal string in the base currency). */
  cashRefundAmount?: string | null;
  externalCodes?: Record<string, string>;
  lines: CreditNoteLineCommand[];
  /** false: not submitted to the fiscal system (a DMS connection whose fiscalise switch is off). */
  fiscalise?: boolean;
  /**
   * true: what the fiscal system cannot record is refused before anything is written (422 business_rule, reason
   * not_fiscalisable: a line that carries only an amount, a product not on exactly one sale line of the invoice),
   * instead of being posted and then refused by the fiscal system. The product specification gives this rule to DMS
   * documents while fiscalisation applies to them; REST leaves it to the fiscal system. Only with fiscalise not false.
   */
  refuseUnfiscalisable?: boolean;
}

export interface PostedCreditNote {
  id: string;
  number: string;
}

/** The credit note's lines priced: each line's amounts and tax rate, and the document's totals (more than 0). */
interface PricedCreditLines {
  amounts: LineAmounts[];
  rates: string[];
  totals: DocumentTotals;
}

/** How the total is applied: to the invoice's open balance, the rest on the account, and the part of the rest refunded in cash. */
interface CreditApplication {
  applied: Decimal;
  rest: Decimal;
  refund: Decimal;
  /** rest - refund: what stays on the customer's account. */
  remaining: Decimal;
}

/** Everything the write step needs, computed without writing. */
interface CreditNotePlan {
  type: 'adjustment' | 'return';
  issueDate: string;
  invoice: LockedInvoice;
  customerId: string;
  products: (ProductFacts | undefined)[];
  priced: PricedCreditLines;
  application: CreditApplication;
}

/**
 * Issues a credit note and applies it at once: first to the open balance of its invoice (a `credit_application`
 * entry), the rest on the customer's account (`credit_unapplied`, no invoice), less a cash refund
 * (`credit_refund`). The invoice becomes paid at zero (settleInvoiceStatuses, `invoice.updated`). The steps: check
 * the shape, load and check the invoice (its row lock first) and the products, plan the prices and the application,
 * write.
 */
export async function issueCreditNote(
  tx: Tx,
  actor: Actor,
  command: IssueCreditNoteCommand,
): Promise<PostedCreditNote> {
  const organizationId = actor.organization.id;
  const currency = actor.organization.baseCurrency;
  const type = command.type ?? 'adjustment';
  if ((type === 'return') !== (command.returnId != null))
    throw new Error('issueCreditNote: a credit note of type return, and only one, names its return');
  const issueDate = command.issueDate ?? (await organizationToday(tx, organizationId));
  checkCreditNoteShape(command, type, issueDate);
  const { invoice, customerId } = await loadCreditedInvoice(tx, organizationId, currency, command, issueDate);
  const products = await resolveProducts(tx, organizationId, command.lines);
  if (command.refuseUnfiscalisable && command.fiscalise !== false)
    await refuseUnfiscalisable(tx, organizationId, invoice, command.lines, products);
  const priced = priceCreditLines(command.lines, products, currency);
  const application = planApplication(invoice, priced.totals, command.cashRefundAmount, currency);
  return writeCreditNote(tx, organizationId, command, {
    type,
    issueDate,
    invoice,
    customerId,
    products,
    priced,
    application,
  });
}

/** The shape first (400): one way to name each record, what each line type needs, a storable date. */
function checkCreditNoteShape(command: IssueCreditNoteCommand, type: 'adjustment' | 'return', issueDate: string): void {
  const shape: FieldError[] = [];
  refShape(shape, command.customer, '/customer');
  command.lines.forEach((line, i) => {
    const field = (name: string) => `/lines/${i}/${name}`;
    if ((line.type ?? 'product') === 'product') {
      if (line.product === undefined)
        shape.push({ field: field('product'), code: 'required_field', message: 'a product line names its product' });
      else refShape(shape, line.product, field('product'));
      if (line.taxRate !== undefined && type === 'adjustment')
        shape.push({
          field: field('taxRate'),
          code: 'invalid_field',
          message: "a product line is taxed at its product's rate; taxRate is for adjustment lines",
        });
    } else {
      if (line.product !== undefined)
        shape.push({
          field: field('product'),
          code: 'invalid_field',
          message: 'an adjustment line credits an amount without a product',
        });
      if (line.description === undefined || line.description.trim() === '')
        shape.push({
          field: field('description'),
          code: 'required_field',
          message: 'an adjustment line says what it credits',
        });
    }
    if (!(line.quantity > 0) || !new Decimal(line.quantity).times(10_000).isInteger())
      shape.push({ field: field('quantity'), code: 'invalid_field', message: 'more than 0, with at most 4 decimals' });
  });
  if (command.lines.length === 0)
    shape.push({ field: '/lines', code: 'invalid_field', message: 'a credit note has at least one line' });
  const dateIssue = dateProblem(issueDate);
  if (dateIssue) shape.push({ field: '/issueDate', code: 'invalid_field', message: dateIssue });
  if (shape.length > 0) {
    throw new ApiError(
      shape.every((p) => p.code === 'required_field') ? 'required_field' : 'invalid_field',
      shape.length === 1
        ? `${shape[0]!.field.slice(1)}: ${shape[0]!.message}.`
        : 'Several fields are invalid; errors[] names each.',
      shape,
    );
  }
}

/** The invoice's row lock first, as every operation on its balance takes it (a payment or void racing this waits); then its customer, state, currency and period. */
async function loadCreditedInvoice(
  tx: Tx,
  organizationId: string,
  currency: string,
  command: IssueCreditNoteCommand,
  issueDate: string,
): Promise<{ invoice: LockedInvoice; customerId: string }> {
  const invoice = (await lockInvoices(tx, organizationId, [command.invoiceId])).get(command.invoiceId);
  if (!invoice) {
    throw new ApiError('invoice_not_found', `There is no invoice ${command.invoiceId} in this organisation.`, [
      { field: '/invoiceId', code: 'invoice_not_found', message: 'not an invoice of this organisation' },
    ]);
  }
  const customer = await resolveCustomer(tx, organizationId, command.customer);
  if (invoice.customer_id !== customer.id) {
    throw new ApiError(
      'business_rule',
      `Invoice ${invoice.number} is customer ${invoice.customer_id}'s, not ${customer.id}'s.`,
      [{ field: '/invoiceId', code: 'business_rule', message: 'an invoice of another customer' }],
    );
  }
  if (invoice.status === 'void') {
    throw new ApiError('business_rule', `Invoice ${invoice.number} is void; there is nothing to credit.`, [
      { field: '/invoiceId', code: 'business_rule', message: 'a void invoice' },
    ]);
  }
  if (invoice.currency !== currency) {
    throw new ApiError(
      'currency_not_supported',
      `Credit notes accept invoices in the organisation's base currency ${currency} only; invoice ${invoice.number} is in ${invoice.currency}.`,
      [{ field: '/invoiceId', code: 'currency_not_supported', message: `an invoice in ${invoice.currency}` }],
    );
  }
  await refuseClosedPeriod(tx, organizationId, issueDate, '/issueDate');
  return { invoice, customerId: customer.id };
}

/** Each line's amounts at its rate (its own, its product's, or 0): 422 for a line too large or discounted past its gross, and for a total not above 0. */
function priceCreditLines(
  lines: readonly CreditNoteLineCommand[],
  products: readonly (ProductFacts | undefined)[],
  currency: string,
): PricedCreditLines {
  const problems: FieldError[] = [];
  const amounts: LineAmounts[] = [];
  const rates: string[] = [];
  lines.forEach((line, i) => {
    const product = products[i];
    const taxRate = line.taxRate ?? (product ? product.taxRate : '0');
    const gross = new Decimal(line.unitPrice).times(line.quantity);
    if (gross.greaterThanOrEqualTo(MAX_AMOUNT.toString())) {
      problems.push({
        field: `/lines/${i}/quantity`,
        code: 'business_rule',
        message: `quantity x unitPrice must be less than ${MAX_AMOUNT.toFixed()}`,
      });
      return;
    }
    if (line.discount !== undefined && new Decimal(line.discount).greaterThan(gross)) {
      problems.push({
        field: `/lines/${i}/discount`,
        code: 'business_rule',
        message: `more than the line's quantity x unitPrice (${gross.toFixed()})`,
      });
      return;
    }
    rates[i] = taxRate;
    amounts[i] = lineAmounts(
      { quantity: line.quantity, unitPrice: line.unitPrice, discount: line.discount ?? 0, taxRate },
      currency,
    );
  });
  if (problems.length > 0)
    throw new ApiError(
      'business_rule',
      problems.length === 1
        ? `${problems[0]!.field.slice(1)}: ${problems[0]!.message}.`
        : 'Lines break several rules; errors[] names each.',
      problems,
    );
  const totals = documentTotals(amounts, currency);
  if (!new Decimal(totals.total).greaterThan(0)) {
    throw new ApiError('business_rule', 'A credit note credits more than 0.', [
      { field: '/lines', code: 'business_rule', message: `the total is ${totals.total}` },
    ]);
  }
  return { amounts, rates, totals };
}

/** Applied first to what is still owed on the invoice; the rest is a credit on the account, less a cash refund (422 when the refund is more than the rest). */
function planApplication(
  invoice: LockedInvoice,
  totals: DocumentTotals,
  cashRefundAmount: string | null | undefined,
  currency: string,
): CreditApplication {
  const total = new Decimal(totals.total);
  const applied = Decimal.min(total, invoice.balance);
  const rest = total.minus(applied);
  const refund = cashRefundAmount == null ? new Decimal(0) : new Decimal(cashRefundAmount);
  if (refund.greaterThan(rest)) {
    throw new ApiError(
      'business_rule',
      `Only the part not applied to invoice ${invoice.number} can be refunded: ${roundToCurrency(rest, currency)} ${currency}.`,
      [
        {
          field: '/cashRefundAmount',
          code: 'business_rule',
          message: `more than the ${roundToCurrency(rest, currency)} left after ${roundToCurrency(applied, currency)} applied to the invoice`,
        },
      ],
    );
  }
  return { applied, rest, refund, remaining: rest.minus(refund) };
}

/** Writes the plan: the customer's balance lock, the number, the postings, the rows, the account entries, the invoice's status, codes and the event. */
async function writeCreditNote(
  tx: Tx,
  organizationId: string,
  command: IssueCreditNoteCommand,
  plan: CreditNotePlan,
): Promise<PostedCreditNote> {
  const {
    invoice,
    customerId,
    application: { applied, rest, refund },
  } = plan;
  await lockCustomerBalance(tx, organizationId, customerId, invoice.currency);
  const number = await nextDocumentNumber(tx, organizationId, CREDIT_NOTE, 'CN');
  const id = newId('cn');
  // Its accounting posting (a QuickBooks CreditMemo) and, against a fiscalised invoice, its fiscal credit note.
  const blocks = await queuePostings(
    tx,
    organizationId,
    { type: 'credit_note', id, number },
    { fiscal: command.fiscalise },
  );
  await insertCreditNoteRows(tx, organizationId, command, plan, { id, number, blocks });
  const entry = (entryType: AccountEntryType, amount: Decimal, invoiceId: string | null): AccountEntry => ({
    customerId,
    type: entryType,
    documentType: CREDIT_NOTE,
    documentId: id,
    lineNumber: null,
    invoiceId,
    amount: amount.toFixed(),
    currency: invoice.currency,
  });
  await postAccountEntries(tx, organizationId, [
    ...(applied.isZero() ? [] : [entry('credit_application', applied.negated(), invoice.id)]),
    ...(rest.isZero() ? [] : [entry('credit_unapplied', rest.negated(), null)]),
    ...(refund.isZero() ? [] : [entry('credit_refund', refund, null)]),
  ]);
  if (!applied.isZero()) await settleInvoiceStatuses(tx, organizationId, [invoice.id]);
  if (command.externalCodes && Object.keys(command.externalCodes).length > 0)
    await assignCodes(tx, organizationId, CREDIT_NOTE, id, command.externalCodes);
  await recordEvent(tx, organizationId, CREDIT_NOTE_CREATED, CREDIT_NOTE, id);
  return { id, number };
}

/** The credit note's row (with its posting blocks) and its lines. */
async function insertCreditNoteRows(
  tx: Tx,
  organizationId: string,
  command: IssueCreditNoteCommand,
  plan: CreditNotePlan,
  written: { id: string; number: string; blocks: InitialBlocks },
): Promise<void> {
  const {
    invoice,
    products,
    priced: { amounts, rates, totals },
    application: { refund, remaining },
  } = plan;
  const { id, number, blocks } = written;
  await tx
    .insertInto('credit_notes')
    .values({
      organization_id: organizationId,
      id,
      number,
      status: creditNoteLifecycle.initial,
      type: plan.type,
      customer_id: plan.customerId,
      invoice_id: invoice.id,
      ...blocks,
      return_id: command.returnId ?? null,
      trip_id: invoice.trip_id,
      issue_date: plan.issueDate,
      reason: command.reason,
      notes: command.notes ?? null,
      subtotal: totals.subtotal,
      discount: totals.discount,
      tax: totals.tax,
      total: totals.total,
      remaining_amount: remaining.toFixed(),
      cash_refund_amount: refund.isZero() ? null : refund.toFixed(),
      currency: invoice.currency,
    })
    .execute();
  await tx
    .insertInto('credit_note_lines')
    .values(
      command.lines.map((line, i) => ({
        organization_id: organizationId,
        credit_note_id: id,
        line_number: i + 1,
        type: line.type ?? 'product',
        product_id: products[i]?.id ?? null,
        description: line.description?.trim() || products[i]!.name,
        quantity: String(line.quantity),
        unit_price: line.unitPrice,
        discount: amounts[i]!.discount,
        tax_rate: rates[i]!,
        amount: amounts[i]!.amount,
        tax: amounts[i]!.tax,
      })),
    )
    .execute();
}

/**
 * Cancels an applied credit note: a reversing entry for each of its account entries (its applications removed, its
 * credit on the account and any cash refund reversed), status cancelled with the reason, remaining amount 0. Refused
 * (409 invalid_state) when cancelled already, fiscalised, or the credit note of a return.
 */
export async function cancelCreditNote(tx: Tx, actor: Actor, id: string, reason: string): Promise<PostedCreditNote> {
  const organizationId = actor.organization.id;
  if (reason.trim() === '')
    throw new ApiError('invalid_field', 'reason: say why the credit note is cancelled.', [
      { field: '/reason', code: 'invalid_field', message: 'say why the credit note is cancelled' },
    ]);
  const found = await tx
    .selectFrom('credit_notes')
    .select('invoice_id')
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!found) throw new ApiError('not_found', `There is no credit note ${id} in this organisation.`);
  // The invoice's row first (the global order), then the credit note's own row.
  if (found.invoice_id !== null) await lockInvoices(tx, organizationId, [found.invoice_id]);
  const note = await tx
    .selectFrom('credit_notes')
    .select(['number', 'status', 'type', 'customer_id', 'invoice_id', 'currency', 'fiscal_status', 'fiscal_fdn'])
    // The issue date as its calendar string: pg would make a DATE a Date at local midnight.
    .select(sql<string>`to_char(issue_date, 'YYYY-MM-DD')`.as('issue_day'))
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirstOrThrow();
  const status = note.status as CreditNoteStatus;
  const { to, event } = creditNoteLifecycle.next(status, 'cancel', id); // 409 when cancelled already
  if (note.fiscal_status === 'submitted' || note.fiscal_status === 'fiscalised') {
    throw new ApiError(
      'fiscal_submitted',
      `Credit note ${note.number} is fiscalised (fiscal status ${note.fiscal_status}${note.fiscal_fdn ? `, FDN ${note.fiscal_fdn}` : ''}): the tax authority holds it, so it cannot be cancelled here. Issue a new invoice for the amount instead.`,
    );
  }
  if (note.type === 'return') {
    throw new ApiError(
      'invalid_state',
      `Credit note ${note.number} is a return's credit note: the goods came back into stock, and cancelling the credit would leave them there unpaid. It cannot be cancelled.`,
    );
  }
  await refuseClosedPeriod(tx, organizationId, note.issue_day, '/issueDate');

  const entries = await tx
    .selectFrom('customer_account_entries')
    .select(['type', 'invoice_id', 'amount', 'currency', 'customer_id'])
    .where('organization_id', '=', organizationId)
    .where('customer_id', '=', note.customer_id)
    .where('document_type', '=', CREDIT_NOTE)
    .where('document_id', '=', id)
    .orderBy('id')
    .execute();
  await lockCustomerBalance(tx, organizationId, note.customer_id, note.currency);
  await postAccountEntries(
    tx,
    organizationId,
    entries.map(
      (e): AccountEntry => ({
        customerId: e.customer_id,
        type: `${e.type}_reversal` as AccountEntryType,
        documentType: CREDIT_NOTE,
        documentId: id,
        lineNumber: null,
        invoiceId: e.invoice_id,
        amount: new Decimal(e.amount).negated().toFixed(),
        currency: e.currency,
      }),
    ),
  );
  // The external systems' side (the spec's reversal rules): a fiscal submission already made is refused (409), a
  // posting or submission not yet made is cancelled, a memo the accounting system holds gets its deletion queued.
  const reversal = await planReversal(
    tx,
    organizationId,
    { type: 'credit_note', id, number: note.number },
    'Cancelled',
  );
  // The move, its reason and the remaining amount in one guarded UPDATE: a cancel that raced another is 409.
  const { numUpdatedRows } = await tx
    .updateTable('credit_notes')
    .set((eb) => ({
      status: to,
      cancel_reason: reason,
      cancelled_at: eb.fn<Date>('now'),
      remaining_amount: '0',
      updated_at: eb.fn<Date>('now'),
      ...(reversal.posting ? { posting_status: reversal.posting.status, posting_reason: reversal.posting.reason } : {}),
      ...(reversal.fiscal ? { fiscal_status: reversal.fiscal.status } : {}),
    }))
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .where('status', '=', status)
    .executeTakeFirst();
  if (numUpdatedRows === 0n)
    throw new ApiError(
      'invalid_state',
      `Credit note ${note.number} is not ${status} any more: another request changed it first. Read it again.`,
    );
  const invoices = [...new Set(entries.flatMap((e) => (e.invoice_id === null ? [] : [e.invoice_id])))];
  await settleInvoiceStatuses(tx, organizationId, invoices);
  await recordEvent(tx, organizationId, event, CREDIT_NOTE, id);
  return { id, number: note.number };
}

function refShape(problems: FieldError[], ref: RecordRef, field: string): void {
  if (ref.id === undefined && ref.code === undefined)
    problems.push({ field: `${field}/id`, code: 'required_field', message: 'give id or code' });
  else if (ref.id !== undefined && ref.code !== undefined)
    problems.push({ field: `${field}/id`, code: 'invalid_field', message: 'give id or code, not both' });
  else if (ref.id !== undefined && ref.system !== undefined)
    problems.push({ field: `${field}/system`, code: 'invalid_field', message: 'system goes with code, not with id' });
}

/** The id a reference names (null when no record carries its code), or 422 business_rule for an unknown code system. */
async function idOf(
  tx: Tx,
  organizationId: string,
  resource: string,
  ref: RecordRef,
  field: string,
): Promise<string | null> {
  if (ref.id !== undefined) return ref.id;
  const system = ref.system ?? 'dms';
  const code = normaliseCode(ref.code!, `${field}/code`);
  if (!(await isCodeSystem(tx, organizationId, system))) {
    throw new ApiError('business_rule', `${system} is not a code system of this organisation.`, [
      {
        field: `${field}/system`,
        code: 'unknown_code_system',
        message: `${system} is neither dms nor a registered partner system`,
      },
    ]);
  }
  return findRecordIdByCode(tx, organizationId, resource, system, code);
}

const described = (ref: RecordRef) =>
  ref.id !== undefined ? `id ${ref.id}` : `code ${ref.code} in code system ${ref.system ?? 'dms'}`;

async function resolveCustomer(tx: Tx, organizationId: string, ref: RecordRef): Promise<{ id: string }> {
  const id = await idOf(tx, organizationId, 'customer', ref, '/customer');
  const row =
    id === null
      ? undefined
      : await tx
          .selectFrom('customers')
          .select('id')
          .where('organization_id', '=', organizationId)
          .where('id', '=', id)
          .executeTakeFirst();
  if (!row) {
    throw new ApiError('customer_not_found', `No customer with ${described(ref)} in this organisation.`, [
      {
        field: ref.id !== undefined ? '/customer/id' : '/customer/code',
        code: 'customer_not_found',
        message: `no customer with ${described(ref)}`,
      },
    ]);
  }
  return row;
}

interface ProductFacts {
  id: string;
  name: string;
  taxRate: string;
}

/** Each line's product (undefined on an adjustment line); 422 product_not_found naming every line whose product is not the organisation's. */
/**
 * The fiscal system's limits on a credit note, up front (IssueCreditNoteCommand.refuseUnfiscalisable): it credits
 * lines of the fiscalised invoice, each product on exactly one of the invoice's sale lines, so a line that carries only
 * an amount, or a product on none or several of them, cannot be fiscalised.
 */
async function refuseUnfiscalisable(
  tx: Tx,
  organizationId: string,
  invoice: { id: string; number: string },
  lines: readonly CreditNoteLineCommand[],
  products: readonly (ProductFacts | undefined)[],
): Promise<void> {
  const amountOnly = lines.findIndex((line) => (line.type ?? 'product') === 'adjustment');
  if (amountOnly >= 0) {
    throw new ApiError(
      'not_fiscalisable',
      "A credit note against an invoice that carries only an amount cannot be fiscalised: the fiscal system credits the invoice's lines. Send its lines. Nothing was posted.",
      [
        {
          field: `/lines/${amountOnly}/type`,
          code: 'business_rule',
          message: 'an amount without a product, while the credit note is fiscalised',
        },
      ],
    );
  }
  const onInvoice = await tx
    .selectFrom('invoice_lines')
    .select('product_id')
    .where('organization_id', '=', organizationId)
    .where('invoice_id', '=', invoice.id)
    .where('kind', '=', 'sale')
    .execute();
  for (const [i, product] of products.entries()) {
    const count = onInvoice.filter((line) => line.product_id === product!.id).length;
    if (count === 1) continue;
    const { product_code: code } = await tx
      .selectFrom('products')
      .select('product_code')
      .where('organization_id', '=', organizationId)
      .where('id', '=', product!.id)
      .executeTakeFirstOrThrow();
    throw new ApiError(
      'not_fiscalisable',
      `Product ${code} is on ${count} lines of invoice ${invoice.number}; a fiscal credit note credits a product that is on exactly one line. Nothing was posted.`,
      [
        {
          field: `/lines/${i}/product`,
          code: 'business_rule',
          message: `on ${count} sale lines of the invoice, not exactly one`,
        },
      ],
    );
  }
}

async function resolveProducts(
  tx: Tx,
  organizationId: string,
  lines: CreditNoteLineCommand[],
): Promise<(ProductFacts | undefined)[]> {
  const ids: (string | null | undefined)[] = [];
  for (const [i, line] of lines.entries())
    ids.push(
      line.product === undefined
        ? undefined
        : await idOf(tx, organizationId, 'product', line.product, `/lines/${i}/product`),
    );
  const known = [...new Set(ids.filter((id): id is string => typeof id === 'string'))];
  const rows =
    known.length === 0
      ? []
      : await tx
          .selectFrom('products')
          .select(['id', 'name', 'tax_rate'])
          .where('organization_id', '=', organizationId)
          .where('id', 'in', known)
          .execute();
  const byId = new Map(rows.map((row) => [row.id, { id: row.id, name: row.name, taxRate: String(row.tax_rate) }]));
  const missing: FieldError[] = [];
  lines.forEach((line, i) => {
    if (line.product === undefined || (ids[i] && byId.has(ids[i]!))) return;
    missing.push({
      field: `/lines/${i}/product/${line.product.id !== undefined ? 'id' : 'code'}`,
      code: 'product_not_found',
      message: `no product with ${described(line.product)} in this organisation`,
    });
  });
  if (missing.length > 0)
    throw new ApiError(
      'product_not_found',
      missing.length === 1
        ? `${missing[0]!.field.slice(1)}: ${missing[0]!.message}.`
        : 'Lines name products that are not in this organisation; errors[] names each.',
      missing,
    );
  return ids.map((id) => (typeof id === 'string' ? byId.get(id) : undefined));
}
