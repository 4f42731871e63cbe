// Delivery trips: a van (its good- and bad-stock locations), a salesperson, a route and a business date, moved
// loading -> in_transit -> returned -> closed (lifecycle.ts). The API only reads trips (service.ts); the operator
// CLI, the sandbox and the DMS move them through the posting functions below, each `(tx, actor, command)` and each
// one transaction: the trip's guarded status UPDATE, its stock documents (through the stock module's posting
// functions, carrying the trip's id) and its outbox event commit together or not at all.
//
// Decisions (README, Trips):
// - A van has at most one trip that is not closed. A second open is 422 business_rule naming /vanLocationId (the
//   request names a van that is busy: a rule about the command's field, not a move of an existing trip, which is
//   what 409 invalid_state means). The van's location row is locked first, so two concurrent opens cannot both pass.
// - The return's count names every product the van holds (a product held but not counted is 422 business_rule
//   naming /lines: a count that forgets a product would silently leave it on the van). The difference from the books
//   is one stock adjustment (reason TRIP_COUNT, the trip's id); then everything counted goes back to the trip's
//   warehouse in one transfer.
// - Every posting function refuses with 403 module_disabled when the organisation has the delivery module off.
import type { Actor } from '../../platform/access/actor.js';
import { nextDocumentNumber } from '../../domain/documents/numbers.js';
import type { Db, Tx } from '../../platform/database/transaction.js';
import { dateProblem, timestampProblem } from '../../platform/dates.js';
import { ApiError, type FieldError } from '../../platform/errors/api-error.js';
import { recordEvent } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';
import {
  postStockAdjustment,
  postStockTransfer,
  STOCK_DOCUMENT,
  type StockDocument,
  type StockUnit,
} from '../stock/documents.js';
import { heldAt, lockLevels } from '../stock/ledger.js';
import { tripLifecycle, type TripCommand, type TripStatus } from './lifecycle.js';
import { findTrip, TRIP_RESOURCE, type TripRow } from './repository.js';
import { toTrip, type Trip } from './representation.js';

/** The reason code of the adjustment a return's count posts. */
export const TRIP_COUNT_REASON = 'TRIP_COUNT';
/** At most this many GPS points per call. */
export const MAX_POINTS = 1_000;

export interface OpenTripCommand {
  /** The van's good-stock location (kind van, condition good). */
  vanLocationId: string;
  /** The warehouse (kind main) the van loads from and returns to. */
  warehouseLocationId: string;
  /** YYYY-MM-DD. */
  businessDate: string;
  /** Without it, the van's route. */
  routeId?: string;
  /** Without it, the route's salesperson. */
  salespersonId?: string;
  /** `erp` (the operator's and the sandbox's trips) or `dms` (a salesman's DMS day, read-only). */
  source?: 'erp' | 'dms';
}

export interface TripLine {
  productId: string;
  unit: StockUnit;
  quantity: number;
}

export interface LoadTripCommand {
  tripId: string;
  lines: TripLine[];
}

export interface ReturnTripCommand {
  tripId: string;
  /** What the count found on the van, per product (every product the van holds, each once). */
  lines: { productId: string; unit: StockUnit; countedQuantity: number }[];
}

export interface TripPoint {
  /** When the device took the fix (an ISO 8601 timestamp). */
  recordedAt: string;
  latitude: number;
  longitude: number;
  accuracyMeters?: number | null;
}

/** A trip with the stock documents the move posted (a load's transfer; a return's count and transfer back). */
export interface TripMoved {
  trip: Trip;
  documents: StockDocument[];
}

/** 403 module_disabled unless the actor's organisation has the delivery module on. */
export function requireDeliveryModule(actor: Actor): void {
  if (!actor.organization.deliveryModuleEnabled) {
    throw new ApiError(
      'module_disabled',
      'Trips belong to the delivery module, which this organisation has switched off.',
    );
  }
}

