// The trips module's own tables: trips and trip_locations (the GPS trail). Every statement is scoped by
// organization_id first (docs/decisions/0005-tenancy-organization-id-first.md).
import { sql, type Selectable } from 'kysely';
import type { Trip as TripTable, TripLocation as TripLocationTable } from '../../../generated/kysely/types.js';
import type { Db } from '../../platform/database/transaction.js';
import type { ListQuery } from '../../platform/lists/page.js';

export const TRIP_RESOURCE = 'trip';

/** A trip's row, its business date as `YYYY-MM-DD`. */
export type TripRow = Omit<Selectable<TripTable>, 'business_date'> & { business_date: string };
export type TripLocationRow = Selectable<TripLocationTable>;

/** The trips of an organisation (aliased `t`), each row as the representation needs it. */
export function tripQuery(db: Db, organizationId: string): ListQuery<TripRow> {
  return db
    .selectFrom('trips as t')
    .select([
      't.organization_id',
      't.id',
      't.number',
      't.status',
      't.source',
      't.van_location_id',
      't.bad_stock_location_id',
      't.warehouse_location_id',
      't.salesperson_id',
      't.route_id',
      't.departed_at',
      't.returned_at',
      't.closed_at',
      't.created_at',
      't.updated_at',
      // A DATE as its calendar string: pg would make it a Date at local midnight, which can shift the day.
      sql<string>`to_char(t.business_date, 'YYYY-MM-DD')`.as('business_date'),
    ])
    .where('t.organization_id', '=', organizationId) as unknown as ListQuery<TripRow>;
}

export async function findTrip(db: Db, organizationId: string, id: string): Promise<TripRow | null> {
  return (
    ((await tripQuery(db, organizationId).where('t.id', '=', id).executeTakeFirst()) as TripRow | undefined) ?? null
  );
}

/** The trail of one trip (aliased `t`), as a feed over (updated_at, id). */
export function trailQuery(db: Db, organizationId: string, tripId: string): ListQuery<TripLocationRow> {
  return db
    .selectFrom('trip_locations as t')
    .selectAll('t')
    .where('t.organization_id', '=', organizationId)
    .where('t.trip_id', '=', tripId) as unknown as ListQuery<TripLocationRow>;
}
