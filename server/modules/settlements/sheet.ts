// The settlement sheet of a trip (spec: components/schemas/Settlement), computed from the ledgers each time it is
// read. Once the settlement is closed, its cash figures are the ones it recorded (handed in, expenses, the expected
// cash and variance agreed at closing); the sections are still the ledgers' (the schema's description says why).
import { toPostingBlock } from '../postings/blocks.js';
import { Decimal } from 'decimal.js';
import type { components } from '../../../generated/api-types.js';
import { formatAmount } from '../../domain/money.js';
import type { Db } from '../../platform/database/transaction.js';
import type { TripRow } from '../trips/repository.js';
import { baseUnitOf } from '../stock/representation.js';
import {
  collectionsOf,
  creditNotesOf,
  emptiesAmong,
  expensesOf,
  salesOf,
  salesPaymentsOf,
  tripMovements,
  type MovedQuantity,
  type SettlementRow,
} from './repository.js';

export type Settlement = components['schemas']['Settlement'];
type StockLine = Settlement['stock'][number];

const OTHER_METHODS = ['cheque', 'bank_transfer', 'card'] as const;

/**
 * The sheet of `trip` (its settlement row when it has one), in the settlement's currency, or before it is closed in
 * `baseCurrency` (the organisation's).
 */
export async function readSheet(
  db: Db,
  organizationId: string,
  trip: TripRow,
  settlement: SettlementRow | null,
  baseCurrency: string,
): Promise<Settlement> {
  const currency = settlement?.currency ?? baseCurrency;
  const money = (amount: Decimal.Value) => ({ amount: formatAmount(amount, currency), currency });
  const sum = (values: Iterable<Decimal.Value>) =>
    [...values].reduce<Decimal>((total, value) => total.plus(value), new Decimal(0));

  const sales = await salesOf(db, organizationId, trip.id, currency);
  const paid = await salesPaymentsOf(db, organizationId, trip.id, currency);
  const paidBy = (method: string) => new Decimal(paid.get(method) ?? 0);
  const paidOther = sum(OTHER_METHODS.map(paidBy));
  // Invoice balance = total - live allocations - live credit applications: what is neither paid nor owed was credited.
  const credited = new Decimal(sales.total)
    .minus(sales.balance)
    .minus(paidBy('cash'))
    .minus(paidBy('mobile_money'))
    .minus(paidOther);

  const receipts = await collectionsOf(db, organizationId, trip.id);
  const inCurrency = receipts.filter((row) => row.currency === currency);
  const collected = (method: string) => sum(inCurrency.filter((row) => row.method === method).map((row) => row.amount));
  const creditNotes = await creditNotesOf(db, organizationId, trip.id, currency);

  const expenses = settlement ? await expensesOf(db, organizationId, settlement.id) : [];
  const fromSales = collected('cash').minus(creditNotes.cashRefunds);
  const cashExpenses = settlement ? new Decimal(settlement.cash_expenses) : new Decimal(0);
  // Closed: the figures agreed at closing (cash_expected + cash_expenses is what the sales gave then).
  const cashExpected = settlement ? new Decimal(settlement.cash_expected) : fromSales.minus(cashExpenses);
  const cashExpectedFromSales = settlement ? cashExpected.plus(cashExpenses) : fromSales;

  return {
    id: settlement?.id ?? null,
    status: settlement ? 'closed' : 'open',
    tripId: trip.id,
    tripNumber: trip.number,
    tripStatus: trip.status as Settlement['tripStatus'],
    salespersonId: trip.salesperson_id,
    routeId: trip.route_id,
    vanLocationId: trip.van_location_id,
    businessDate: trip.business_date,
    currency,
    sales: {
      invoiceCount: sales.count,
      total: money(sales.total),
      cash: money(paidBy('cash')),
      mobileMoney: money(paidBy('mobile_money')),
      otherMethods: money(paidOther),
      creditNotes: money(credited),
      credit: money(sales.balance),
    },
    collections: {
      receiptCount: inCurrency.reduce((count, row) => count + row.count, 0),
      total: money(sum(inCurrency.map((row) => row.amount))),
      cash: money(collected('cash')),
      mobileMoney: money(collected('mobile_money')),
      cheque: money(collected('cheque')),
      bankTransfer: money(collected('bank_transfer')),
      card: money(collected('card')),
      otherCurrencyReceipts: receipts
        .filter((row) => row.currency !== currency)
        .reduce((count, row) => count + row.count, 0),
    },
    creditNotes: {
      count: creditNotes.count,
      total: money(creditNotes.total),
      cashRefunds: money(creditNotes.cashRefunds),
    },
    cashExpectedFromSales: money(cashExpectedFromSales),
    cashExpenses: money(cashExpenses),
    cashExpected: money(cashExpected),
    handedIn: settlement ? money(settlement.handed_in) : null,
    variance: settlement ? money(settlement.variance) : null,
    expenses: expenses.map((row) => ({
      lineNumber: row.line_number,
      kind: row.kind as Settlement['expenses'][number]['kind'],
      description: row.description,
      amount: money(row.amount),
      receiptReference: row.receipt_reference,
    })),
    stock: await vanStock(db, organizationId, trip),
    notes: settlement?.notes ?? null,
    posting: settlement ? toPostingBlock(settlement) : null,
    closedAt: settlement ? settlement.closed_at.toISOString() : null,
    updatedAt: (settlement ? settlement.updated_at : trip.updated_at).toISOString(),
  };
}

