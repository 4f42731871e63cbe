// Two weeks of delivery trips in the sandbox: each route's van goes out once a week, R01 on Monday to R05 on Friday,
// from 2026-11-09 to 2026-11-20 (10 trips; few, because the bootstrap writes each through the posting functions, about
// 55 statements a trip, and must stay quick). Each is moved as an operator would move it: opened, loaded from a main
// warehouse (routes R01-R03 from M01, the others from M02), departed, a GPS trail around the route's town, returned
// (the count sometimes finds a few bottles missing, posted as a TRIP_COUNT adjustment; the rest goes back to the
// warehouse) and settled (the van sales, collections, the return and the credit note of writeTrips below; the trip
// closes with its settlement). Quantities, losses and positions come from their own seeded stream, so the sandbox is
// the same on every machine (only ids and timestamps differ).
import type { Actor } from '../../platform/access/actor.js';
import type { Tx } from '../../platform/database/transaction.js';
import { departTrip, loadTrip, openTrip, recordTripLocations, returnTrip, type TripPoint } from '../trips/documents.js';
import { Decimal } from 'decimal.js';
import { issueCreditNote } from '../credit-notes/documents.js';
import { createInvoice, type CreateInvoiceCommand } from '../invoices/documents.js';
import { recordPayment } from '../payments/documents.js';
import { processReturn } from '../returns/documents.js';
import { settleTrip, type SettleTripCommand } from '../settlements/documents.js';
import { getTripSettlement } from '../settlements/service.js';
import { SANDBOX_SEED, seededRandom } from './seeded-random.js';
import type { SandboxDistributor } from './synthetic-distributor.js';
import { TOWNS } from './synthetic-outlets.js';

/** The Mondays of the sandbox's two weeks of trips; route N goes out N - 1 days after each. */
export const SANDBOX_TRIP_WEEKS: readonly string[] = ['2026-11-09', '2026-11-16'];
const GPS_FIXES = 6;

export interface SyntheticTrip {
  routeCode: string;
  vanCode: string;
  warehouseCode: string;
  businessDate: string;
  /** Cases loaded, by product code. */
  load: { productCode: string; cases: number }[];
  /** Bottles (base units) the count did not find, by product code. */
  missing: Map<string, number>;
  trail: TripPoint[];
}

/** The trips of the sandbox distributor, in the order they are written (by date). */
export function syntheticTrips(
  d: Pick<SandboxDistributor, 'routes' | 'products' | 'prices'>,
  seed = SANDBOX_SEED + 7,
): SyntheticTrip[] {
  const random = seededRandom(seed);
  // The beverages the opening stock holds: those with a wholesale case price (sandbox-writer.ts, writeOpeningStock).
  const stocked = new Set(
    d.prices
      .filter((price) => price.price_group === 'WHOLESALE' && price.unit === 'case')
      .map((price) => price.product_code),
  );
  const beverages = d.products
    .filter((product) => product.tracks_stock && !product.is_empty && stocked.has(product.product_code))
    .map((product) => product.product_code)
    .sort();
  const trips: SyntheticTrip[] = [];
  for (const monday of SANDBOX_TRIP_WEEKS) {
    d.routes.forEach((route, r) => {
      const businessDate = new Date(Date.parse(`${monday}T00:00:00Z`) + (r % 5) * 86_400_000)
        .toISOString()
        .slice(0, 10);
      const town = TOWNS[r % TOWNS.length]!;
      const first = Math.floor(random() * beverages.length);
      const load = Array.from({ length: 4 }, (_, i) => ({
        productCode: beverages[(first + i * 7) % beverages.length]!,
        cases: 2 + Math.floor(random() * 5),
      }));
      const missing = new Map<string, number>();
      if (random() < 0.25)
        missing.set(load[Math.floor(random() * load.length)]!.productCode, 1 + Math.floor(random() * 3));
      const trail = Array.from(
        { length: GPS_FIXES },
        (_, i): TripPoint => ({
          recordedAt: `${businessDate}T${String(5 + i * 2).padStart(2, '0')}:${String(Math.floor(random() * 60)).padStart(2, '0')}:00.000Z`,
          latitude: Number((town.lat + (random() - 0.5) * 0.08).toFixed(6)),
          longitude: Number((town.lng + (random() - 0.5) * 0.08).toFixed(6)),
          accuracyMeters: Number((4 + random() * 20).toFixed(2)),
        }),
      );
      trips.push({
        routeCode: route.route_code,
        vanCode: `V_${route.route_code}-G`,
        warehouseCode: r < 3 ? 'M01' : 'M02',
        businessDate,
        load,
        missing,
        trail,
      });
    });
  }
  return trips;
}

