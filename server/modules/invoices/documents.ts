// The posting functions of invoices: create (posted at once) and void. Each runs in the caller's transaction and
// writes the invoice, its lines, its stock and empties movements (through the stock module's ledgers), its customer
// account entries, the customer's open balance, its number and its event, or nothing at all. REST routes, the
// operator CLI and (later) the DMS handler call these same functions.
//
// Lock order, the one of every posting: valuations and levels (postMovements), customers' empties
// (postEmptiesMovements), then the customer's balance row, then the document number. Voiding takes the same order
// and ends with the invoice's guarded status UPDATE, so two voids of one invoice cannot both pass.
import { Decimal } from 'decimal.js';
import type { Transaction } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';
import type { Actor } from '../../platform/access/actor.js';
import { booksClosedThrough, refuseClosedPeriod, refuseDateInClosedPeriod } from '../../domain/periods.js';
import { planReversal, queuePostingsOf, type InitialBlocks } from '../postings/queue.js';
import { nextDocumentNumbers } from '../../domain/documents/numbers.js';
import { documentTotals, lineAmounts, roundToCurrency, type LineAmounts } from '../../domain/money.js';
import { ApiError, type FieldError } from '../../platform/errors/api-error.js';
import { recordEvent, recordEvents } from '../../platform/events/outbox.js';
import { assignCodes } from '../../platform/external-codes/external-codes.js';
import { newId } from '../../platform/ids.js';
import { checkLines, throwIfAny, type LineFacts, type StockUnit } from '../stock/documents.js';
import { lockEmpties, planEmpties, postEmptiesMovements, writeEmpties, type EmptiesMove } from '../stock/empties.js';
import {
  applyPlan,
  lockStock,
  planMovements,
  postMovements,
  writeMovements,
  type Movement,
  type StockPlan,
  type StockState,
} from '../stock/ledger.js';
import { findOrder } from '../orders/repository.js';
import { markOrderInvoiced } from '../orders/documents.js';
import { NEEDS_REFERENCE, recordPayment, type PaymentMethod } from '../payments/documents.js';
import {
  balanceKey,
  lockCustomerBalance,
  lockCustomerBalances,
  lockInvoices,
  postAccountEntries,
  type AccountEntry,
} from '../customer-account/ledger.js';
import { invoiceLifecycle, type InvoiceStatus } from './lifecycle.js';

/** The resource name of invoices in events and ledger rows (stock and empties movements' document_type). */
export const INVOICE = 'invoice';
/** The document type of a void's reversing stock and empties movements (their document_id is the invoice's). */
export const INVOICE_VOID = 'invoice_void';
export const INVOICE_CREATED = 'invoice.created';
export const INVOICE_UPDATED = 'invoice.updated';
export const INVOICE_VOIDED = 'invoice.voided';

export type LineKind = 'sale' | 'free' | 'empties';

export interface InvoiceLineCommand {
  /** `sale` (the default) or `free` (a free issue: price 0, no discount). Empties lines are the service's own. */
  kind?: 'sale' | 'free';
  productId: string;
  unit: StockUnit;
  /** Whole units of `unit`, more than 0. */
  quantity: number;
  /** Per `unit`, excluding tax, in the invoice's currency (a decimal string already checked for its currency). */
  unitPrice: string;
  /** An amount off the line, not more than quantity x unitPrice. */
  discount?: string;
}

export interface CreateInvoiceCommand {
  customerId: string;
  /** The location the goods leave: a warehouse, or a van (a van sale). */
  locationId: string;
  /** YYYY-MM-DD. */
  issueDate: string;
  /** YYYY-MM-DD; the issue date plus the customer's payment terms when absent. */
  dueDate?: string | null;
  currency: string;
  /** The salesperson of a van sale (the trip's when absent); on a warehouse sale, for the record. */
  salespersonId?: string | null;
  /** The sales order this invoices: an open order of the same customer, which becomes invoiced. */
  orderId?: string | null;
  /** The caller's own codes of the invoice, by code system (`dms` or a registered one): read it back by code. */
  externalCodes?: Record<string, string>;
  lines: InvoiceLineCommand[];
  /**
   * Paid in full at once (a cash or van sale): a receipt for the total is recorded in this transaction by the
   * payments module's recordPayment, so the invoice is created paid and the credit rule does not apply.
   */
  payment?: { method: PaymentMethod; reference?: string | null } | null;
  /** false: not submitted to the fiscal system (a DMS connection whose fiscalise switch is off). */
  fiscalise?: boolean;
  /**
   * true: what the fiscal system cannot record is refused before anything is written (422 business_rule, reason
   * not_fiscalisable: a sale paid by a method other than cash or mobile money), instead of being posted and then
   * refused by the fiscal system. The product specification gives this rule to DMS documents while fiscalisation
   * applies to them; REST leaves it to the fiscal system. Only with fiscalise not false.
   */
  refuseUnfiscalisable?: boolean;
}

