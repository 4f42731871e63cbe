// The posting function of returns: processReturn records a return against an invoice and processes it at once, in
// the caller's transaction: good stock back into the invoice's location (a van sale's van) or the given one, damaged
// stock into the bad-stock location, the empties the goods carry collected back from the customer, one stock
// document of type `return` (its `stock.movement.created` event), the return and its lines, and a credit note of
// type `return` (issueCreditNote, the one way a credit note is issued) applied like any other. Or nothing at all.
//
// Lock order, the global one: the invoice's row (lockInvoices) first, then stock valuations and levels
// (postMovements, through the stock module's postDocument), the customer's empties (postEmptiesMovements), the
// customer's balance row, then the numbers (the return's, the credit note's, the stock document's).
import { Decimal } from 'decimal.js';
import { sql } from 'kysely';
import type { Actor } from '../../platform/access/actor.js';
import { nextDocumentNumber } from '../../domain/documents/numbers.js';
import {
  documentTotals,
  lineAmounts,
  roundToCurrency,
  type DocumentTotals,
  type LineAmounts,
} from '../../domain/money.js';
import { refuseClosedPeriod } from '../../domain/periods.js';
import type { Tx } from '../../platform/database/transaction.js';
import { dateProblem } from '../../platform/dates.js';
import { ApiError, type FieldError } from '../../platform/errors/api-error.js';
import { newId } from '../../platform/ids.js';
import { issueCreditNote } from '../credit-notes/documents.js';
import { organizationToday } from '../../platform/access/organizations.js';
import { lockCustomerBalance, lockInvoices, type LockedInvoice } from '../customer-account/ledger.js';
import { postDocument, type StockUnit } from '../stock/documents.js';
import { postEmptiesMovements, type EmptiesMove } from '../stock/empties.js';
import type { Movement } from '../stock/ledger.js';

/** The resource name of returns in external codes. */
export const RETURN = 'return';

export interface ReturnLineCommand {
  /** The invoice line returned from; or `productId` when exactly one sale or free line of the invoice has it. */
  invoiceLineNumber?: number;
  productId?: string;
  unit: StockUnit;
  /** Whole units of `unit`, more than 0. */
  quantity: number;
  condition: 'good' | 'damaged';
}

export interface ProcessReturnCommand {
  invoiceId: string;
  /** YYYY-MM-DD; today (UTC) when absent. */
  returnDate?: string;
  reason?: string | null;
  /** Where good stock goes; the invoice's location when absent. */
  locationId?: string | null;
  /** Where damaged stock goes; the trip's bad-stock location (van sale) or the damages location when absent. */
  badStockLocationId?: string | null;
  lines: ReturnLineCommand[];
  /** false: its credit note is not submitted to the fiscal system (a DMS connection whose fiscalise switch is off). */
  fiscalise?: boolean;
}

export interface ProcessedReturn {
  id: string;
  number: string;
  creditNoteId: string | null;
}

interface InvoiceLine {
  line_number: number;
  kind: string;
  product_id: string;
  unit: string;
  quantity: number;
  unit_price: string;
  discount: string;
  tax_rate: string;
}

interface ProductFacts {
  id: string;
  pack_size: number;
  tracks_stock: boolean;
  empties: { productId: string; quantity: number; per: 'case' | 'bottle' }[];
}

const perUnit = (product: ProductFacts, unit: string) => (unit === 'case' ? product.pack_size : 1);

/** A line of the return, priced: its invoice line, its base units, and the money it credits. */
interface PricedLine {
  invoiceLine: InvoiceLine;
  base: number;
  unitPrice: string;
  discount: string;
  amounts: LineAmounts;
}

/** What the return reads of its invoice before it plans: its lines, the one each return line names, their products and what earlier returns took back. */
interface InvoiceFacts {
  invoiceLines: InvoiceLine[];
  chosen: InvoiceLine[];
  products: Map<string, ProductFacts>;
  /** Per invoice line number: base units returned already and their discount shares. */
  taken: Map<number, { base: number; discount: Decimal }>;
}

/** Where the goods go: good stock, and damaged stock (null when nothing is damaged and no place was given). */
interface ReturnPlaces {
  goodLocationId: string;
  badLocationId: string | null;
}

/** The stock the return moves: goods and tracked empties (stock ledger), the empties collected back (empties ledger), and the request field of each line. */
interface ReturnStock {
  movements: Movement[];
  emptiesLines: { line: number; productId: string; quantity: number; tracked: boolean }[];
  fields: Map<number, string>;
}