/**
 * Writes the trips through the posting functions (after the opening stock, which they load from). On the road each
 * van sells one case of a non-returnable beverage it carries (returnable ones would need their crates on the van)
 * to two outlets: one paid in cash on the spot, one on credit (by mobile money at once when the outlet has a credit
 * limit), of which part is collected in cash before the van leaves. The first trip takes a few bottles back (a
 * return: onto the van, its credit note), the second credits a price difference. Back at the warehouse the count
 * finds what the books say less the bottles missing; the settlement hands in the expected cash less the crew's
 * allowance (and on one trip a receipted puncture repair), a few shillings short now and then.
 */
export async function writeTrips(
  tx: Tx,
  actor: Actor,
  d: SandboxDistributor,
  idOf: Map<string, string>,
): Promise<void> {
  const world: TripWorld = {
    idOf,
    locationId: new Map(d.locations.map((location) => [location.code, idOf.get(location.id)!])),
    product: new Map(
      d.products.map((p) => [
        p.product_code,
        { id: idOf.get(p.id)!, packSize: p.pack_size, returnable: p.empties.length > 0 },
      ]),
    ),
    casePrice: new Map(
      d.prices
        .filter((price) => price.unit === 'case')
        .map((price) => [`${price.price_group}|${price.product_code}`, price.amount]),
    ),
    outlets: d.outlets.filter((outlet) => outlet.status === 'active' && outlet.price_group),
    currency: actor.organization.baseCurrency,
  };
  for (const [t, planned] of syntheticTrips(d).entries()) {
    const trip = await openTrip(tx, actor, {
      vanLocationId: world.locationId.get(planned.vanCode)!,
      warehouseLocationId: world.locationId.get(planned.warehouseCode)!,
      businessDate: planned.businessDate,
    });
    await loadTrip(tx, actor, {
      tripId: trip.id,
      lines: planned.load.map((line) => ({
        productId: world.product.get(line.productCode)!.id,
        unit: 'case',
        quantity: line.cases,
      })),
    });
    await departTrip(tx, actor, trip.id);
    await recordTripLocations(tx, actor, trip.id, planned.trail);
    const moved = await sellOnTheRoad(tx, actor, world, { t, planned, tripId: trip.id });
    await returnTrip(tx, actor, {
      tripId: trip.id,
      lines: planned.load.map((line) => {
        const { id, packSize } = world.product.get(line.productCode)!;
        return {
          productId: id,
          unit: 'bottle',
          countedQuantity:
            line.cases * packSize + (moved.get(line.productCode) ?? 0) - (planned.missing.get(line.productCode) ?? 0),
        };
      }),
    });
    await settleSyntheticTrip(tx, actor, t, trip.id);
  }
}

/** What the trips are written from: the records' real ids, the products, the case prices by price group, the active priced outlets. */
interface TripWorld {
  idOf: ReadonlyMap<string, string>;
  locationId: ReadonlyMap<string, string>;
  product: ReadonlyMap<string, { id: string; packSize: number; returnable: boolean }>;
  casePrice: ReadonlyMap<string, string>;
  outlets: SandboxDistributor['outlets'];
  currency: string;
}

/**
 * The van's sales on the road (see writeTrips), the collection on the one on credit, and the first trip's return or
 * the second's credit note. The bottles that left the van (sold) and came back onto it (returned), by product code.
 */