/** The methods the fiscal system records a sale paid at once by (a sale on credit has no payment). */
export const FISCAL_SALE_METHODS: readonly PaymentMethod[] = ['cash', 'mobile_money'];

export interface PostedInvoice {
  id: string;
  number: string;
}

interface ProductRow {
  id: string;
  pack_size: number;
  tax_rate: string;
  is_empty: boolean;
  tracks_stock: boolean;
  empties: { productId: string; quantity: number; per: 'case' | 'bottle' }[];
}

interface LinePlan {
  lineNumber: number;
  kind: LineKind;
  productId: string;
  unit: StockUnit;
  quantity: number;
  unitPrice: string;
  taxRate: string;
  amounts: LineAmounts;
  /** Base units that leave the location. */
  baseQuantity: number;
  /** The request's field that names this line's quantity (an empties line: the first goods line that carries it). */
  field: string;
}

/** Creates and posts an invoice: goods and their empties off the location, the customer's account raised by its total. */
export async function createInvoice(
  tx: Transaction<DB>,
  actor: Actor,
  command: CreateInvoiceCommand,
): Promise<PostedInvoice> {
  const [outcome] = await createInvoices(tx, actor, [command]);
  if (outcome instanceof ApiError) throw outcome;
  return outcome!;
}

/** An invoice of a set: posted, or refused with the error createInvoice would have thrown for it alone. */
export type InvoiceOutcome = PostedInvoice | ApiError;

/**
 * Creates and posts a set of invoices (createInvoice is the set of one), in order, in the caller's transaction: each
 * is checked and planned as if posted alone after the ones before it (their stock, their customers' balances), so a
 * refused one (its outcome is the ApiError) changes nothing and the next ones are planned without it; the accepted
 * ones are then written together, one statement per table for the whole set, which is what makes a day of DMS
 * invoices post at hundreds per second. What the set reads (the period, customers, products, locations, trips) it
 * reads once. An error while writing (a code another invoice holds, a bug) fails the whole set: the caller's
 * transaction rolls back, or its savepoint, and it may post the invoices one by one to find the one at fault.
 */
export async function createInvoices(
  tx: Transaction<DB>,
  actor: Actor,
  commands: readonly CreateInvoiceCommand[],
): Promise<InvoiceOutcome[]> {
  if (commands.length === 0) return [];
  const organizationId = actor.organization.id;
  const outcomes: (InvoiceOutcome | null)[] = commands.map(() => null);
  const facts = await readFacts(tx, actor, commands);
  // Each invoice checked on its own, in the order createInvoice has always checked them.
  const drafts: Draft[] = [];
  for (const [i, command] of commands.entries()) {
    try {
      drafts.push({ index: i, ...(await draftInvoice(tx, actor, command, facts)) });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      outcomes[i] = error;
    }
  }
  const set = await lockAndPlanSet(tx, organizationId, drafts, outcomes);
  if (set.accepted.length === 0) return outcomes as InvoiceOutcome[];
  const numbers = await writeInvoices(tx, organizationId, set);
  await recordEvents(
    tx,
    organizationId,
    INVOICE_CREATED,
    INVOICE,
    set.accepted.map((draft) => draft.id),
  );
  await settleOrdersAndPayments(tx, actor, set.accepted);
  set.accepted.forEach((draft, i) => {
    outcomes[draft.index] = { id: draft.id, number: numbers[i]! };
  });
  return outcomes as InvoiceOutcome[];
}

/** A draft whose stock, empties and credit passed: its planned stock movements. */
type AcceptedDraft = Draft & { planned: StockPlan['movements'] };

/** The set's plan: the locked stock and empties (with the accepted invoices applied) and the invoices accepted, in order. */
interface SetPlan {
  stock: StockState;
  held: Map<string, number>;
  accepted: AcceptedDraft[];
}

/**
 * The rows the set changes, locked in the one global order (valuations and levels, customers' empties, balances);
 * then stock, empties and credit, each invoice on what the accepted ones before it left. A refusal is its outcome.
 */