/**
 * 409 invalid_state when someone other than the DMS moves a trip of source `dms`: a salesman's DMS day is read-only,
 * moved and settled only by the DMS's documents (its route settlement returns, settles and closes it).
 */
export function refuseHandMoveOfDmsTrip(actor: Actor, trip: { number: string; source: string }): void {
  if (trip.source === 'dms' && actor.kind !== 'dms_connection') {
    throw new ApiError(
      'invalid_state',
      `Trip ${trip.number} is a salesman's DMS day (source dms): it is read-only, moved and settled only by the DMS's documents (its route settlement closes it).`,
    );
  }
}

function refuse(field: string, message: string, code: 'business_rule' | 'invalid_field' = 'business_rule'): ApiError {
  return new ApiError(code, `${field.slice(1)}: ${message}.`, [{ field, code, message }]);
}

/** Opens a trip (status loading, number TRP-000001, event trip.opened). */
export async function openTrip(tx: Tx, actor: Actor, command: OpenTripCommand): Promise<Trip> {
  requireDeliveryModule(actor);
  const organizationId = actor.organization.id;
  if (
    !/^\d{4}-\d{2}-\d{2}$/.test(command.businessDate) ||
    Number.isNaN(Date.parse(`${command.businessDate}T00:00:00Z`)) ||
    new Date(`${command.businessDate}T00:00:00Z`).toISOString().slice(0, 10) !== command.businessDate
  ) {
    throw refuse('/businessDate', 'a calendar date YYYY-MM-DD', 'invalid_field');
  }
  const dateIssue = dateProblem(command.businessDate);
  if (dateIssue) throw refuse('/businessDate', dateIssue, 'invalid_field');

  // The van first, locked: a concurrent open of the same van waits here and then sees this one's trip.
  const van = await tx
    .selectFrom('locations')
    .select(['id', 'code', 'kind', 'stock_condition', 'active', 'route_id'])
    .where('organization_id', '=', organizationId)
    .where('id', '=', command.vanLocationId)
    .forNoKeyUpdate()
    .executeTakeFirst();
  if (!van) throw refuse('/vanLocationId', `there is no location ${command.vanLocationId} in this organisation`);
  if (van.kind !== 'van' || van.stock_condition !== 'good')
    throw refuse('/vanLocationId', `${van.code} is not a van's good-stock location (V_<route>-G)`);
  if (!van.active) throw refuse('/vanLocationId', `${van.code} is inactive`);
  const open = await tx
    .selectFrom('trips')
    .select(['number', 'status'])
    .where('organization_id', '=', organizationId)
    .where('van_location_id', '=', van.id)
    .where('status', '<>', 'closed')
    .executeTakeFirst();
  if (open)
    throw refuse(
      '/vanLocationId',
      `the van ${van.code} is on trip ${open.number}, which is ${open.status}; close it first`,
    );

  const warehouse = await tx
    .selectFrom('locations')
    .select(['id', 'code', 'kind', 'active'])
    .where('organization_id', '=', organizationId)
    .where('id', '=', command.warehouseLocationId)
    .forShare()
    .executeTakeFirst();
  if (!warehouse)
    throw refuse('/warehouseLocationId', `there is no location ${command.warehouseLocationId} in this organisation`);
  if (warehouse.kind !== 'main' || !warehouse.active)
    throw refuse('/warehouseLocationId', `${warehouse.code} is not an active main warehouse`);

  const routeId = command.routeId ?? van.route_id;
  if (!routeId) throw refuse('/routeId', `the van ${van.code} belongs to no route; name the route`);
  const route = await tx
    .selectFrom('routes')
    .select(['id', 'route_code', 'salesperson_id'])
    .where('organization_id', '=', organizationId)
    .where('id', '=', routeId)
    .forShare()
    .executeTakeFirst();
  if (!route) throw refuse('/routeId', `there is no route ${routeId} in this organisation`);

  const salespersonId = command.salespersonId ?? route.salesperson_id;
  if (!salespersonId) throw refuse('/salespersonId', `the route ${route.route_code} has no salesperson; name one`);
  const salesperson = await tx
    .selectFrom('salespeople')
    .select(['id', 'active'])
    .where('organization_id', '=', organizationId)
    .where('id', '=', salespersonId)
    .forShare()
    .executeTakeFirst();
  if (!salesperson) throw refuse('/salespersonId', `there is no salesperson ${salespersonId} in this organisation`);
  if (!salesperson.active) throw refuse('/salespersonId', `the salesperson ${salespersonId} is inactive`);

  // The van's bad-stock location is its pair by code (V_R01-G -> V_R01-B), when the organisation has one.
  const badStock = await tx
    .selectFrom('locations')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('code', '=', van.code.replace(/-G$/, '-B'))
    .where('kind', '=', 'van')
    .where('stock_condition', '=', 'bad')
    .executeTakeFirst();

  const id = newId('trp');
  const number = await nextDocumentNumber(tx, organizationId, 'trip', 'TRP');
  const row = await tx
    .insertInto('trips')
    .values({
      organization_id: organizationId,
      id,
      number,
      status: tripLifecycle.initial,
      source: command.source ?? 'erp',
      van_location_id: van.id,
      bad_stock_location_id: badStock?.id ?? null,
      warehouse_location_id: warehouse.id,
      salesperson_id: salesperson.id,
      route_id: route.id,
      business_date: command.businessDate,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await recordEvent(tx, organizationId, 'trip.opened', TRIP_RESOURCE, id);
  return toTrip({ ...row, business_date: command.businessDate }); // the date as given (checked above), not as a local-midnight Date
}

/**
 * The trip a salesman's DMS day runs on: the van's trip in transit; else its loading trip, departed now; else a new
 * trip (source `dms`) opened and departed at once, so that the day's van documents (sales, collections, returns)
 * have the trip the stock and money rules need. A van whose trip is returned and not yet closed is refused.
 */
export async function dmsDayTrip(
  tx: Tx,
  actor: Actor,
  command: Required<Pick<OpenTripCommand, 'vanLocationId' | 'warehouseLocationId' | 'businessDate' | 'routeId'>> & {
    salespersonId?: string;
  },
): Promise<Trip> {
  // The van first, locked as openTrip locks it: two documents of the same day posted at once open one trip, and the
  // second sees the first's.
  await tx
    .selectFrom('locations')
    .select('id')
    .where('organization_id', '=', actor.organization.id)
    .where('id', '=', command.vanLocationId)
    .forNoKeyUpdate()
    .execute();
  const open = await tx
    .selectFrom('trips')
    .select(['id', 'number', 'status'])
    .where('organization_id', '=', actor.organization.id)
    .where('van_location_id', '=', command.vanLocationId)
    .where('status', '<>', 'closed')
    .executeTakeFirst();
  if (open?.status === 'in_transit') return current(tx, actor, open.id);
  if (open?.status === 'loading') return departTrip(tx, actor, open.id);
  if (open)
    throw new ApiError(
      'invalid_state',
      `The van's trip ${open.number} is ${open.status}: it must be closed before the van's next day.`,
    );
  const trip = await openTrip(tx, actor, { ...command, source: 'dms' });
  await adoptLoads(tx, actor.organization.id, trip.id, command.vanLocationId);
  return departTrip(tx, actor, trip.id);
}

/**
 * The van's DMS day in transit (or loading), if one is open: a van replenishment posted while it is is one of its
 * loads (its transfer names the trip, and the settlement sheet counts it as loaded).
 */
export async function openDmsTripOf(tx: Tx, organizationId: string, vanLocationId: string): Promise<string | null> {
  const open = await tx
    .selectFrom('trips')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('van_location_id', '=', vanLocationId)
    .where('source', '=', 'dms')
    .where('status', 'in', ['loading', 'in_transit'])
    .executeTakeFirst();
  return open?.id ?? null;
}

/**
 * A new DMS day's loads: the transfers into its van that no trip names, posted since the van's last trip came back
 * (a replenishment the evening before, or the morning before the day's first sale opened the day).
 */
async function adoptLoads(tx: Tx, organizationId: string, tripId: string, vanLocationId: string): Promise<void> {
  const last = await tx
    .selectFrom('trips')
    .select((eb) => eb.fn.max('returned_at').as('returned_at'))
    .where('organization_id', '=', organizationId)
    .where('van_location_id', '=', vanLocationId)
    .where('id', '<>', tripId)
    .executeTakeFirst();
  let query = tx
    .updateTable('stock_documents')
    .set({ trip_id: tripId })
    .where('organization_id', '=', organizationId)
    .where('trip_id', 'is', null)
    .where('type', '=', 'transfer')
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('stock_movements as m')
          .select('m.id')
          .whereRef('m.organization_id', '=', 'stock_documents.organization_id')
          .where('m.document_type', '=', STOCK_DOCUMENT)
          .whereRef('m.document_id', '=', 'stock_documents.id')
          .where('m.to_location_id', '=', vanLocationId),
      ),
    );
  if (last?.returned_at) query = query.where('created_at', '>', last.returned_at);
  await query.execute();
}

