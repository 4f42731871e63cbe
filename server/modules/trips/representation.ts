// The exact JSON of a trip and of a point of its GPS trail (spec: components/schemas/Trip, TripLocation). A point's
// position (latitude, longitude, accuracy) is personal data, the salesperson's whereabouts: only with customers:pii,
// omitted (not null) otherwise.
import type { components } from '../../../generated/api-types.js';
import type { TripStatus } from './lifecycle.js';
import type { TripLocationRow, TripRow } from './repository.js';

export type Trip = components['schemas']['Trip'];
export type TripLocation = components['schemas']['TripLocation'];

const iso = (value: Date | null) => (value === null ? null : value.toISOString());

export function toTrip(row: TripRow): Trip {
  return {
    id: row.id,
    number: row.number,
    status: row.status as TripStatus,
    source: row.source as Trip['source'],
    vanLocationId: row.van_location_id,
    badStockLocationId: row.bad_stock_location_id,
    warehouseLocationId: row.warehouse_location_id,
    salespersonId: row.salesperson_id,
    routeId: row.route_id,
    businessDate: row.business_date,
    departedAt: iso(row.departed_at),
    returnedAt: iso(row.returned_at),
    closedAt: iso(row.closed_at),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function toTripLocation(row: TripLocationRow, includePii: boolean): TripLocation {
  return {
    id: row.id,
    tripId: row.trip_id,
    recordedAt: row.recorded_at.toISOString(),
    ...(includePii
      ? {
          latitude: Number(row.latitude),
          longitude: Number(row.longitude),
          accuracyMeters: row.accuracy_meters === null ? null : Number(row.accuracy_meters),
        }
      : {}),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