async function lockAndPlanSet(
  tx: Transaction<DB>,
  organizationId: string,
  drafts: readonly Draft[],
  outcomes: (InvoiceOutcome | null)[],
): Promise<SetPlan> {
  const stock = await lockStock(
    tx,
    organizationId,
    drafts.flatMap((draft) => draft.movements),
  );
  const held = await lockEmpties(
    tx,
    organizationId,
    drafts.flatMap((draft) => draft.empties),
  );
  const balances = await lockCustomerBalances(
    tx,
    organizationId,
    drafts.map((draft) => ({ customerId: draft.command.customerId, currency: draft.command.currency })),
  );
  const accepted: AcceptedDraft[] = [];
  for (const draft of drafts) {
    const { command, totals } = draft;
    const plan = planMovements(stock, draft.movements, draft.fieldOf);
    if (plan instanceof ApiError) {
      outcomes[draft.index] = plan;
      continue;
    }
    const emptiesAfter = planEmpties(held, draft.empties, draft.fieldOf);
    if (emptiesAfter instanceof ApiError) {
      outcomes[draft.index] = emptiesAfter;
      continue;
    }
    const key = balanceKey(command.customerId, command.currency);
    const openBalance = balances.get(key)!;
    const onCredit = !command.payment && new Decimal(totals.total).greaterThan(0);
    const refusal = onCredit ? creditLimitRefusal(draft, openBalance) : null;
    if (refusal) {
      outcomes[draft.index] = refusal;
      continue;
    }
    applyPlan(stock, plan);
    for (const [emptyKey, quantity] of emptiesAfter) held.set(emptyKey, quantity);
    if (onCredit) balances.set(key, openBalance.plus(totals.total));
    accepted.push({ ...draft, planned: plan.movements });
  }
  return { stock, held, accepted };
}

/**
 * The credit rule on the locked balance: a sale on credit puts its whole total on the account (one paid in full at
 * once, a payment block, leaves nothing there, so the caller does not ask). The refusal, or null.
 */
function creditLimitRefusal(draft: Draft, openBalance: Decimal): ApiError | null {
  const { command, totals, creditLimit } = draft;
  if (creditLimit === null || !openBalance.plus(totals.total).greaterThan(creditLimit)) return null;
  const currency = command.currency;
  return new ApiError(
    'credit_limit_exceeded',
    `The customer owes ${roundToCurrency(openBalance, currency)} ${currency}; this invoice of ${totals.total} would pass its credit limit of ${roundToCurrency(creditLimit, currency)}.`,
    [
      {
        field: '/customerId',
        code: 'credit_limit_exceeded',
        message: `open balance ${roundToCurrency(openBalance, currency)} + total ${totals.total} > credit limit ${roundToCurrency(creditLimit, currency)}`,
      },
    ],
  );
}

/**
 * Writes the accepted invoices, one statement per table for the set: stock first, then the customers' empties
 * (naming the stock movement of their line), then the numbers, postings, rows, account entries and codes. Their numbers.
 */
async function writeInvoices(tx: Transaction<DB>, organizationId: string, set: SetPlan): Promise<string[]> {
  const { accepted } = set;
  const moved = await writeMovements(
    tx,
    organizationId,
    set.stock,
    accepted.map((draft) => ({ document: { type: INVOICE, id: draft.id }, planned: draft.planned })),
  );
  await writeEmpties(
    tx,
    organizationId,
    set.held,
    accepted.map((draft, i) => {
      const movementOf = new Map(moved[i]!.map((movement) => [movement.line, movement.id]));
      return {
        document: { type: INVOICE, id: draft.id },
        moves: draft.empties.map((move) => ({ ...move, stockMovementId: movementOf.get(move.line) ?? null })),
      };
    }),
  );
  const numbers = await nextDocumentNumbers(tx, organizationId, INVOICE, 'INV', accepted.length);
  const blocks = await queueInvoicePostings(tx, organizationId, accepted, numbers);
  await insertInvoiceRows(tx, organizationId, accepted, numbers, blocks);
  await postAccountEntries(
    tx,
    organizationId,
    accepted
      .filter((draft) => new Decimal(draft.totals.total).greaterThan(0))
      .map(
        (draft): AccountEntry => ({
          customerId: draft.command.customerId,
          type: 'invoice',
          documentType: INVOICE,
          documentId: draft.id,
          lineNumber: null,
          invoiceId: draft.id,
          amount: draft.totals.total,
          currency: draft.command.currency,
        }),
      ),
  );
  for (const draft of accepted) {
    const codes = draft.command.externalCodes;
    if (codes && Object.keys(codes).length > 0) await assignCodes(tx, organizationId, INVOICE, draft.id, codes);
  }
  return numbers;
}

/** Their accounting postings and fiscal submissions, queued with them (they run after the transaction commits): each invoice's blocks, in the set's order. */
async function queueInvoicePostings(
  tx: Transaction<DB>,
  organizationId: string,
  accepted: readonly AcceptedDraft[],
  numbers: readonly string[],
): Promise<InitialBlocks[]> {
  const blocks: InitialBlocks[] = [];
  for (const fiscal of [true, false]) {
    const members = accepted
      .map((draft, i) => ({ draft, i }))
      .filter(({ draft }) => (draft.command.fiscalise !== false) === fiscal);
    if (members.length === 0) continue;
    const queued = await queuePostingsOf(
      tx,
      organizationId,
      members.map(({ draft, i }) => ({ type: 'invoice' as const, id: draft.id, number: numbers[i]! })),
      { fiscal },
    );
    members.forEach(({ i }, j) => {
      blocks[i] = queued[j]!;
    });
  }
  return blocks;
}

