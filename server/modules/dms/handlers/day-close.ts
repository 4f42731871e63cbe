// The documents that close a salesman's DMS day. A route settlement waits (R08, naming the document) while a document
// it lists has not posted; then it counts the van with its closing stock and settles the day's trip with the cash
// handed in, through the trips' and settlements' own posting functions (returnTrip, settleTrip: the settlement is
// the day's cash session; its variance is the cash difference, booked in the accounting system by the settlement's
// journal entry). What it found (cash, credit and stock against what was posted) is kept in the document's `result`
// for the daily reconciliation. A daily totals document writes nothing: the reconciliation reads it.
import { Decimal } from 'decimal.js';
import { heldAt } from '../../stock/ledger.js';
import { baseUnitOf } from '../../stock/representation.js';
import { returnTrip } from '../../trips/service.js';
import { settleTrip } from '../../settlements/service.js';
import type { BodyOf } from '../canonical.js';
import { DmsWait, waitKeys } from '../reasons.js';
import { productsByCode } from './lookup.js';
import type { DocumentHandler } from './types.js';
import { vanDayOf } from './van-day.js';
import type { Tx } from '../../../platform/database/transaction.js';

/** What a posted route settlement found, kept in its document's `result` (read by reconciliation.ts). */
export interface DayCloseResult {
  tripId: string;
  settlementId: string;
  currency: string;
  cash: { expected: string; handedIn: string; difference: string };
  /**
   * `stated` is the document's credit (null when it gives none): what the day's sales still owe at the close; `posted`
   * the same figure in the service, the balance left on the trip's invoices (the sheet's sales.credit), not the gross
   * credit sales.
   */
  credit: { stated: string | null; posted: string };
  /** Per product on the van or in the closing stock: the books before the count, the count, count - books. */
  stock: { productCode: string; book: number; counted: number; difference: number }[];
}

/**
 * The first listed number with no applied current version (a document never received, waiting, or rejected before it
 * applied). Applied is what the day close needs: a document held for its accounting posting (or rejected when that
 * failed) is on the day's trip already, and the settlement counts it; QuickBooks' pace never holds the day.
 */
async function firstUnposted(tx: Tx, organizationId: string, connectionId: string, numbers: readonly string[]): Promise<{ number: string; state: string | null } | null> {
  const unique = [...new Set(numbers)];
  if (unique.length === 0) return null;
  const rows = await tx.selectFrom('dms_documents').select(['document_number', 'state', 'mikono_id'])
    .where('organization_id', '=', organizationId).where('connection_id', '=', connectionId)
    .where('document_number', 'in', unique).where('state', '<>', 'superseded').execute();
  const posted = new Set(rows.filter((row) => row.state === 'posted' || row.mikono_id !== null).map((row) => row.document_number));
  const stateOf = new Map(rows.map((row) => [row.document_number, row.state]));
  const number = unique.find((n) => !posted.has(n));
  return number === undefined ? null : { number, state: stateOf.get(number) ?? null };
}

export const routeSettlement: DocumentHandler = {
  async apply(tx, context, document) {
    const org = context.actor.organization.id;
    const body = document.document.body as BodyOf<'DmsRouteSettlementDocument'>;
    const waiting = await firstUnposted(tx, org, context.connection.id, body.documents ?? []);
    if (waiting) {
      const why = waiting.state === null ? 'has not been received' : waiting.state === 'rejected' ? 'was rejected (re-process it)' : 'has not posted yet';
      throw new DmsWait(`Document ${waiting.number}, listed by the route settlement, ${why}.`, waitKeys.document(waiting.number));
    }
    const day = await vanDayOf(tx, context, document, body.routeCode);
    const trip = day.trip;

    // The count: the closing stock (a product it does not name counted 0), or without one the books themselves.
    const held = await heldAt(tx, org, day.van.id);
    const closing = body.closingStock;
    const named = closing ? await productsByCode(tx, org, closing.map((line) => line.productCode)) : new Map();
    const productIds = [...new Set([...held.keys(), ...[...named.values()].map((p) => p.id as string)])];
    const products = productIds.length === 0 ? [] : await tx.selectFrom('products').select(['id', 'product_code', 'is_empty'])
      .where('organization_id', '=', org).where('id', 'in', productIds).orderBy('product_code').execute();
    const countedOf = new Map<string, number>();
    for (const line of closing ?? []) {
      const id = named.get(line.productCode)!.id as string;
      countedOf.set(id, (countedOf.get(id) ?? 0) + line.quantity);
    }
    const lines = products.map((product) => ({
      productId: product.id, unit: baseUnitOf(product.is_empty), countedQuantity: closing ? countedOf.get(product.id) ?? 0 : held.get(product.id) ?? 0,
    }));
    const stock = products.map((product, i) => {
      const book = held.get(product.id) ?? 0;
      const counted = lines[i]!.countedQuantity;
      return { productCode: product.product_code, book, counted, difference: counted - book };
    }).filter((line) => line.book !== 0 || line.counted !== 0);

    await returnTrip(tx, context.actor, { tripId: trip.id, lines: lines.filter((line) => line.countedQuantity > 0 || held.has(line.productId)) });
    const sheet = await settleTrip(tx, context.actor, {
      tripId: trip.id, handedIn: body.cashHandedIn, expenses: [], notes: `Route settlement ${document.number} from the DMS`,
    });
    const result: DayCloseResult = {
      tripId: trip.id, settlementId: sheet.id!, currency: sheet.currency,
      cash: { expected: sheet.cashExpected.amount, handedIn: sheet.handedIn!.amount, difference: sheet.variance!.amount },
      credit: { stated: body.credit === undefined ? null : new Decimal(body.credit).toFixed(), posted: sheet.sales.credit.amount },
      stock,
    };
    await tx.updateTable('dms_documents').set({ result: JSON.stringify(result) })
      .where('organization_id', '=', org).where('id', '=', document.id).execute();
    return { table: 'settlements', id: sheet.id! };
  },
};

export const dailyTotals: DocumentHandler = {
  async apply(_tx, _context, document) {
    return { table: 'dms_documents', id: document.id };
  },
};
