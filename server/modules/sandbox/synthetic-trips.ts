// Two weeks of delivery trips in the sandbox: each route's van goes out once a week, R01 on Monday to R05 on Friday,
// from 2026-11-09 to 2026-11-20 (10 trips; few, because the bootstrap writes each through the posting functions, about
// 55 statements a trip, and must stay quick). Each is moved as an operator would move it: opened, loaded from a main
// warehouse (routes R01-R03 from M01, the others from M02), departed, a GPS trail around the route's town, returned
// (the count sometimes finds a few bottles missing, posted as a TRIP_COUNT adjustment; the rest goes back to the
// warehouse) and closed (nothing is sold on them yet, so each closes with a settlement of zero). Quantities, losses
// and positions come from their own seeded stream, so the sandbox is the
// same on every machine (only ids and timestamps differ).
import type { Actor } from '../../domain/actor.js';
import type { Tx } from '../../platform/database/transaction.js';
import { departTrip, loadTrip, openTrip, recordTripLocations, returnTrip, type TripPoint } from '../trips/service.js';
import { closeTripWithNothingToSettle } from '../settlements/service.js';
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
export function syntheticTrips(d: Pick<SandboxDistributor, 'routes' | 'products' | 'prices'>, seed = SANDBOX_SEED + 7): SyntheticTrip[] {
  const random = seededRandom(seed);
  // The beverages the opening stock holds: those with a wholesale case price (sandbox-writer.ts, writeOpeningStock).
  const stocked = new Set(d.prices.filter((price) => price.price_group === 'WHOLESALE' && price.unit === 'case').map((price) => price.product_code));
  const beverages = d.products.filter((product) => product.tracks_stock && !product.is_empty && stocked.has(product.product_code)).map((product) => product.product_code).sort();
  const trips: SyntheticTrip[] = [];
  for (const monday of SANDBOX_TRIP_WEEKS) {
    d.routes.forEach((route, r) => {
      const businessDate = new Date(Date.parse(`${monday}T00:00:00Z`) + (r % 5) * 86_400_000).toISOString().slice(0, 10);
      const town = TOWNS[r % TOWNS.length]!;
      const first = Math.floor(random() * beverages.length);
      const load = Array.from({ length: 4 }, (_, i) => ({ productCode: beverages[(first + i * 7) % beverages.length]!, cases: 2 + Math.floor(random() * 5) }));
      const missing = new Map<string, number>();
      if (random() < 0.25) missing.set(load[Math.floor(random() * load.length)]!.productCode, 1 + Math.floor(random() * 3));
      const trail = Array.from({ length: GPS_FIXES }, (_, i): TripPoint => ({
        recordedAt: `${businessDate}T${String(5 + i * 2).padStart(2, '0')}:${String(Math.floor(random() * 60)).padStart(2, '0')}:00.000Z`,
        latitude: Number((town.lat + (random() - 0.5) * 0.08).toFixed(6)),
        longitude: Number((town.lng + (random() - 0.5) * 0.08).toFixed(6)),
        accuracyMeters: Number((4 + random() * 20).toFixed(2)),
      }));
      trips.push({ routeCode: route.route_code, vanCode: `V_${route.route_code}-G`, warehouseCode: r < 3 ? 'M01' : 'M02', businessDate, load, missing, trail });
    });
  }
  return trips;
}

/** Writes the trips through the posting functions (after the opening stock, which they load from). */
export async function writeTrips(tx: Tx, actor: Actor, d: SandboxDistributor, idOf: Map<string, string>): Promise<void> {
  const locationId = new Map(d.locations.map((location) => [location.code, idOf.get(location.id)!]));
  const product = new Map(d.products.map((p) => [p.product_code, { id: idOf.get(p.id)!, packSize: p.pack_size }]));
  for (const planned of syntheticTrips(d)) {
    const trip = await openTrip(tx, actor, { vanLocationId: locationId.get(planned.vanCode)!, warehouseLocationId: locationId.get(planned.warehouseCode)!, businessDate: planned.businessDate });
    await loadTrip(tx, actor, { tripId: trip.id, lines: planned.load.map((line) => ({ productId: product.get(line.productCode)!.id, unit: 'case', quantity: line.cases })) });
    await departTrip(tx, actor, trip.id);
    await recordTripLocations(tx, actor, trip.id, planned.trail);
    await returnTrip(tx, actor, { tripId: trip.id, lines: planned.load.map((line) => {
      const { id, packSize } = product.get(line.productCode)!;
      return { productId: id, unit: 'bottle', countedQuantity: line.cases * packSize - (planned.missing.get(line.productCode) ?? 0) };
    }) });
    await closeTripWithNothingToSettle(tx, actor, trip.id); // nothing is sold on the sandbox's trips: a settlement of zero
  }
}
