// The reads of a settlement sheet, straight from the ledgers and documents that name the trip: its invoices and the
// receipts allocated to them, the receipts collected on it (payments.trip_id), its credit notes, and the stock
// movements of its loads, sales, customer returns and count. The payments and credit-notes tables belong to their
// modules; they are only read here (a module writes only its own tables). Every statement is scoped by
// organization_id first.
import type { Selectable } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';
import type { Db } from '../../platform/database/transaction.js';
import type { ListQuery } from '../../platform/lists/page.js';
import { INVOICE, INVOICE_VOID } from '../invoices/documents.js';
import { STOCK_DOCUMENT } from '../stock/documents.js';

/**
 * The stock document type of a customer return (returns/documents.ts posts one `return` document, RTN-, naming the
 * invoice's trip): its movements are the sheet's `returned` and `returnedDamaged`.
 */
export const RETURN_DOCUMENT = 'return';

export type SettlementRow = Selectable<DB['settlements']>;
export type SettlementExpenseRow = Selectable<DB['settlement_expenses']>;

/** The settlements of an organisation (aliased `t`), for the list. */
export function settlementQuery(db: Db, organizationId: string): ListQuery<SettlementRow> {
  return db
    .selectFrom('settlements as t')
    .selectAll('t')
    .where('t.organization_id', '=', organizationId) as unknown as ListQuery<SettlementRow>;
}

export async function settlementOfTrip(db: Db, organizationId: string, tripId: string): Promise<SettlementRow | null> {
  return (
    (await db
      .selectFrom('settlements')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('trip_id', '=', tripId)
      .executeTakeFirst()) ?? null
  );
}

export async function findSettlement(db: Db, organizationId: string, id: string): Promise<SettlementRow | null> {
  return (
    (await db
      .selectFrom('settlements')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst()) ?? null
  );
}

export async function expensesOf(
  db: Db,
  organizationId: string,
  settlementId: string,
): Promise<SettlementExpenseRow[]> {
  return db
    .selectFrom('settlement_expenses')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('settlement_id', '=', settlementId)
    .orderBy('line_number')
    .execute();
}

/** The trip's invoices that are not void, in the sheet's currency: how many, their totals and what is still owed. */
export async function salesOf(
  db: Db,
  organizationId: string,
  tripId: string,
  currency: string,
): Promise<{ count: number; total: string; balance: string }> {
  const row = await db
    .selectFrom('invoices')
    .select((eb) => [
      eb.fn.countAll<string>().as('count'),
      eb.fn.coalesce(eb.fn.sum<string>('total'), eb.val('0')).as('total'),
      eb.fn.coalesce(eb.fn.sum<string>('balance'), eb.val('0')).as('balance'),
    ])
    .where('organization_id', '=', organizationId)
    .where('trip_id', '=', tripId)
    .where('status', '<>', 'void')
    .where('currency', '=', currency)
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), total: String(row.total), balance: String(row.balance) };
}

/** The live receipts allocated to the trip's invoices (whatever trip they were collected on), summed by method. */
export async function salesPaymentsOf(
  db: Db,
  organizationId: string,
  tripId: string,
  currency: string,
): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('payments as p')
    .innerJoin('invoices as i', (join) =>
      join.onRef('i.organization_id', '=', 'p.organization_id').onRef('i.id', '=', 'p.invoice_id'),
    )
    .select((eb) => ['p.method', eb.fn.sum<string>('p.amount').as('amount')])
    .where('p.organization_id', '=', organizationId)
    .where('i.trip_id', '=', tripId)
    .where('i.status', '<>', 'void')
    .where('i.currency', '=', currency)
    .where('p.status', '=', 'posted')
    .groupBy('p.method')
    .execute();
  return new Map(rows.map((row) => [row.method, String(row.amount)]));
}

/** The live receipts collected on the trip, by currency and method. */
export async function collectionsOf(
  db: Db,
  organizationId: string,
  tripId: string,
): Promise<{ currency: string; method: string; count: number; amount: string }[]> {
  const rows = await db
    .selectFrom('payments')
    .select((eb) => [
      'currency',
      'method',
      eb.fn.countAll<string>().as('count'),
      eb.fn.sum<string>('amount').as('amount'),
    ])
    .where('organization_id', '=', organizationId)
    .where('trip_id', '=', tripId)
    .where('status', '=', 'posted')
    .groupBy(['currency', 'method'])
    .execute();
  return rows.map((row) => ({
    currency: row.currency,
    method: row.method,
    count: Number(row.count),
    amount: String(row.amount),
  }));
}