/** Everything the write step needs, computed without writing. */
interface ReturnPlan {
  id: string;
  returnDate: string;
  invoice: LockedInvoice;
  priced: PricedLine[];
  totals: DocumentTotals;
  places: ReturnPlaces;
  stock: ReturnStock;
}

/**
 * Records and processes a return against an invoice (see the file's head). The steps: load and check the invoice
 * (its row lock first), plan the lines' prices, places and stock, then write it all through the stock document.
 */
export async function processReturn(tx: Tx, actor: Actor, command: ProcessReturnCommand): Promise<ProcessedReturn> {
  const organizationId = actor.organization.id;
  const currency = actor.organization.baseCurrency;
  const returnDate = command.returnDate ?? (await organizationToday(tx, organizationId));
  checkReturnShape(command, returnDate);
  const invoice = await loadReturnableInvoice(tx, organizationId, currency, command.invoiceId, returnDate);
  const facts = await loadInvoiceFacts(tx, organizationId, invoice, command.lines);
  const priced = priceReturnLines(command.lines, facts, currency);
  const totals = documentTotals(
    priced.map((p) => p.amounts),
    currency,
  );
  const places = await choosePlaces(tx, organizationId, invoice, command);
  const stock = await planReturnStock(tx, organizationId, invoice, command.lines, priced, facts.products, places);
  return writeReturn(tx, actor, command, { id: newId('ret'), returnDate, invoice, priced, totals, places, stock });
}

