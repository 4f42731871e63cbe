// The exact JSON of a journey plan (spec: components/schemas/JourneyPlan).
import type { components } from '../../../generated/api-types.js';
import type { JourneyPlanRow } from './repository.js';

export type JourneyPlan = components['schemas']['JourneyPlan'];
type Visit = components['schemas']['JourneyPlanVisit'];

export function toJourneyPlan(row: JourneyPlanRow, visits: Visit[]): JourneyPlan {
  return {
    id: row.id,
    routeId: row.route_id,
    visits,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
