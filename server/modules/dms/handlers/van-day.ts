// The salesman's DMS day: the route's van and its trip in transit (opened and departed for the day when there is
// none: a DMS day is a read-only trip), which van sales and collections are recorded on, as REST records them on the
// operator's trips. And the wait of a van document whose stock is not on the van yet.
import { ApiError } from '../../../platform/errors/api-error.js';
import type { Tx } from '../../../platform/database/transaction.js';
import { DmsRejection } from '../reasons.js';
import { refusalOutcome } from '../refusals.js';
import { mainWarehouse, routeByCode, salespersonByCode, vanOfRoute } from './lookup.js';
import { vanDayTrips } from './registry.js';
import { requireLinkedSalesman } from './setup.js';
import type { DmsContext, LoadedDocument } from './types.js';

/**
 * What a transaction already found of a van day (the route, its van, the warehouse, the trip in transit), by route,
 * date and salesman: documents of one day posted in one transaction look them up once. A day's facts do not change
 * inside the transaction except by its own documents, which only use the trip.
 */
const days = new WeakMap<Tx, Map<string, Promise<VanDay>>>();

type VanDay = Awaited<ReturnType<typeof findVanDay>>;

/** The van day the document belongs to: the route's van and the salesman's DMS day as a trip in transit. */
export function vanDayOf(tx: Tx, context: DmsContext, document: LoadedDocument, routeCode: string): Promise<VanDay> {
  let known = days.get(tx);
  if (!known) days.set(tx, (known = new Map()));
  const key = `${routeCode}|${document.date}|${document.document.salesmanCode ?? ''}`;
  let day = known.get(key);
  if (!day) {
    day = findVanDay(tx, context, document, routeCode);
    known.set(key, day);
    // A refusal is not remembered: the next document asks again.
    day.catch(() => known!.delete(key));
  }
  return day;
}

/**
 * The van's DMS day if one is open, for a stock document that loads the van (the trips module's openDmsTripOf, declared
 * in its manifest as the van day trips): the kit's, so that a mapping reaches the van day through the DMS, as vanDayOf
 * does.
 */
export function openVanDayOf(tx: Tx, organizationId: string, vanLocationId: string): Promise<string | null> {
  return vanDayTrips().openTripOf(tx, organizationId, vanLocationId);
}

/** Forgets what the transaction found: a document's savepoint was rolled back, and with it any trip it opened. */
export function forgetVanDays(tx: Tx): void {
  days.delete(tx);
}

async function findVanDay(tx: Tx, context: DmsContext, document: LoadedDocument, routeCode: string) {
  const organizationId = context.actor.organization.id;
  const route = await routeByCode(tx, organizationId, routeCode);
  const van = await vanOfRoute(tx, organizationId, route);
  const salespersonId =
    (await salespersonByCode(tx, organizationId, document.document.salesmanCode)) ?? route.salesperson_id;
  if (!salespersonId)
    throw new DmsRejection(
      'R03',
      `Neither the document nor route ${routeCode} names a salesman: a van document with no salesman cannot post. Set the route's salesman, then re-process.`,
    );
  if (!context.actor.organization.deliveryModuleEnabled || !context.actor.organization.fieldSalesModuleEnabled) {
    throw new DmsRejection(
      'R03',
      'Van documents need the delivery and field sales modules, which this organisation has switched off.',
    );
  }
  await requireLinkedSalesman(tx, document, salespersonId);
  const warehouse = await mainWarehouse(tx, organizationId);
  const trip = await vanDayTrips().dayTrip(tx, context.actor, {
    vanLocationId: van.id,
    warehouseLocationId: warehouse.id,
    businessDate: document.date,
    routeId: route.id,
    salespersonId,
  });
  return { route, van, trip, salespersonId };
}

/** Stock the van does not hold (yet): the document waits for a replenishment of that van. */
export function stockWait(error: unknown, vanCode: string): never {
  throw asStockWait(error, vanCode);
}

/**
 * stockWait as a value: a refusal as its outcome (refusals.ts), a wait for stock waiting for `vanCode`'s; any other
 * error as it is.
 */
export function asStockWait(error: unknown, vanCode: string): unknown {
  return error instanceof ApiError ? refusalOutcome(error, vanCode) : error;
}