/** The invoices' rows (balance 0: raised by their account entries) and all their lines. */
async function insertInvoiceRows(
  tx: Transaction<DB>,
  organizationId: string,
  accepted: readonly AcceptedDraft[],
  numbers: readonly string[],
  blocks: readonly InitialBlocks[],
): Promise<void> {
  await tx
    .insertInto('invoices')
    .values(
      accepted.map((draft, i) => {
        const { command, totals } = draft;
        return {
          organization_id: organizationId,
          id: draft.id,
          number: numbers[i]!,
          customer_id: command.customerId,
          status: invoiceLifecycle.initial,
          ...blocks[i]!,
          issue_date: command.issueDate,
          due_date: draft.dueDate,
          currency: command.currency,
          location_id: command.locationId,
          trip_id: draft.tripId,
          salesperson_id: draft.salespersonId,
          order_id: command.orderId ?? null,
          subtotal: totals.subtotal,
          discount: totals.discount,
          tax: totals.tax,
          total: totals.total,
          balance: '0', // raised by its account entry
        };
      }),
    )
    .execute();
  await tx
    .insertInto('invoice_lines')
    .values(
      accepted.flatMap((draft) =>
        draft.plans.map((plan) => ({
          organization_id: organizationId,
          invoice_id: draft.id,
          line_number: plan.lineNumber,
          kind: plan.kind,
          product_id: plan.productId,
          unit: plan.unit,
          quantity: plan.quantity,
          unit_price: plan.unitPrice,
          discount: plan.amounts.discount,
          tax_rate: plan.taxRate,
          amount: plan.amounts.amount,
          tax: plan.amounts.tax,
        })),
      ),
    )
    .execute();
}

/** What follows each written invoice through the other modules' own posting functions: its order invoiced, its payment recorded. */
async function settleOrdersAndPayments(
  tx: Transaction<DB>,
  actor: Actor,
  accepted: readonly AcceptedDraft[],
): Promise<void> {
  for (const draft of accepted) {
    const { command } = draft;
    // The order moves open -> invoiced by the orders module's own function (a guarded UPDATE: of two invoices racing
    // for one order, the second is 409 invalid_state and rolls back whole).
    if (command.orderId) await markOrderInvoiced(tx, actor, command.orderId);
    // Paid at once: the payments module's own posting function records the receipt for the total, dated the issue
    // date and on the van sale's trip (its invoice lock, taken on a row no one else can see yet, is free).
    if (command.payment && new Decimal(draft.totals.total).greaterThan(0)) {
      const total = { amount: draft.totals.total, currency: command.currency };
      await recordPayment(tx, actor, {
        customerId: command.customerId,
        method: command.payment.method,
        reference: command.payment.reference ?? null,
        amount: total,
        paymentDate: command.issueDate,
        tripId: draft.tripId,
        allocations: [{ invoiceId: draft.id, amount: total }],
      });
    }
  }
}

/** What a set of invoices names, read once: the closed period, the customers, products, locations, salespeople, trips. */
interface InvoiceFacts {
  closedThrough: string | null;
  customers: Map<string, { credit_limit_amount: string | null; payment_terms_days: number }>;
  products: Map<string, ProductRow>;
  lines: LineFacts;
  locationKinds: Map<string, string>;
  salespeople: Set<string>;
  /** Van location id -> its trips in transit, by id. */
  trips: Map<string, { id: string; salesperson_id: string }[]>;
}