/**
 * The van's stock per product: loaded (the trip's transfers into the van), sold (its invoices' movements off the van
 * less their voids' back onto it), returned (customer returns into the van; into its bad-stock location apart),
 * counted (what the return's transfer took back to the warehouse: the count, a product found at 0 moving nothing)
 * and the difference from the books, the last two once the trip has returned.
 */
async function vanStock(db: Db, organizationId: string, trip: TripRow): Promise<StockLine[]> {
  const moved = await tripMovements(db, organizationId, trip.id);
  const lines = new Map<
    string,
    { loaded: number; sold: number; returned: number; returnedDamaged: number; counted: number }
  >();
  const line = (productId: string) => {
    let found = lines.get(productId);
    if (!found) lines.set(productId, (found = { loaded: 0, sold: 0, returned: 0, returnedDamaged: 0, counted: 0 }));
    return found;
  };
  const van = trip.van_location_id;
  const isTransfer = (m: MovedQuantity) => m.documentKind === 'transfer';
  for (const m of moved.own) {
    if (isTransfer(m) && m.toLocationId === van) line(m.productId).loaded += m.quantity;
    else if (isTransfer(m) && m.fromLocationId === van) line(m.productId).counted += m.quantity;
    else line(m.productId); // the count's adjustment: the product is on the sheet, its figures come from the rest
  }
  for (const m of moved.sales) {
    if (m.fromLocationId === van) line(m.productId).sold += m.quantity;
    if (m.toLocationId === van) line(m.productId).sold -= m.quantity;
  }
  for (const m of moved.returns) {
    if (m.toLocationId === van) line(m.productId).returned += m.quantity;
    else if (m.toLocationId !== null && m.toLocationId === trip.bad_stock_location_id)
      line(m.productId).returnedDamaged += m.quantity;
  }
  const counted = trip.status === 'returned' || trip.status === 'closed';
  const empties = await emptiesAmong(db, organizationId, [...lines.keys()]);
  return [...lines.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([productId, q]) => ({
      productId,
      unit: baseUnitOf(empties.get(productId) ?? false),
      loaded: q.loaded,
      sold: q.sold,
      returned: q.returned,
      returnedDamaged: q.returnedDamaged,
      counted: counted ? q.counted : null,
      difference: counted ? q.counted - (q.loaded - q.sold + q.returned) : null,
    }));
}