/** The shape first (400): each line names its invoice line one way and a whole quantity; at least one line; a real date. */
function checkReturnShape(command: ProcessReturnCommand, returnDate: string): void {
  const shape: FieldError[] = [];
  command.lines.forEach((line, i) => {
    if ((line.invoiceLineNumber === undefined) === (line.productId === undefined)) {
      shape.push({
        field: `/lines/${i}/invoiceLineNumber`,
        code: line.invoiceLineNumber === undefined ? 'required_field' : 'invalid_field',
        message: 'give invoiceLineNumber or productId, not both',
      });
    }
    if (!Number.isSafeInteger(line.quantity) || line.quantity <= 0)
      shape.push({
        field: `/lines/${i}/quantity`,
        code: 'invalid_field',
        message: 'a whole number of units, more than 0',
      });
  });
  if (command.lines.length === 0)
    shape.push({ field: '/lines', code: 'invalid_field', message: 'a return has at least one line' });
  const dateIssue = dateProblem(returnDate);
  if (dateIssue) shape.push({ field: '/returnDate', code: 'invalid_field', message: dateIssue });
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

/** The invoice's row lock first: two returns of one invoice run one after the other, each seeing what the other took back. */
async function loadReturnableInvoice(
  tx: Tx,
  organizationId: string,
  currency: string,
  invoiceId: string,
  returnDate: string,
): Promise<LockedInvoice> {
  const invoice = (await lockInvoices(tx, organizationId, [invoiceId])).get(invoiceId);
  if (!invoice)
    throw new ApiError('invoice_not_found', `There is no invoice ${invoiceId} in this organisation.`, [
      { field: '/invoiceId', code: 'invoice_not_found', message: 'not an invoice of this organisation' },
    ]);
  if (invoice.status === 'void')
    throw new ApiError('business_rule', `Invoice ${invoice.number} is void: its goods came back when it was voided.`, [
      { field: '/invoiceId', code: 'business_rule', message: 'a void invoice' },
    ]);
  if (invoice.currency !== currency) {
    throw new ApiError(
      'currency_not_supported',
      `Returns accept invoices in the organisation's base currency ${currency} only; invoice ${invoice.number} is in ${invoice.currency}.`,
      [{ field: '/invoiceId', code: 'currency_not_supported', message: `an invoice in ${invoice.currency}` }],
    );
  }
  await refuseClosedPeriod(tx, organizationId, returnDate, '/returnDate');
  return invoice;
}

/** The invoice's lines, each return line's own (refused when none), the products, and what earlier returns took back. */
async function loadInvoiceFacts(
  tx: Tx,
  organizationId: string,
  invoice: LockedInvoice,
  lines: readonly ReturnLineCommand[],
): Promise<InvoiceFacts> {
  const invoiceLines = (await tx
    .selectFrom('invoice_lines')
    .select(['line_number', 'kind', 'product_id', 'unit', 'quantity', 'unit_price', 'discount', 'tax_rate'])
    .where('organization_id', '=', organizationId)
    .where('invoice_id', '=', invoice.id)
    .orderBy('line_number')
    .execute()) as InvoiceLine[];
  const chosen = matchInvoiceLines(invoice, invoiceLines, lines);
  const products = await readProducts(
    tx,
    organizationId,
    invoiceLines.map((line) => line.product_id),
  );
  // What earlier returns took back of each invoice line (base units, and their discount shares).
  const earlier = await tx
    .selectFrom('return_lines as l')
    .innerJoin('returns as r', (join) =>
      join.onRef('r.organization_id', '=', 'l.organization_id').onRef('r.id', '=', 'l.return_id'),
    )
    .select(['l.invoice_line_number', 'l.unit', 'l.quantity', 'l.discount'])
    .where('l.organization_id', '=', organizationId)
    .where('r.invoice_id', '=', invoice.id)
    .execute();
  const taken = new Map<number, { base: number; discount: Decimal }>();
  for (const row of earlier) {
    const invoiceLine = invoiceLines.find((l) => l.line_number === row.invoice_line_number)!;
    const before = taken.get(row.invoice_line_number) ?? { base: 0, discount: new Decimal(0) };
    taken.set(row.invoice_line_number, {
      base: before.base + row.quantity * perUnit(products.get(invoiceLine.product_id)!, row.unit),
      discount: before.discount.plus(row.discount),
    });
  }
  return { invoiceLines, chosen, products, taken };
}

/** Each line's invoice line: by number, or the one sale or free line of its product (422 naming each line that has none). */
function matchInvoiceLines(
  invoice: LockedInvoice,
  invoiceLines: readonly InvoiceLine[],
  lines: readonly ReturnLineCommand[],
): InvoiceLine[] {
  const returnable = invoiceLines.filter((line) => line.kind !== 'empties');
  const chosen: InvoiceLine[] = [];
  const unmatched: FieldError[] = [];
  lines.forEach((line, i) => {
    if (line.invoiceLineNumber !== undefined) {
      const found = invoiceLines.find((l) => l.line_number === line.invoiceLineNumber);
      if (!found)
        unmatched.push({
          field: `/lines/${i}/invoiceLineNumber`,
          code: 'business_rule',
          message: `invoice ${invoice.number} has no line ${line.invoiceLineNumber}`,
        });
      else if (found.kind === 'empties')
        unmatched.push({
          field: `/lines/${i}/invoiceLineNumber`,
          code: 'business_rule',
          message: 'an empties line: empties come back with the goods that carry them',
        });
      else chosen[i] = found;
    } else {
      const found = returnable.filter((l) => l.product_id === line.productId);
      if (found.length === 1) chosen[i] = found[0]!;
      else
        unmatched.push({
          field: `/lines/${i}/productId`,
          code: 'business_rule',
          message:
            found.length === 0
              ? `no sale or free line of invoice ${invoice.number} has this product`
              : 'several lines of the invoice have this product: name the invoiceLineNumber',
        });
    }
  });
  if (unmatched.length > 0)
    throw new ApiError(
      'business_rule',
      unmatched.length === 1
        ? `${unmatched[0]!.field.slice(1)}: ${unmatched[0]!.message}.`
        : 'Lines name no returnable line of the invoice; errors[] names each.',
      unmatched,
    );
  return chosen;
}

/**
 * Never more than invoiced less already returned; each line priced at its invoice line's price, tax rate and a
 * pro-rata share of its discount (cumulative, so the shares of all the returns of a line add up to its discount).
 */
function priceReturnLines(lines: readonly ReturnLineCommand[], facts: InvoiceFacts, currency: string): PricedLine[] {
  const taken = new Map(facts.taken);
  const over: FieldError[] = [];
  const priced: PricedLine[] = [];
  lines.forEach((line, i) => {
    const invoiceLine = facts.chosen[i]!;
    const product = facts.products.get(invoiceLine.product_id)!;
    const invoicedBase = invoiceLine.quantity * perUnit(product, invoiceLine.unit);
    const base = line.quantity * perUnit(product, line.unit);
    const before = taken.get(invoiceLine.line_number) ?? { base: 0, discount: new Decimal(0) };
    if (before.base + base > invoicedBase) {
      over.push({
        field: `/lines/${i}/quantity`,
        code: 'business_rule',
        message: `invoice line ${invoiceLine.line_number} sold ${invoicedBase} base units and ${before.base} were returned already; ${invoicedBase - before.base} can still come back, not ${base}`,
      });
      return;
    }
    const invoicePer = perUnit(product, invoiceLine.unit);
    const returnPer = perUnit(product, line.unit);
    const unitPrice =
      returnPer === invoicePer
        ? new Decimal(invoiceLine.unit_price).toFixed()
        : roundToCurrency(new Decimal(invoiceLine.unit_price).times(returnPer).dividedBy(invoicePer), currency);
    const cumulative = new Decimal(
      roundToCurrency(new Decimal(invoiceLine.discount).times(before.base + base).dividedBy(invoicedBase), currency),
    );
    const gross = new Decimal(unitPrice).times(line.quantity);
    const share = Decimal.min(cumulative.minus(before.discount), gross);
    taken.set(invoiceLine.line_number, { base: before.base + base, discount: before.discount.plus(share) });
    priced[i] = {
      invoiceLine,
      base,
      unitPrice,
      discount: share.toFixed(),
      amounts: lineAmounts(
        { quantity: line.quantity, unitPrice, discount: share, taxRate: invoiceLine.tax_rate },
        currency,
      ),
    };
  });
  if (over.length > 0)
    throw new ApiError(
      'business_rule',
      over.length === 1
        ? `${over[0]!.field.slice(1)}: ${over[0]!.message}.`
        : 'Lines return more than is left to return; errors[] names each.',
      over,
    );
  return priced;
}

/** Where the goods go: good stock to the invoice's location or the given one; damaged stock to the bad-stock location. */
async function choosePlaces(
  tx: Tx,
  organizationId: string,
  invoice: LockedInvoice,
  command: ProcessReturnCommand,
): Promise<ReturnPlaces> {
  const goodLocationId = command.locationId ?? invoice.location_id;
  const damaged = command.lines.some((line) => line.condition === 'damaged');
  let badLocationId: string | null = null;
  if (damaged)
    badLocationId = command.badStockLocationId ?? (await defaultBadStockLocation(tx, organizationId, invoice.trip_id));
  else if (command.badStockLocationId != null) badLocationId = command.badStockLocationId;
  await requireLocations(tx, organizationId, [
    ...(command.locationId != null ? [{ id: command.locationId, field: '/locationId' }] : []),
    ...(badLocationId !== null ? [{ id: badLocationId, field: '/badStockLocationId' }] : []),
  ]);
  if (damaged && badLocationId === null) {
    throw new ApiError(
      'business_rule',
      invoice.trip_id
        ? "Damaged goods go to the trip's bad-stock location, and the trip has none; give badStockLocationId."
        : 'Damaged goods go to a damages location, and the organisation has no active one; give badStockLocationId.',
      [
        {
          field: '/badStockLocationId',
          code: 'business_rule',
          message: 'no bad-stock location to take the damaged goods',
        },
      ],
    );
  }
  return { goodLocationId, badLocationId };
}

/**
 * The stock: each goods line received where its condition sends it, at the cost the sale took it out at; then the
 * empties the goods carry, received into the good-stock location and collected back from the customer.
 */
async function planReturnStock(
  tx: Tx,
  organizationId: string,
  invoice: LockedInvoice,
  lines: readonly ReturnLineCommand[],
  priced: readonly PricedLine[],
  products: ReadonlyMap<string, ProductFacts>,
  places: ReturnPlaces,
): Promise<ReturnStock> {
  const saleCosts = await tx
    .selectFrom('stock_movements')
    .select(['line_number', 'unit_cost'])
    .where('organization_id', '=', organizationId)
    .where('document_type', '=', 'invoice')
    .where('document_id', '=', invoice.id)
    .execute();
  const costOf = new Map(saleCosts.map((m) => [m.line_number, String(m.unit_cost)]));
  const movements: Movement[] = [];
  const fields = new Map<number, string>();
  lines.forEach((line, i) => {
    const { invoiceLine, base } = priced[i]!;
    fields.set(i + 1, `/lines/${i}/quantity`);
    if (!products.get(invoiceLine.product_id)!.tracks_stock) return;
    const cost = costOf.get(invoiceLine.line_number);
    movements.push({
      line: i + 1,
      productId: invoiceLine.product_id,
      fromLocationId: null,
      toLocationId: line.condition === 'good' ? places.goodLocationId : places.badLocationId!,
      quantity: base,
      ...(cost === undefined ? {} : { unitCost: cost }),
    });
  });
  const carried = carriedEmpties(priced, products);
  const emptiesProducts = await readProducts(tx, organizationId, [...carried.keys()]);
  const emptiesLines: ReturnStock['emptiesLines'] = [];
  for (const [productId, { quantity, field }] of carried) {
    const line = lines.length + emptiesLines.length + 1;
    fields.set(line, field);
    const tracked = emptiesProducts.get(productId)?.tracks_stock ?? false;
    emptiesLines.push({ line, productId, quantity, tracked });
    if (tracked)
      movements.push({ line, productId, fromLocationId: null, toLocationId: places.goodLocationId, quantity });
  }
  return { movements, emptiesLines, fields };
}

/** The empties the returned sale and free goods carry, per empties product, with the field of the first line that carries each. */
function carriedEmpties(
  priced: readonly PricedLine[],
  products: ReadonlyMap<string, ProductFacts>,
): Map<string, { quantity: number; field: string }> {
  const carried = new Map<string, { quantity: number; field: string }>();
  priced.forEach(({ invoiceLine, base }, i) => {
    const product = products.get(invoiceLine.product_id)!;
    if (invoiceLine.kind !== 'sale' && invoiceLine.kind !== 'free') return;
    for (const empty of product.empties) {
      const pieces =
        empty.per === 'case' ? Math.floor(base / product.pack_size) * empty.quantity : base * empty.quantity;
      if (pieces === 0) continue;
      const before = carried.get(empty.productId);
      carried.set(empty.productId, {
        quantity: (before?.quantity ?? 0) + pieces,
        field: before?.field ?? `/lines/${i}/quantity`,
      });
    }
  });
  return carried;
}

/**
 * Writes the plan: the stock document (its movements, number and event) carries the rest in its transaction, in the
 * global lock order: the empties collected, the customer's balance, the return's number, its rows, its credit note.
 */
async function writeReturn(
  tx: Tx,
  actor: Actor,
  command: ProcessReturnCommand,
  plan: ReturnPlan,
): Promise<ProcessedReturn> {
  const organizationId = actor.organization.id;
  const { id, invoice, places, stock } = plan;
  const fieldOf = (line: number) => stock.fields.get(line) ?? '/lines';
  let number = '';
  let creditNoteId: string | null = null;
  await postDocument(
    tx,
    organizationId,
    {
      type: 'return',
      prefix: 'RTN',
      reasonCode: null,
      note: `Return ${id} of invoice ${invoice.number}`,
      tripId: invoice.trip_id,
      businessDate: plan.returnDate,
    },
    stock.movements,
    fieldOf,
    async (_document, posted) => {
      const movementOf = new Map(posted.map((m) => [m.line, m.id]));
      await postEmptiesMovements(
        tx,
        organizationId,
        { type: RETURN, id },
        stock.emptiesLines.map(
          (e): EmptiesMove => ({
            line: e.line,
            type: 'collected',
            direction: 'in',
            productId: e.productId,
            quantity: e.quantity,
            customerId: invoice.customer_id,
            tripId: invoice.trip_id,
            locationId: movementOf.has(e.line) ? places.goodLocationId : null,
            stockMovementId: movementOf.get(e.line) ?? null,
          }),
        ),
        fieldOf,
      );
      // The customer's balance before the numbers (the global order); issueCreditNote takes it again, already held.
      await lockCustomerBalance(tx, organizationId, invoice.customer_id, actor.organization.baseCurrency);
      number = await nextDocumentNumber(tx, organizationId, RETURN, 'RT');
      await insertReturnRows(tx, organizationId, command, plan, number);
      creditNoteId = await creditTheReturn(tx, actor, command, plan, number);
    },
  );
  return { id, number, creditNoteId };
}

/** The return's row and its lines. */
async function insertReturnRows(
  tx: Tx,
  organizationId: string,
  command: ProcessReturnCommand,
  plan: ReturnPlan,
  number: string,
): Promise<void> {
  const { id, invoice, priced, totals, places } = plan;
  await tx
    .insertInto('returns')
    .values({
      organization_id: organizationId,
      id,
      number,
      status: 'processed',
      customer_id: invoice.customer_id,
      invoice_id: invoice.id,
      location_id: places.goodLocationId,
      bad_stock_location_id: places.badLocationId,
      trip_id: invoice.trip_id,
      return_date: plan.returnDate,
      reason: command.reason ?? null,
      currency: invoice.currency,
      subtotal: totals.subtotal,
      discount: totals.discount,
      tax: totals.tax,
      total: totals.total,
    })
    .execute();
  await tx
    .insertInto('return_lines')
    .values(
      command.lines.map((line, i) => ({
        organization_id: organizationId,
        return_id: id,
        line_number: i + 1,
        invoice_line_number: priced[i]!.invoiceLine.line_number,
        product_id: priced[i]!.invoiceLine.product_id,
        unit: line.unit,
        quantity: line.quantity,
        condition: line.condition,
        unit_price: priced[i]!.unitPrice,
        discount: priced[i]!.amounts.discount,
        tax_rate: priced[i]!.invoiceLine.tax_rate,
        amount: priced[i]!.amounts.amount,
        tax: priced[i]!.amounts.tax,
      })),
    )
    .execute();
}

/** Money moves only when the goods were worth something (a return of free goods has no credit note): the credit note's id, or null. */
async function creditTheReturn(
  tx: Tx,
  actor: Actor,
  command: ProcessReturnCommand,
  plan: ReturnPlan,
  number: string,
): Promise<string | null> {
  const { invoice, priced } = plan;
  if (!new Decimal(plan.totals.total).greaterThan(0)) return null;
  const credit = await issueCreditNote(tx, actor, {
    customer: { id: invoice.customer_id },
    invoiceId: invoice.id,
    type: 'return',
    returnId: plan.id,
    reason: command.reason ?? `Return ${number}`,
    issueDate: plan.returnDate,
    lines: command.lines.map((line, i) => ({
      type: 'product' as const,
      product: { id: priced[i]!.invoiceLine.product_id },
      quantity: line.quantity,
      unitPrice: priced[i]!.unitPrice,
      discount: priced[i]!.amounts.discount,
      taxRate: priced[i]!.invoiceLine.tax_rate,
    })),
    fiscalise: command.fiscalise,
  });
  return credit.id;
}

async function readProducts(tx: Tx, organizationId: string, ids: string[]): Promise<Map<string, ProductFacts>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await tx
    .selectFrom('products')
    .select(['id', 'pack_size', 'tracks_stock', 'empties'])
    .where('organization_id', '=', organizationId)
    .where('id', 'in', unique)
    .execute();
  return new Map(rows.map((row) => [row.id, { ...row, empties: (row.empties ?? []) as ProductFacts['empties'] }]));
}