async function readFacts(
  tx: Transaction<DB>,
  actor: Actor,
  commands: readonly CreateInvoiceCommand[],
): Promise<InvoiceFacts> {
  const organizationId = actor.organization.id;
  // The organisation's row first (FOR SHARE): a period close waits for these invoices, and they for a close.
  const closedThrough = await booksClosedThrough(tx, organizationId);
  const customerIds = [...new Set(commands.map((command) => command.customerId))];
  const customers = await tx
    .selectFrom('customers')
    .select(['id', 'credit_limit_amount', 'payment_terms_days'])
    .where('organization_id', '=', organizationId)
    .where('id', 'in', customerIds)
    .execute();
  const productIds = [...new Set(commands.flatMap((command) => command.lines.map((line) => line.productId)))];
  const products =
    productIds.length === 0 ? new Map<string, ProductRow>() : await readProducts(tx, organizationId, productIds);
  // The empties the goods carry, with the goods.
  const emptyIds = [
    ...new Set([...products.values()].flatMap((product) => product.empties.map((empty) => empty.productId))),
  ].filter((id) => !products.has(id));
  if (emptyIds.length > 0)
    for (const [id, product] of await readProducts(tx, organizationId, emptyIds)) products.set(id, product);
  const locationIds = [...new Set(commands.map((command) => command.locationId))];
  const locations = await tx
    .selectFrom('locations')
    .select(['id', 'active', 'kind'])
    .where('organization_id', '=', organizationId)
    .where('id', 'in', locationIds)
    .execute();
  const named = [...new Set(commands.flatMap((command) => (command.salespersonId ? [command.salespersonId] : [])))];
  const salespeople =
    named.length === 0
      ? []
      : await tx
          .selectFrom('salespeople')
          .select('id')
          .where('organization_id', '=', organizationId)
          .where('id', 'in', named)
          .execute();
  const vans = locations.filter((location) => location.kind === 'van').map((location) => location.id);
  const trips =
    vans.length === 0
      ? []
      : await tx
          .selectFrom('trips')
          .select(['id', 'salesperson_id', 'van_location_id'])
          .where('organization_id', '=', organizationId)
          .where('van_location_id', 'in', vans)
          .where('status', '=', 'in_transit')
          .orderBy('id')
          .execute();
  const tripsOf = new Map<string, { id: string; salesperson_id: string }[]>();
  for (const trip of trips) tripsOf.set(trip.van_location_id, [...(tripsOf.get(trip.van_location_id) ?? []), trip]);
  return {
    closedThrough,
    customers: new Map(customers.map((row) => [row.id, row])),
    products,
    lines: {
      products: new Map(
        [...products].map(([id, row]) => [
          id,
          { packSize: row.pack_size, tracksStock: row.tracks_stock, isEmpty: row.is_empty },
        ]),
      ),
      locations: new Map(locations.map((row) => [row.id, row.active])),
    },
    locationKinds: new Map(locations.map((row) => [row.id, row.kind])),
    salespeople: new Set(salespeople.map((row) => row.id)),
    trips: tripsOf,
  };
}

/** An invoice checked and planned on its own (its lines, totals, movements), before the set's stock and credit. */
interface Draft {
  index: number;
  id: string;
  command: CreateInvoiceCommand;
  plans: LinePlan[];
  totals: ReturnType<typeof documentTotals>;
  dueDate: string;
  tripId: string | null;
  salespersonId: string | null;
  creditLimit: string | null;
  movements: Movement[];
  /** Without their stock movement's id (known once the movements are written). */
  empties: EmptiesMove[];
  fieldOf: (line: number) => string;
}

/**
 * Checks one invoice (refusing it with the ApiError createInvoice has always thrown) and plans its lines. The steps:
 * the header, the order, the lines, the van sale's trip; then the lines' plan, totals, movements and empties.
 */
async function draftInvoice(
  tx: Transaction<DB>,
  actor: Actor,
  command: CreateInvoiceCommand,
  facts: InvoiceFacts,
): Promise<Omit<Draft, 'index'>> {
  const customer = checkInvoiceHeader(actor, command, facts);
  if (command.orderId) await requireOrderToInvoice(tx, actor.organization.id, command.orderId, command.customerId);
  checkLines(
    facts.lines,
    command.lines.map((line) => ({ productId: line.productId, locationIds: [command.locationId] })),
    ['/locationId'],
  );
  checkInvoiceLines(command.lines);
  const dueDate = command.dueDate ?? addDays(command.issueDate, customer.payment_terms_days);
  if (dueDate < command.issueDate)
    throwIfAny([{ field: '/dueDate', code: 'invalid_field', message: 'before issueDate' }]);
  const { tripId, salespersonId } = chooseVanTrip(actor, command, facts);
  const products = facts.products;
  const plans = planInvoiceLines(command, products);
  const totals = documentTotals(
    plans.map((plan) => plan.amounts),
    command.currency,
  );
  // Goods and empties off the location (the lines whose product tracks stock), and the empties to the customer.
  const stockLines = plans.filter((plan) => products.get(plan.productId)!.tracks_stock);
  const tracked = new Set(stockLines.map((plan) => plan.lineNumber));
  return {
    id: newId('inv'),
    command,
    plans,
    totals,
    dueDate,
    tripId,
    salespersonId,
    creditLimit: customer.credit_limit_amount,
    movements: stockLines.map(
      (plan): Movement => ({
        line: plan.lineNumber,
        productId: plan.productId,
        fromLocationId: command.locationId,
        toLocationId: null,
        quantity: plan.baseQuantity,
      }),
    ),
    empties: plans
      .filter((plan) => plan.kind === 'empties')
      .map(
        (plan): EmptiesMove => ({
          line: plan.lineNumber,
          type: 'issued_with_sale',
          direction: 'out',
          productId: plan.productId,
          quantity: plan.quantity,
          customerId: command.customerId,
          tripId,
          locationId: tracked.has(plan.lineNumber) ? command.locationId : null,
          stockMovementId: null,
        }),
      ),
    fieldOf: (line: number) => plans[line - 1]!.field,
  };
}