/** Loads the van: a transfer from the trip's warehouse to its van, only while the trip is loading (event trip.loaded). */
export async function loadTrip(tx: Tx, actor: Actor, command: LoadTripCommand): Promise<TripMoved> {
  const { before: trip } = await move(tx, actor, command.tripId, 'load');
  if (command.lines.length === 0) throw refuse('/lines', 'a load moves at least one line', 'invalid_field');
  const transfer = await postStockTransfer(tx, actor, {
    fromLocationId: trip.warehouse_location_id,
    toLocationId: trip.van_location_id,
    tripId: trip.id,
    note: `Load of trip ${trip.number}`,
    lines: command.lines,
  });
  return { trip: await current(tx, actor, trip.id), documents: [transfer] };
}

/** The van leaves: in_transit, departedAt (event trip.departed). */
export async function departTrip(tx: Tx, actor: Actor, tripId: string): Promise<Trip> {
  return (await move(tx, actor, tripId, 'depart', 'departed_at')).after!;
}

/**
 * The van is back: its count against the books (the difference is one adjustment, reason TRIP_COUNT), then all
 * that was counted goes back to the warehouse in one transfer; status returned, returnedAt (event trip.returned).
 */
export async function returnTrip(tx: Tx, actor: Actor, command: ReturnTripCommand): Promise<TripMoved> {
  const { before: trip, after } = await move(tx, actor, command.tripId, 'return', 'returned_at');
  const problems: FieldError[] = [];
  const seen = new Map<string, number>();
  command.lines.forEach((line, i) => {
    const first = seen.get(line.productId);
    if (first !== undefined)
      problems.push({
        field: `/lines/${i}/productId`,
        code: 'business_rule',
        message: `the product is already counted by /lines/${first}`,
      });
    else seen.set(line.productId, i);
  });
  // What the van holds, read under the ledger's locks (valuations, then levels, in its one order) so that no other
  // document moves it between this count's check and its postings: a first read finds the products, lockLevels locks
  // their rows, and the second read is the one the count is checked against.
  const onVan = await heldAt(tx, actor.organization.id, trip.van_location_id);
  await lockLevels(
    tx,
    actor.organization.id,
    [...onVan.keys()].map((productId) => ({ locationId: trip.van_location_id, productId })),
  );
  const held = await heldAt(tx, actor.organization.id, trip.van_location_id);
  const uncounted = [...held.keys()].filter((productId) => !seen.has(productId)).sort();
  if (uncounted.length > 0)
    problems.push({
      field: '/lines',
      code: 'business_rule',
      message: `the van holds products the count does not name: ${uncounted.join(', ')} (count each, 0 when none was found)`,
    });
  if (problems.length > 0)
    throw new ApiError(
      'business_rule',
      `The count cannot be posted: ${problems.map((p) => `${p.field.slice(1)}: ${p.message}`).join('; ')}.`,
      problems,
    );

  const documents: StockDocument[] = [];
  if (await countDiffers(tx, actor.organization.id, command.lines, held)) {
    documents.push(
      await postStockAdjustment(tx, actor, {
        reasonCode: TRIP_COUNT_REASON,
        note: `Count of trip ${trip.number} at its return`,
        tripId: trip.id,
        lines: command.lines.map((line) => ({
          productId: line.productId,
          locationId: trip.van_location_id,
          unit: line.unit,
          countedQuantity: line.countedQuantity,
        })),
      }),
    );
  }
  const back = command.lines.filter((line) => line.countedQuantity > 0);
  if (back.length > 0) {
    documents.push(
      await postStockTransfer(tx, actor, {
        fromLocationId: trip.van_location_id,
        toLocationId: trip.warehouse_location_id,
        tripId: trip.id,
        note: `Return of trip ${trip.number}`,
        lines: back.map((line) => ({ productId: line.productId, unit: line.unit, quantity: line.countedQuantity })),
      }),
    );
  }
  return { trip: after!, documents };
}

