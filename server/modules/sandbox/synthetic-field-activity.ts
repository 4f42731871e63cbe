// Three weeks of field activity for the sandbox: on each working day every route's salesperson visits two of the
// outlets its journey plan has for that weekday; about half the visits get an outlet activity and about a third a
// competitor observation, some with a photo (a tiny PNG made here with node's zlib). Everything is drawn from its
// own seeded stream, so the same on every machine; only the dates follow the day the sandbox is written (the
// weeks before it). A few hundred rows, written through the field-activity module's own posting functions (their batch forms).
import { deflateSync } from 'node:zlib';
import type { Actor } from '../../platform/access/actor.js';
import type { Tx } from '../../platform/database/transaction.js';
import {
  recordActivities,
  recordObservations,
  recordVisits,
  type RecordActivity,
  type RecordObservation,
  type RecordVisit,
} from '../field-activity/service.js';
import type { SandboxDistributor } from './synthetic-distributor.js';
import { picker, seededRandom, SANDBOX_SEED } from './seeded-random.js';

const WEEKS = 3;
const VISITS_PER_ROUTE_AND_DAY = 2;
const BRANDS = [
  { brand: 'Rival Cola', own: false },
  { brand: 'Nile Fresh', own: false },
  { brand: 'Sunny Malt', own: false },
  { brand: 'Kampala Cola', own: true },
  { brand: 'Crystal Water', own: true },
];
const NO_SALE_REASONS = ['Owner away', 'Enough stock', 'No cash today', 'Prefers a competitor'];
const ACTIVITIES = [
  { kind: 'merchandising', description: 'Faced the shelves and moved our brands to eye level' },
  { kind: 'cooler_check', description: 'Cooler clean and branded; half full of competitor stock' },
  { kind: 'promotion', description: 'Explained the buy-ten-get-one case offer' },
  { kind: 'survey', description: 'Asked about weekly volumes and preferred pack sizes' },
] as const;

/** A small PNG (RGB, 8 bits) of one colour with a darker diagonal: valid for any image reader. */
export function syntheticPng(width: number, height: number, rgb: readonly [number, number, number]): Buffer {
  const rows = Buffer.alloc(height * (1 + width * 3));
  for (let y = 0; y < height; y += 1) {
    const start = y * (1 + width * 3); // each row starts with filter type 0 (none)
    for (let x = 0; x < width; x += 1) {
      const shade = x === y ? 0.5 : 1;
      rows.set(
        rgb.map((c) => Math.round(c * shade)),
        start + 1 + x * 3,
      );
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // bit depth 8, colour type 2 (RGB), deflate, adaptive filters, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

let crcTable: Uint32Array | undefined;
function crc32(bytes: Buffer): number {
  crcTable ??= Uint32Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  let crc = 0xffffffff;
  for (const byte of bytes) crc = crcTable[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** The working days (Monday to Saturday) of the WEEKS weeks before `today`, oldest first, with their weekday (1-6). */
function workingDays(today: Date): { date: string; weekday: number }[] {
  const days: { date: string; weekday: number }[] = [];
  for (let back = WEEKS * 7; back >= 1; back -= 1) {
    const day = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - back));
    const weekday = day.getUTCDay(); // 0 is Sunday
    if (weekday !== 0) days.push({ date: day.toISOString().slice(0, 10), weekday });
  }
  return days;
}

/**
 * Writes the field activity of the sandbox distributor `d`, whose records the modules created under the ids in
 * `idOf` (synthetic id -> real id): every visit is drawn first, with what happened on it, then the three kinds are
 * written in one call each (a few set-based statements in all).
 */
export async function writeFieldActivity(
  tx: Tx,
  actor: Actor,
  d: SandboxDistributor,
  idOf: ReadonlyMap<string, string>,
  today = new Date(),
): Promise<void> {
  const random = seededRandom(SANDBOX_SEED + 11);
  const pick = picker(random);
  const routeOfPlan = new Map(d.journeyPlans.map((plan) => [plan.id, plan.route_id]));
  const salespersonOfRoute = new Map(d.routes.map((route) => [route.id, route.salesperson_id]));
  const visits: RecordVisit[] = [];
  const activities: { visit: number; command: Omit<RecordActivity, 'visitId'> }[] = [];
  const observations: { visit: number; command: Omit<RecordObservation, 'visitId'> }[] = [];
  for (const { date, weekday } of workingDays(today)) {
    for (const route of d.routes) {
      const planned = d.visits.filter(
        (visit) => visit.weekday === weekday && routeOfPlan.get(visit.journey_plan_id) === route.id,
      );
      const salespersonId = idOf.get(salespersonOfRoute.get(route.id)!)!;
      for (const [n, planVisit] of planned.slice(0, VISITS_PER_ROUTE_AND_DAY).entries()) {
        const customerId = idOf.get(planVisit.customer_id)!;
        const roll = random();
        const outcome = roll < 0.7 ? 'sale' : roll < 0.9 ? 'no_sale' : 'closed_outlet';
        const checkIn = new Date(`${date}T06:30:00.000Z`);
        checkIn.setUTCMinutes(checkIn.getUTCMinutes() + n * 95 + Math.floor(random() * 30));
        const checkOut = new Date(checkIn.getTime() + (8 + Math.floor(random() * 25)) * 60_000);
        const visit =
          visits.push({
            customerId,
            salespersonId,
            visitDate: date,
            checkInAt: checkIn.toISOString(),
            checkOutAt: checkOut.toISOString(),
            outcome,
            noSaleReason: outcome === 'no_sale' ? pick(NO_SALE_REASONS) : null,
          }) - 1;
        if (outcome === 'closed_outlet') continue;
        if (random() < 0.5) {
          const activity = pick(ACTIVITIES);
          activities.push({
            visit,
            command: { customerId, salespersonId, kind: activity.kind, description: activity.description },
          });
        }
        if (random() < 0.35) {
          const { brand, own } = pick(BRANDS);
          const photo =
            random() < 0.4
              ? syntheticPng(16, 12, [
                  Math.floor(random() * 256),
                  Math.floor(random() * 256),
                  Math.floor(random() * 256),
                ])
              : undefined;
          observations.push({
            visit,
            command: {
              customerId,
              observedBy: salespersonId,
              brand,
              isOwnBrand: own,
              quantity: 1 + Math.floor(random() * 40),
              photo,
            },
          });
        }
      }
    }
  }
  const visitIds = (await recordVisits(tx, actor, visits)).map((visit) => visit.id);
  await recordActivities(
    tx,
    actor,
    activities.map(({ visit, command }) => ({ ...command, visitId: visitIds[visit]! })),
  );
  await recordObservations(
    tx,
    actor,
    observations.map(({ visit, command }) => ({ ...command, visitId: visitIds[visit]! })),
  );
}