/** The invoice's header, in the order it has always been checked: fiscalisable, currency, period, customer, lines, payment reference. Its customer. */
function checkInvoiceHeader(
  actor: Actor,
  command: CreateInvoiceCommand,
  facts: InvoiceFacts,
): { credit_limit_amount: string | null; payment_terms_days: number } {
  const currency = command.currency;
  if (
    command.refuseUnfiscalisable &&
    command.fiscalise !== false &&
    command.payment &&
    !FISCAL_SALE_METHODS.includes(command.payment.method)
  ) {
    throw new ApiError(
      'not_fiscalisable',
      `A sale paid by ${command.payment.method.replace('_', ' ')} cannot be fiscalised: the fiscal system records cash and mobile money only. Nothing was posted.`,
      [
        {
          field: '/payment/method',
          code: 'business_rule',
          message: 'cash or mobile money while the sale is fiscalised',
        },
      ],
    );
  }
  if (currency !== actor.organization.baseCurrency) {
    throw new ApiError(
      'currency_not_supported',
      `Invoices are in the organisation's base currency ${actor.organization.baseCurrency}; got ${currency}.`,
      [{ field: '/currency', code: 'currency_not_supported', message: `must be ${actor.organization.baseCurrency}` }],
    );
  }
  refuseDateInClosedPeriod(facts.closedThrough, command.issueDate, '/issueDate');
  const customer = facts.customers.get(command.customerId);
  if (!customer)
    throw new ApiError('customer_not_found', `There is no customer ${command.customerId} in this organisation.`, [
      { field: '/customerId', code: 'customer_not_found', message: 'not a customer of this organisation' },
    ]);
  if (command.lines.length === 0)
    throwIfAny([{ field: '/lines', code: 'invalid_field', message: 'an invoice has at least one line' }]);
  if (
    command.payment &&
    NEEDS_REFERENCE.includes(command.payment.method) &&
    (command.payment.reference ?? '').trim() === ''
  ) {
    throw new ApiError(
      'required_field',
      `A sale paid by ${command.payment.method.replace('_', ' ')} needs the payment's reference.`,
      [
        {
          field: '/payment/reference',
          code: 'required_field',
          message: `required when method is ${command.payment.method}`,
        },
      ],
    );
  }
  return customer;
}

/** Each line: a whole quantity more than 0; a free line priced 0 without discount; a discount not above the line's gross. */
function checkInvoiceLines(lines: readonly InvoiceLineCommand[]): void {
  throwIfAny(
    lines.flatMap((line, i): FieldError[] => {
      const field = (name: string) => `/lines/${i}/${name}`;
      if (!Number.isSafeInteger(line.quantity) || line.quantity <= 0)
        return [{ field: field('quantity'), code: 'invalid_field', message: 'a whole number of units, more than 0' }];
      if (line.kind === 'free' && !new Decimal(line.unitPrice).isZero())
        return [{ field: field('unitPrice'), code: 'invalid_field', message: 'a free line is priced 0' }];
      if (line.kind === 'free' && line.discount !== undefined && !new Decimal(line.discount).isZero())
        return [{ field: field('discount'), code: 'invalid_field', message: 'a free line has no discount' }];
      if (
        line.discount !== undefined &&
        new Decimal(line.discount).greaterThan(new Decimal(line.unitPrice).times(line.quantity))
      ) {
        return [{ field: field('discount'), code: 'invalid_field', message: 'more than quantity x unitPrice' }];
      }
      return [];
    }),
  );
}

/** A van sale: the field sales modules, and the salesperson's in-transit trip with that van. A named salesperson must exist either way. */
function chooseVanTrip(
  actor: Actor,
  command: CreateInvoiceCommand,
  facts: InvoiceFacts,
): { tripId: string | null; salespersonId: string | null } {
  const salespersonId = command.salespersonId ?? null;
  if (salespersonId !== null && !facts.salespeople.has(salespersonId)) {
    throw new ApiError('business_rule', `There is no salesperson ${salespersonId} in this organisation.`, [
      { field: '/salespersonId', code: 'business_rule', message: 'not a salesperson of this organisation' },
    ]);
  }
  if (facts.locationKinds.get(command.locationId) !== 'van') return { tripId: null, salespersonId };
  if (!actor.organization.fieldSalesModuleEnabled) {
    throw new ApiError(
      'field_sales_disabled',
      'A sale from a van needs the field sales modules, which this organisation has switched off.',
      [{ field: '/locationId', code: 'field_sales_disabled', message: 'a van' }],
    );
  }
  const trip = (facts.trips.get(command.locationId) ?? []).find(
    (candidate) => salespersonId === null || candidate.salesperson_id === salespersonId,
  );
  if (!trip) {
    throw new ApiError(
      'no_open_trip',
      `A van sale needs ${salespersonId === null ? 'a' : "the salesperson's"} trip in transit with van ${command.locationId}; there is none.`,
      [
        {
          field: salespersonId === null ? '/locationId' : '/salespersonId',
          code: 'no_open_trip',
          message: 'no in-transit trip with this van',
        },
      ],
    );
  }
  return { tripId: trip.id, salespersonId: trip.salesperson_id };
}

