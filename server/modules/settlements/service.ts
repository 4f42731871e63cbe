// Trip settlements' reads (GET /trips/{id}/settlement, GET /settlements, the webhook of settlement.closed); their
// posting functions are documents.ts's.
import { expressionBuilder } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';
import type { Actor } from '../../platform/access/actor.js';
import type { Db } from '../../platform/database/transaction.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { requireFilterRecords } from '../../platform/lists/filter-records.js';
import { readPage, type ListRequest, type Page } from '../../platform/lists/page.js';
import { equals, when } from '../../platform/resources/filters.js';
import { requireDeliveryModule } from '../trips/documents.js';
import { findTrip } from '../trips/repository.js';
import { MAX_SHEETS_PER_PAGE, SETTLEMENT } from './documents.js';
import { findSettlement, settlementOfTrip, settlementQuery, type SettlementRow } from './repository.js';
import { readSheet, type Settlement } from './sheet.js';

export async function getTripSettlement(db: Db, actor: Actor, tripId: string): Promise<Settlement> {
  requireDeliveryModule(actor);
  const organizationId = actor.organization.id;
  const trip = await findTrip(db, organizationId, tripId);
  if (!trip) throw new ApiError('not_found', `No trip ${tripId} in this organisation.`);
  return readSheet(
    db,
    organizationId,
    trip,
    await settlementOfTrip(db, organizationId, trip.id),
    actor.organization.baseCurrency,
  );
}

export interface SettlementFilters {
  salespersonId?: string;
  tripId?: string;
}

/** The closed settlements, at most 5 full sheets a page, newest first (or oldest change first with updatedSince). */
export async function listSettlements(
  db: Db,
  actor: Actor,
  request: ListRequest,
  filters: SettlementFilters,
): Promise<Page<Settlement>> {
  requireDeliveryModule(actor);
  const organizationId = actor.organization.id;
  await requireFilterRecords(db, organizationId, [
    { parameter: 'salespersonId', table: 'salespeople', what: 'salesperson', id: filters.salespersonId },
    { parameter: 'tripId', table: 'trips', what: 'trip', id: filters.tripId },
  ]);
  const eb = expressionBuilder<DB & { t: DB['settlements'] }, 't'>();
  const page = await readPage(
    SETTLEMENT,
    settlementQuery(db, organizationId),
    organizationId,
    { ...request, limit: Math.min(request.limit ?? MAX_SHEETS_PER_PAGE, MAX_SHEETS_PER_PAGE) },
    {
      tripId: equals('settlements', 'trip_id', filters.tripId),
      // The salesperson is the trip's: the settlements whose trip is theirs.
      salespersonId: when(
        filters.salespersonId,
        eb(
          't.trip_id',
          'in',
          eb
            .selectFrom('trips')
            .select('trips.id')
            .whereRef('trips.organization_id', '=', 't.organization_id')
            .where('trips.salesperson_id', '=', filters.salespersonId ?? ''),
        ),
      ),
    },
  );
  const rows: Settlement[] = [];
  for (const row of page.rows) rows.push(await sheetOf(db, actor, row));
  return { ...page, rows };
}

async function sheetOf(db: Db, actor: Actor, settlement: SettlementRow): Promise<Settlement> {
  const trip = (await findTrip(db, actor.organization.id, settlement.trip_id))!;
  return readSheet(db, actor.organization.id, trip, settlement, actor.organization.baseCurrency);
}

/** A settlement as its webhook reads it (whatever the organisation's modules now are): null when it is not there. */
export async function readSettlementForWebhook(db: Db, actor: Actor, id: string): Promise<Settlement | null> {
  const settlement = await findSettlement(db, actor.organization.id, id);
  return settlement ? sheetOf(db, actor, settlement) : null;
}
