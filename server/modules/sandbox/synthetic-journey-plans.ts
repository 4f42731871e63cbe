// The journey plan of each sandbox route: its outlets spread over Monday to Saturday in geographic bands (west
// to east), each visited on one weekday in that order; about a quarter of them only every other week.
import { seededRandom, SANDBOX_SEED } from './seeded-random.js';

export interface PlannedOutlet {
  id: string;
  outlet_code: string;
  gps_longitude: string | null;
}

export interface SyntheticVisit {
  customer_id: string;
  weekday: number;
  sequence: number;
  frequency: 'weekly' | 'biweekly';
  week_parity: number | null;
}

const WORKING_DAYS = 6;

/** The visits of one route's outlets; `routeIndex` gives each route its own stream of the seed. */
export function syntheticVisits(
  outlets: PlannedOutlet[],
  routeIndex: number,
  seed = SANDBOX_SEED + 3,
): SyntheticVisit[] {
  const random = seededRandom(seed + routeIndex * 7919);
  const ordered = [...outlets].sort(
    (a, b) => Number(a.gps_longitude ?? 0) - Number(b.gps_longitude ?? 0) || a.outlet_code.localeCompare(b.outlet_code),
  );
  const perDay = Math.ceil(ordered.length / WORKING_DAYS);
  return ordered.map((outlet, i) => {
    const biweekly = random() < 0.25;
    return {
      customer_id: outlet.id,
      weekday: 1 + Math.floor(i / perDay),
      sequence: 1 + (i % perDay),
      frequency: biweekly ? 'biweekly' : 'weekly',
      week_parity: biweekly ? (random() < 0.5 ? 0 : 1) : null,
    };
  });
}