/** The trip's bad-stock location for a van sale; else the organisation's first active damages location (by code); null when none. */
async function defaultBadStockLocation(tx: Tx, organizationId: string, tripId: string | null): Promise<string | null> {
  if (tripId !== null) {
    const trip = await tx
      .selectFrom('trips')
      .select('bad_stock_location_id')
      .where('organization_id', '=', organizationId)
      .where('id', '=', tripId)
      .executeTakeFirst();
    return trip?.bad_stock_location_id ?? null;
  }
  const damages = await tx
    .selectFrom('locations')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('kind', '=', 'damages')
    .where('active', '=', true)
    // Byte order of the codes, whatever the collation: the same location every time.
    .orderBy(sql`code COLLATE "C"`)
    .executeTakeFirst();
  return damages?.id ?? null;
}

/** Each location must be an active location of the organisation (422 business_rule naming its field). */
async function requireLocations(
  tx: Tx,
  organizationId: string,
  wanted: { id: string; field: string }[],
): Promise<void> {
  if (wanted.length === 0) return;
  const rows = await tx
    .selectFrom('locations')
    .select(['id', 'active'])
    .where('organization_id', '=', organizationId)
    .where(
      'id',
      'in',
      wanted.map((w) => w.id),
    )
    .execute();
  const active = new Map(rows.map((row) => [row.id, row.active]));
  const problems = wanted.flatMap(({ id, field }): FieldError[] =>
    active.get(id) === undefined
      ? [{ field, code: 'location_not_found', message: `there is no location ${id} in this organisation` }]
      : active.get(id)
        ? []
        : [{ field, code: 'business_rule', message: `location ${id} is inactive` }],
  );
  if (problems.length > 0)
    throw new ApiError(
      'business_rule',
      'A location the return names cannot take stock; errors[] names each.',
      problems,
    );
}
