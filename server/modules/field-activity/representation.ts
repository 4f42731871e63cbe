// The exact JSON of visits, outlet activities and competitor observations (spec: components/schemas/Visit,
// OutletActivity, CompetitorObservation). An observation's photoUrl is personal: only with customers:pii.
import type { components } from '../../../generated/api-types.js';
import type { ActivityRow, ObservationRow, VisitRow } from './repository.js';

export type Visit = components['schemas']['Visit'];
export type OutletActivity = components['schemas']['OutletActivity'];
export type CompetitorObservation = components['schemas']['CompetitorObservation'];

export function toVisit(row: VisitRow): Visit {
  return {
    id: row.id,
    customerId: row.customer_id,
    salespersonId: row.salesperson_id,
    tripId: row.trip_id,
    visitDate: row.visit_date,
    checkInAt: row.check_in_at.toISOString(),
    checkOutAt: row.check_out_at === null ? null : row.check_out_at.toISOString(),
    outcome: row.outcome as Visit['outcome'],
    noSaleReason: row.no_sale_reason,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function toOutletActivity(row: ActivityRow): OutletActivity {
  return {
    id: row.id,
    customerId: row.customer_id,
    visitId: row.visit_id,
    salespersonId: row.salesperson_id,
    kind: row.kind as OutletActivity['kind'],
    description: row.description,
    performedOn: row.performed_on,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/**
 * `photoUrl` is present only when the reader may see personal data: `photoUrlOf` is then given (null for an
 * observation without a photo), and absent otherwise, so that the field is omitted, not null.
 */
export function toCompetitorObservation(
  row: ObservationRow,
  photoUrlOf?: (photoId: string) => string,
): CompetitorObservation {
  const observation: CompetitorObservation = {
    id: row.id,
    siteKind: row.site_kind as CompetitorObservation['siteKind'],
    customerId: row.customer_id,
    brand: row.brand,
    isOwnBrand: row.is_own_brand,
    quantity: row.quantity,
    observedAt: row.observed_on,
    observedBy: row.observed_by,
    visitId: row.visit_id!, // every observation is recorded on a visit (service.ts)
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
  if (photoUrlOf) observation.photoUrl = row.photo_id === null ? null : photoUrlOf(row.photo_id);
  return observation;
}