/**
 * Whether the count differs from what the van holds (in base units). A count that agrees with the books posts no
 * adjustment. A line naming a product that is not the organisation's counts as a difference, so that the
 * adjustment's posting function refuses it by its field. `held` was read under the levels' locks (returnTrip), so it
 * is what the postings that follow will find.
 */
async function countDiffers(
  tx: Tx,
  organizationId: string,
  lines: ReturnTripCommand['lines'],
  held: Map<string, number>,
): Promise<boolean> {
  if (lines.length === 0) return false;
  const packSizes = new Map(
    (
      await tx
        .selectFrom('products')
        .select(['id', 'pack_size'])
        .where('organization_id', '=', organizationId)
        .where(
          'id',
          'in',
          lines.map((line) => line.productId),
        )
        .execute()
    ).map((row) => [row.id, row.pack_size]),
  );
  return lines.some((line) => {
    const packSize = packSizes.get(line.productId);
    if (packSize === undefined || !Number.isSafeInteger(line.countedQuantity) || line.countedQuantity < 0) return true;
    return line.countedQuantity * (line.unit === 'case' ? packSize : 1) !== (held.get(line.productId) ?? 0);
  });
}

/**
 * The settlement is done: closed, closedAt (event trip.closed, delivered as a webhook). A trip closes after its
 * settlement: without one it is 409 invalid_state. The settlements module closes the trip in the settlement's own
 * transaction (settleTrip, closeTripWithNothingToSettle); this is its move.
 */