/** The trip's applied credit notes in the sheet's currency: how many, their totals and the cash refunded with them. */
export async function creditNotesOf(
  db: Db,
  organizationId: string,
  tripId: string,
  currency: string,
): Promise<{ count: number; total: string; cashRefunds: string }> {
  const row = await db
    .selectFrom('credit_notes')
    .select((eb) => [
      eb.fn.countAll<string>().as('count'),
      eb.fn.coalesce(eb.fn.sum<string>('total'), eb.val('0')).as('total'),
      eb.fn.coalesce(eb.fn.sum<string>('cash_refund_amount'), eb.val('0')).as('cash_refunds'),
    ])
    .where('organization_id', '=', organizationId)
    .where('trip_id', '=', tripId)
    .where('status', '=', 'applied')
    .where('currency', '=', currency)
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), total: String(row.total), cashRefunds: String(row.cash_refunds) };
}

/** Base units moved per product between two locations (either side null) by a group of documents. */
export interface MovedQuantity {
  productId: string;
  /** The stock document's type (transfer, adjustment) for the trip's own stock documents; null for the others. */
  documentKind: string | null;
  fromLocationId: string | null;
  toLocationId: string | null;
  quantity: number;
}

/**
 * The stock movements that concern the trip, grouped: those of its own stock documents (its loads, its count's
 * adjustment and its return to the warehouse), those of its invoices and their voids, and those of the customer
 * returns taken on it.
 */
export async function tripMovements(
  db: Db,
  organizationId: string,
  tripId: string,
): Promise<{ own: MovedQuantity[]; sales: MovedQuantity[]; returns: MovedQuantity[] }> {
  const own = await db
    .selectFrom('stock_movements as m')
    .innerJoin('stock_documents as d', (join) =>
      join.onRef('d.organization_id', '=', 'm.organization_id').onRef('d.id', '=', 'm.document_id'),
    )
    .select((eb) => [
      'm.product_id',
      'd.type',
      'm.from_location_id',
      'm.to_location_id',
      eb.fn.sum<string>('m.quantity').as('quantity'),
    ])
    .where('m.organization_id', '=', organizationId)
    .where('m.document_type', '=', STOCK_DOCUMENT)
    .where('d.trip_id', '=', tripId)
    .groupBy(['m.product_id', 'd.type', 'm.from_location_id', 'm.to_location_id'])
    .execute();
  // By (document_type, document_id), the ledger's index after organization_id.
  const grouped = (documentIds: 'invoices', documentTypes: readonly string[]) =>
    db
      .selectFrom('stock_movements as m')
      .select((eb) => [
        'm.product_id',
        'm.from_location_id',
        'm.to_location_id',
        eb.fn.sum<string>('m.quantity').as('quantity'),
      ])
      .where('m.organization_id', '=', organizationId)
      .where('m.document_type', 'in', documentTypes)
      .where('m.document_id', 'in', (eb) =>
        eb
          .selectFrom(documentIds)
          .select('id')
          .where('organization_id', '=', organizationId)
          .where('trip_id', '=', tripId),
      )
      .groupBy(['m.product_id', 'm.from_location_id', 'm.to_location_id'])
      .execute();
  const shape = (
    rows: {
      product_id: string;
      type?: string;
      from_location_id: string | null;
      to_location_id: string | null;
      quantity: string;
    }[],
  ): MovedQuantity[] =>
    rows.map((row) => ({
      productId: row.product_id,
      documentKind: row.type ?? null,
      fromLocationId: row.from_location_id,
      toLocationId: row.to_location_id,
      quantity: Number(row.quantity),
    }));
  // A customer return taken on the trip is a stock document of its own type naming the trip (returns/documents.ts).
  const all = shape(own);
  return {
    own: all.filter((m) => m.documentKind !== RETURN_DOCUMENT),
    sales: shape(await grouped('invoices', [INVOICE, INVOICE_VOID])),
    returns: all.filter((m) => m.documentKind === RETURN_DOCUMENT),
  };
}

/** Whether each product is an empty (counted in pieces) or not (in bottles). */
export async function emptiesAmong(
  db: Db,
  organizationId: string,
  productIds: string[],
): Promise<Map<string, boolean>> {
  if (productIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('products')
    .select(['id', 'is_empty'])
    .where('organization_id', '=', organizationId)
    .where('id', 'in', productIds)
    .execute();
  return new Map(rows.map((row) => [row.id, row.is_empty]));
}
