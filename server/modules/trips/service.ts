// Delivery trips' reads (GET /trips, /trips/{id}, /trips/{id}/locations, the webhook of trip.closed); their posting
// functions are documents.ts's.
import type { Actor } from '../../platform/access/actor.js';
import type { Db } from '../../platform/database/transaction.js';
import { dateProblem } from '../../platform/dates.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { requireFilterRecords } from '../../platform/lists/filter-records.js';
import { readPage, type Filter, type ListRequest, type Page } from '../../platform/lists/page.js';
import { equals } from '../../platform/resources/filters.js';
import { requireDeliveryModule } from './documents.js';
import { findTrip, trailQuery, tripQuery } from './repository.js';
import { toTrip, toTripLocation, type Trip, type TripLocation } from './representation.js';

export interface TripFilters {
  status?: string;
  salespersonId?: string;
  routeId?: string;
  vanLocationId?: string;
  businessDate?: string;
}

export async function listTrips(db: Db, actor: Actor, request: ListRequest, filters: TripFilters): Promise<Page<Trip>> {
  requireDeliveryModule(actor);
  const organizationId = actor.organization.id;
  await requireFilterRecords(db, organizationId, [
    { parameter: 'salespersonId', table: 'salespeople', what: 'salesperson', id: filters.salespersonId },
    { parameter: 'routeId', table: 'routes', what: 'route', id: filters.routeId },
    { parameter: 'vanLocationId', table: 'locations', what: 'location', id: filters.vanLocationId },
  ]);
  if (filters.businessDate !== undefined) {
    const problem = dateProblem(filters.businessDate);
    if (problem)
      throw new ApiError('invalid_field', `businessDate ${problem}.`, [
        { field: '/query/businessDate', code: 'invalid_field', message: problem },
      ]);
  }
  const conditions: Record<string, Filter | undefined> = {
    status: equals('trips', 'status', filters.status),
    salespersonId: equals('trips', 'salesperson_id', filters.salespersonId),
    routeId: equals('trips', 'route_id', filters.routeId),
    vanLocationId: equals('trips', 'van_location_id', filters.vanLocationId),
    businessDate: equals('trips', 'business_date', filters.businessDate),
  };
  const page = await readPage('trips', tripQuery(db, organizationId), organizationId, request, conditions);
  return { ...page, rows: page.rows.map(toTrip) };
}

export async function getTrip(db: Db, actor: Actor, id: string): Promise<Trip> {
  requireDeliveryModule(actor);
  const row = await findTrip(db, actor.organization.id, id);
  if (!row) throw new ApiError('not_found', `No trip ${id} in this organisation.`);
  return toTrip(row);
}

/** The trail as a `since` feed: oldest change first, by (updatedAt, id); from the start when `since` is absent. */
export async function listTripLocations(
  db: Db,
  actor: Actor,
  tripId: string,
  request: { limit?: number; cursor?: string; since?: string },
): Promise<Page<TripLocation>> {
  requireDeliveryModule(actor);
  const organizationId = actor.organization.id;
  const trip = await findTrip(db, organizationId, tripId);
  if (!trip) throw new ApiError('not_found', `No trip ${tripId} in this organisation.`);
  const page = await readPage(
    `trips/${trip.id}/locations`,
    trailQuery(db, organizationId, trip.id),
    organizationId,
    { limit: request.limit, cursor: request.cursor, updatedSince: request.since ?? new Date(0).toISOString() },
    {},
  );
  const includePii = actor.scopes.has('customers:pii');
  return { ...page, rows: page.rows.map((row) => toTripLocation(row, includePii)) };
}

/** A trip as a webhook reads it (whatever the organisation's modules now are): null when it is not there. */
export async function readTripForWebhook(db: Db, actor: Actor, id: string): Promise<Trip | null> {
  const row = await findTrip(db, actor.organization.id, id);
  return row ? toTrip(row) : null;
}
