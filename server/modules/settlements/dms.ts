// The route settlement from the DMS, mapped onto the trips' and this module's posting functions (declared with the
// settlement document type in its manifest; written with the DMS's kit). It waits (R08, naming the document) while a
// document it lists has not applied; then it counts the van with its closing stock and settles the day's trip with the cash handed in
// (returnTrip, settleTrip: the settlement is the day's cash session; its variance is the cash difference, booked in
// the accounting system by the settlement's journal entry). What it found is kept with the DMS document
// (keepResult) for the daily reconciliation. The count and the two commands are pure (routeSettlementToCommands).
import { Decimal } from 'decimal.js';
import { heldAt } from '../stock/ledger.js';
import { baseUnitOf } from '../stock/representation.js';
import { returnTrip, type ReturnTripCommand } from '../trips/documents.js';
import { settleTrip, type SettleTripCommand } from './documents.js';
import type { BodyOf } from '../dms/canonical.js';
import { DmsWait, waitKeys } from '../dms/reasons.js';
import { productsByCode } from '../dms/handlers/lookup.js';
import type { CanonicalDocument, DocumentHandler } from '../dms/handlers/types.js';
import { vanDayOf } from '../dms/handlers/van-day.js';
import { firstUnposted, keepResult, type DayCloseResult } from '../dms/handlers/day-close.js';

export const routeSettlement: DocumentHandler = {
  async apply(tx, context, document) {
    const org = context.actor.organization.id;
    const body = document.document.body as BodyOf<'DmsRouteSettlementDocument'>;
    const waiting = await firstUnposted(tx, org, context.connection.id, body.documents ?? []);
    if (waiting) {
      const why =
        waiting.state === null
          ? 'has not been received'
          : waiting.state === 'rejected'
            ? 'was rejected (re-process it)'
            : 'has not posted yet';
      throw new DmsWait(
        `Document ${waiting.number}, listed by the route settlement, ${why}.`,
        waitKeys.document(waiting.number),
      );
    }
    const day = await vanDayOf(tx, context, document, body.routeCode);
    const trip = day.trip;

    // The count: the closing stock (a product it does not name counted 0), or without one the books themselves.
    const held = await heldAt(tx, org, day.van.id);
    const closing = body.closingStock;
    const named = closing
      ? await productsByCode(
          tx,
          org,
          closing.map((line) => line.productCode),
        )
      : new Map();
    const productIds = [...new Set([...held.keys(), ...[...named.values()].map((p) => p.id as string)])];
    const products =
      productIds.length === 0
        ? []
        : await tx
            .selectFrom('products')
            .select(['id', 'product_code', 'is_empty'])
            .where('organization_id', '=', org)
            .where('id', 'in', productIds)
            .orderBy('product_code')
            .execute();
    const commands = routeSettlementToCommands(document, { tripId: trip.id, held, named, products });
    await returnTrip(tx, context.actor, commands.returnTrip);
    const sheet = await settleTrip(tx, context.actor, commands.settleTrip);
    const stock = commands.stock;
    const result: DayCloseResult = {
      tripId: trip.id,
      settlementId: sheet.id!,
      currency: sheet.currency,
      cash: {
        expected: sheet.cashExpected.amount,
        handedIn: sheet.handedIn!.amount,
        difference: sheet.variance!.amount,
      },
      credit: {
        stated: body.credit === undefined ? null : new Decimal(body.credit).toFixed(),
        posted: sheet.sales.credit.amount,
      },
      stock,
    };
    await keepResult(tx, org, document.id, result);
    return { table: 'settlements', id: sheet.id! };
  },
};

/** What a route settlement's mapping needs besides the document: what its handler read of the van and its products. */
export interface RouteSettlementLookups {
  /** The salesman's DMS day. */
  tripId: string;
  /** What the van holds by the books: product id -> quantity in its base unit. */
  held: ReadonlyMap<string, number>;
  /** Product code -> the product, for every code the closing stock names. */
  named: ReadonlyMap<string, { id: string }>;
  /** Every product held or named, ordered by code. */
  products: readonly { id: string; product_code: string; is_empty: boolean }[];
}

/** The count of a route settlement and the commands it posts, with the stock it compares for the day close. */
export interface RouteSettlementCommands {
  returnTrip: ReturnTripCommand;
  settleTrip: SettleTripCommand;
  /** Per product held or counted: the books, the count and the difference (DayCloseResult's stock). */
  stock: { productCode: string; book: number; counted: number; difference: number }[];
}

/**
 * A route settlement as the trip's return (the van counted by its closing stock, a product it does not name counted
 * 0, or without one the books themselves) and the settlement of the day's cash (pure).
 */
export function routeSettlementToCommands(
  document: CanonicalDocument,
  lookups: RouteSettlementLookups,
): RouteSettlementCommands {
  const body = document.document.body as BodyOf<'DmsRouteSettlementDocument'>;
  const { held, named, products } = lookups;
  const closing = body.closingStock;
  const countedOf = new Map<string, number>();
  for (const line of closing ?? []) {
    const id = named.get(line.productCode)!.id;
    countedOf.set(id, (countedOf.get(id) ?? 0) + line.quantity);
  }
  const lines = products.map((product) => ({
    productId: product.id,
    unit: baseUnitOf(product.is_empty),
    countedQuantity: closing ? (countedOf.get(product.id) ?? 0) : (held.get(product.id) ?? 0),
  }));
  const stock = products
    .map((product, i) => {
      const book = held.get(product.id) ?? 0;
      const counted = lines[i]!.countedQuantity;
      return { productCode: product.product_code, book, counted, difference: counted - book };
    })
    .filter((line) => line.book !== 0 || line.counted !== 0);
  return {
    returnTrip: {
      tripId: lookups.tripId,
      lines: lines.filter((line) => line.countedQuantity > 0 || held.has(line.productId)),
    },
    settleTrip: {
      tripId: lookups.tripId,
      handedIn: body.cashHandedIn,
      expenses: [],
      notes: `Route settlement ${document.number} from the DMS`,
    },
    stock,
  };
}