export async function closeTrip(tx: Tx, actor: Actor, tripId: string): Promise<Trip> {
  const { before, after } = await move(tx, actor, tripId, 'close', 'closed_at');
  const settled = await tx
    .selectFrom('settlements')
    .select('id')
    .where('organization_id', '=', actor.organization.id)
    .where('trip_id', '=', before.id)
    .executeTakeFirst();
  if (!settled)
    throw new ApiError(
      'invalid_state',
      `Trip ${before.number} has no settlement; a trip closes with its settlement (admin trip settle, or admin trip close when nothing was sold, collected or credited on it).`,
    );
  return after!;
}

/** Appends points to the trip's GPS trail (refused once the trip is closed). Returns how many were recorded. */
export async function recordTripLocations(tx: Tx, actor: Actor, tripId: string, points: TripPoint[]): Promise<number> {
  requireDeliveryModule(actor);
  const trip = await findTrip(tx, actor.organization.id, tripId);
  if (!trip) throw new ApiError('not_found', `No trip ${tripId} in this organisation.`);
  if (trip.status === 'closed')
    throw new ApiError('invalid_state', `Trip ${trip.number} is closed; its GPS trail is final.`);
  refuseHandMoveOfDmsTrip(actor, trip);
  if (points.length > MAX_POINTS)
    throw refuse('/points', `at most ${MAX_POINTS} points per call, not ${points.length}`, 'invalid_field');
  const problems: FieldError[] = [];
  const finite = (value: unknown, min: number, max: number) =>
    typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max;
  points.forEach((point, i) => {
    const when = typeof point.recordedAt === 'string' ? timestampProblem(point.recordedAt) : 'is not a date-time';
    if (when) problems.push({ field: `/points/${i}/recordedAt`, code: 'invalid_field', message: when });
    if (!finite(point.latitude, -90, 90))
      problems.push({ field: `/points/${i}/latitude`, code: 'invalid_field', message: 'a number from -90 to 90' });
    if (!finite(point.longitude, -180, 180))
      problems.push({ field: `/points/${i}/longitude`, code: 'invalid_field', message: 'a number from -180 to 180' });
    if (
      point.accuracyMeters !== undefined &&
      point.accuracyMeters !== null &&
      !finite(point.accuracyMeters, 0, 999_999)
    ) {
      problems.push({
        field: `/points/${i}/accuracyMeters`,
        code: 'invalid_field',
        message: 'a number of metres from 0 to 999999',
      });
    }
  });
  if (problems.length > 0)
    throw new ApiError(
      'invalid_field',
      problems.length === 1
        ? `${problems[0]!.field.slice(1)}: ${problems[0]!.message}.`
        : 'Several points are invalid; errors[] names each.',
      problems,
    );
  if (points.length === 0) return 0;
  await tx
    .insertInto('trip_locations')
    .values(
      points.map((point) => ({
        organization_id: actor.organization.id,
        id: newId('tlc'),
        trip_id: trip.id,
        recorded_at: new Date(Date.parse(point.recordedAt)),
        latitude: point.latitude.toFixed(6),
        longitude: point.longitude.toFixed(6),
        accuracy_meters: point.accuracyMeters == null ? null : point.accuracyMeters.toFixed(2),
      })),
    )
    .execute();
  return points.length;
}