async function sellOnTheRoad(
  tx: Tx,
  actor: Actor,
  world: TripWorld,
  on: { t: number; planned: SyntheticTrip; tripId: string },
): Promise<Map<string, number>> {
  const { t, planned, tripId } = on;
  const { idOf, product, outlets, currency } = world;
  const moved = new Map<string, number>();
  const move = (code: string, bottles: number) => moved.set(code, (moved.get(code) ?? 0) + bottles);
  const sellable = planned.load
    .filter((line) => !product.get(line.productCode)!.returnable)
    .map((line) => line.productCode);
  if (sellable.length === 0) return moved;
  let sales = 0;
  const sale = async (outlet: (typeof outlets)[number], code: string, payment: CreateInvoiceCommand['payment']) => {
    sales += 1;
    const price = world.casePrice.get(`${outlet.price_group}|${code}`) ?? world.casePrice.get(`WHOLESALE|${code}`)!;
    move(code, -product.get(code)!.packSize);
    return createInvoice(tx, actor, {
      customerId: idOf.get(outlet.id)!,
      locationId: world.locationId.get(planned.vanCode)!,
      issueDate: planned.businessDate,
      currency,
      externalCodes: { dms: `CS-${planned.routeCode}-${planned.businessDate.replaceAll('-', '')}-${sales}` },
      lines: [{ productId: product.get(code)!.id, unit: 'case', quantity: 1, unitPrice: price }],
      payment,
    });
  };
  const [first, second] = [outlets[(t * 2) % outlets.length]!, outlets[(t * 2 + 1) % outlets.length]!];
  const cashSale = await sale(first, sellable[0]!, { method: 'cash' });
  const onCredit = second.credit_limit_amount == null;
  const creditSale = await sale(
    second,
    sellable[1 % sellable.length]!,
    onCredit ? null : { method: 'mobile_money', reference: `MM-${planned.businessDate.replaceAll('-', '')}-${t}` },
  );
  if (onCredit) {
    const { total } = await tx
      .selectFrom('invoices')
      .select('total')
      .where('organization_id', '=', actor.organization.id)
      .where('id', '=', creditSale.id)
      .executeTakeFirstOrThrow();
    const part = new Decimal(total).times('0.4').toDecimalPlaces(0, Decimal.ROUND_HALF_UP).toFixed(0);
    await recordPayment(tx, actor, {
      customerId: idOf.get(second.id)!,
      method: 'cash',
      amount: { amount: part, currency },
      paymentDate: planned.businessDate,
      tripId,
      allocations: [{ invoiceId: creditSale.id, amount: { amount: part, currency } }],
    });
  }
  if (t === 0) {
    await processReturn(tx, actor, {
      invoiceId: cashSale.id,
      returnDate: planned.businessDate,
      reason: 'Sandbox: short-dated bottles',
      lines: [{ invoiceLineNumber: 1, unit: 'bottle', quantity: 3, condition: 'good' }],
    });
    move(sellable[0]!, 3);
  }
  if (t === 1) {
    await issueCreditNote(tx, actor, {
      customer: { id: idOf.get(second.id)! },
      invoiceId: creditSale.id,
      reason: 'Sandbox: promotion price not applied',
      issueDate: planned.businessDate,
      lines: [{ type: 'adjustment', description: 'Promotion price difference', quantity: 1, unitPrice: '2000' }],
    });
  }
  return moved;
}

/**
 * The settlement: the sheet's cash expected from sales, less the crew's allowance (and a receipted repair on one
 * trip), handed in; every fourth trip 500 short.
 */
async function settleSyntheticTrip(tx: Tx, actor: Actor, t: number, tripId: string): Promise<void> {
  const expenses: SettleTripCommand['expenses'] = [
    { kind: 'allowance', amount: '10000', description: 'Crew lunch allowance' },
    ...(t === 2
      ? [{ kind: 'purchase' as const, amount: '6000', description: 'Puncture repair', receiptReference: 'RC-4471' }]
      : []),
  ];
  const fromSales = new Decimal((await getTripSettlement(tx, actor, tripId)).cashExpectedFromSales.amount);
  const expected = fromSales.minus(expenses.reduce((sum, expense) => sum.plus(expense.amount), new Decimal(0)));
  const handedIn = Decimal.max(0, expected.minus(t % 4 === 3 ? 500 : 0));
  await settleTrip(tx, actor, { tripId, handedIn: handedIn.toFixed(0), expenses });
}