/** The lines: the goods as asked, then one empties line per empty the goods carry (pieces, price 0). */
function planInvoiceLines(command: CreateInvoiceCommand, products: ReadonlyMap<string, ProductRow>): LinePlan[] {
  const currency = command.currency;
  const plans: LinePlan[] = command.lines.map((line, i) => {
    const product = products.get(line.productId)!;
    const perUnit = line.unit === 'case' ? product.pack_size : 1;
    const kind = line.kind ?? 'sale';
    const taxRate = kind === 'sale' ? product.tax_rate : '0';
    return {
      lineNumber: i + 1,
      kind,
      productId: line.productId,
      unit: line.unit,
      quantity: line.quantity,
      unitPrice: line.unitPrice,
      taxRate,
      amounts: lineAmounts(
        { quantity: line.quantity, unitPrice: line.unitPrice, discount: line.discount ?? 0, taxRate },
        currency,
      ),
      baseQuantity: line.quantity * perUnit,
      field: `/lines/${i}/quantity`,
    };
  });
  const carried = new Map<string, { quantity: number; field: string }>();
  command.lines.forEach((line, i) => {
    for (const empty of products.get(line.productId)!.empties) {
      // Per case: for each full case the line sells (bottles sold loose carry no crate); per bottle: for each bottle.
      const product = products.get(line.productId)!;
      const pieces =
        empty.per === 'case'
          ? Math.floor(plans[i]!.baseQuantity / product.pack_size) * empty.quantity
          : plans[i]!.baseQuantity * empty.quantity;
      if (pieces === 0) continue;
      const before = carried.get(empty.productId);
      carried.set(empty.productId, {
        quantity: (before?.quantity ?? 0) + pieces,
        field: before?.field ?? `/lines/${i}/quantity`,
      });
    }
  });
  for (const [productId, { quantity, field }] of carried) {
    plans.push({
      lineNumber: plans.length + 1,
      kind: 'empties',
      productId,
      unit: 'piece',
      quantity,
      unitPrice: '0',
      taxRate: '0',
      amounts: lineAmounts({ quantity, unitPrice: 0, taxRate: 0 }, currency),
      baseQuantity: quantity,
      field,
    });
  }
  return plans;
}

/** The order an invoice names: the organisation's, of the invoice's customer, and still open (422 naming /orderId). */
async function requireOrderToInvoice(
  tx: Transaction<DB>,
  organizationId: string,
  orderId: string,
  customerId: string,
): Promise<void> {
  const order = await findOrder(tx, organizationId, orderId);
  const problem = !order
    ? 'not an order of this organisation'
    : order.customer_id !== customerId
      ? `an order of another customer (${order.customer_id})`
      : order.status !== 'open'
        ? `the order is ${order.status}; only an open order is invoiced`
        : null;
  if (problem)
    throw new ApiError('business_rule', `orderId: ${problem}.`, [
      { field: '/orderId', code: 'business_rule', message: problem },
    ]);
}

/**
 * Voids an invoice while nothing is allocated or credited to it (status open and balance equal to its total; 409
 * invalid_state otherwise): a reversing account entry, its goods and empties back through the ledgers, its status
 * void with the reason. Nothing posted is edited: the reversal is new rows of the ledgers.
 */