/**
 * Moves the trip by its transition table (a guarded UPDATE: a concurrent move makes this one 409 invalid_state),
 * sets the move's timestamp column, and writes the move's event. Returns the trip as it was read before the move.
 */
async function move(
  tx: Tx,
  actor: Actor,
  tripId: string,
  command: TripCommand,
  stamp?: 'departed_at' | 'returned_at' | 'closed_at',
): Promise<{ before: TripRow; after: Trip | null }> {
  requireDeliveryModule(actor);
  const organizationId = actor.organization.id;
  const trip = await findTrip(tx, organizationId, tripId);
  if (!trip) throw new ApiError('not_found', `No trip ${tripId} in this organisation.`);
  refuseHandMoveOfDmsTrip(actor, trip);
  const { event } = await tripLifecycle.move(
    tx,
    { table: 'trips', organizationId, id: trip.id, from: trip.status as TripStatus },
    command,
  );
  await recordEvent(tx, organizationId, event, TRIP_RESOURCE, trip.id);
  if (!stamp) return { before: trip, after: null };
  // The move's time, and the trip as it is now (the status and updated_at the guarded UPDATE just wrote).
  const row = await tx
    .updateTable('trips')
    .set((eb) => ({ [stamp]: eb.fn<Date>('now') }))
    .where('organization_id', '=', organizationId)
    .where('id', '=', trip.id)
    .returning(['status', 'departed_at', 'returned_at', 'closed_at', 'updated_at'])
    .executeTakeFirstOrThrow();
  return { before: trip, after: toTrip({ ...trip, ...row }) };
}

async function current(db: Db, actor: Actor, tripId: string): Promise<Trip> {
  return toTrip((await findTrip(db, actor.organization.id, tripId))!);
}