export async function voidInvoice(
  tx: Transaction<DB>,
  actor: Actor,
  invoiceId: string,
  reason: string,
): Promise<PostedInvoice> {
  const organizationId = actor.organization.id;
  if (reason.trim() === '')
    throwIfAny([{ field: '/reason', code: 'invalid_field', message: 'say why the invoice is voided' }]);
  // The invoice's row lock first, as every operation on its balance takes it: a payment racing this void waits for
  // it (or this void for the payment) and then sees the other's balance.
  const invoice = (await lockInvoices(tx, organizationId, [invoiceId])).get(invoiceId);
  if (!invoice) throw new ApiError('not_found', `There is no invoice ${invoiceId} in this organisation.`);
  const status = invoice.status as InvoiceStatus;
  invoiceLifecycle.next(status, 'void', invoiceId); // 409 invalid_state from paid or void, naming the status
  // A void of an invoice dated in a closed period would change closed books.
  await refuseClosedPeriod(tx, organizationId, invoice.issue_day, '/issueDate');
  if (!new Decimal(invoice.balance).equals(invoice.total)) {
    throw new ApiError(
      'invalid_state',
      `The invoice ${invoice.number} has ${roundToCurrency(new Decimal(invoice.total).minus(invoice.balance), invoice.currency)} ${invoice.currency} allocated or credited to it; reverse those first.`,
    );
  }

  // Goods and empties back, as the invoice moved them: the stock movements reversed into the location, the empties
  // the customer was issued collected back.
  const lines = await tx
    .selectFrom('invoice_lines')
    .select(['line_number', 'kind', 'product_id', 'quantity'])
    .where('organization_id', '=', organizationId)
    .where('invoice_id', '=', invoiceId)
    .orderBy('line_number')
    .execute();
  const moved = await tx
    .selectFrom('stock_movements')
    .select(['line_number', 'product_id', 'quantity'])
    .where('organization_id', '=', organizationId)
    .where('document_type', '=', INVOICE)
    .where('document_id', '=', invoiceId)
    .orderBy('line_number')
    .execute();
  const field = () => '/reason';
  const posted = await postMovements(
    tx,
    organizationId,
    { type: INVOICE_VOID, id: invoiceId },
    moved.map(
      (m): Movement => ({
        line: m.line_number,
        productId: m.product_id,
        fromLocationId: null,
        toLocationId: invoice.location_id,
        quantity: m.quantity,
      }),
    ),
    field,
  );
  const movementOf = new Map(posted.map((movement) => [movement.line, movement.id]));
  await postEmptiesMovements(
    tx,
    organizationId,
    { type: INVOICE_VOID, id: invoiceId },
    lines
      .filter((line) => line.kind === 'empties')
      .map(
        (line): EmptiesMove => ({
          line: line.line_number,
          type: 'collected',
          direction: 'in',
          productId: line.product_id,
          quantity: line.quantity,
          customerId: invoice.customer_id,
          tripId: invoice.trip_id,
          locationId: movementOf.has(line.line_number) ? invoice.location_id : null,
          stockMovementId: movementOf.get(line.line_number) ?? null,
        }),
      ),
    field,
  );

  await lockCustomerBalance(tx, organizationId, invoice.customer_id, invoice.currency);
  if (new Decimal(invoice.total).greaterThan(0)) {
    await postAccountEntries(tx, organizationId, [
      {
        customerId: invoice.customer_id,
        type: 'invoice_void',
        documentType: INVOICE,
        documentId: invoiceId,
        lineNumber: null,
        invoiceId,
        amount: new Decimal(invoice.total).negated().toFixed(),
        currency: invoice.currency,
      },
    ]);
  }
  // The external systems' side (the spec's reversal rules): a fiscalised invoice is never voided (409), a posting not
  // yet made is cancelled, one the accounting system holds gets its void there queued.
  const reversal = await planReversal(
    tx,
    organizationId,
    { type: 'invoice', id: invoiceId, number: invoice.number },
    'Voided',
  );
  // The move and its reason in one guarded UPDATE (a void always has its reason: a CHECK holds it); a void that
  // raced another finds the status changed and is 409.
  const { to, event } = invoiceLifecycle.next(status, 'void', invoiceId);
  const { numUpdatedRows } = await tx
    .updateTable('invoices')
    .set((eb) => ({
      status: to,
      void_reason: reason,
      voided_at: eb.fn<Date>('now'),
      updated_at: eb.fn<Date>('now'),
      ...(reversal.posting ? { posting_status: reversal.posting.status, posting_reason: reversal.posting.reason } : {}),
      ...(reversal.fiscal ? { fiscal_status: reversal.fiscal.status } : {}),
    }))
    .where('organization_id', '=', organizationId)
    .where('id', '=', invoiceId)
    .where('status', '=', status)
    .executeTakeFirst();
  if (numUpdatedRows === 0n)
    throw new ApiError(
      'invalid_state',
      `The invoice ${invoice.number} is not ${status} any more: another request changed it first. Read it again.`,
    );
  await recordEvent(tx, organizationId, event, INVOICE, invoiceId);
  return { id: invoiceId, number: invoice.number };
}

async function readProducts(
  tx: Transaction<DB>,
  organizationId: string,
  ids: string[],
): Promise<Map<string, ProductRow>> {
  const rows = await tx
    .selectFrom('products')
    .select(['id', 'pack_size', 'tax_rate', 'is_empty', 'tracks_stock', 'empties'])
    .where('organization_id', '=', organizationId)
    .where('id', 'in', ids)
    .execute();
  return new Map(rows.map((row) => [row.id, { ...row, tax_rate: String(row.tax_rate), empties: row.empties ?? [] }]));
}

/** YYYY-MM-DD plus whole days, in UTC (a calendar date has no time zone). */
function addDays(date: string, days: number): string {
  const at = new Date(`${date}T00:00:00Z`);
  at.setUTCDate(at.getUTCDate() + days);
  return at.toISOString().slice(0, 10);
}
