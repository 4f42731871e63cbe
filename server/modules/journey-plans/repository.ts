// The journey_plans table (one row per route) and its visits. Every statement is scoped by organization_id
// first (see docs/decisions/0005-tenancy-organization-id-first.md); lists and reads by id come from platform/resources/table.ts.
import { sql, type Selectable } from 'kysely';
import type { components } from '../../../generated/api-types.js';
import type { JourneyPlan as JourneyPlanTable } from '../../../generated/kysely/types.js';
import type { Db, Tx } from '../../platform/database/transaction.js';
import { newId } from '../../platform/ids.js';
import type { Filter } from '../../platform/lists/page.js';
import { equals } from '../../platform/resources/filters.js';
import type { TableDefinition } from '../../platform/resources/table.js';

export const JOURNEY_PLAN_RESOURCE = 'journey_plan';

type Visit = components['schemas']['JourneyPlanVisit'];

export type JourneyPlanRow = Selectable<JourneyPlanTable>;

export const journeyPlanTable: TableDefinition<'journey_plans', JourneyPlanRow> = {
  externalCodes: false,
  resource: JOURNEY_PLAN_RESOURCE,
  table: 'journey_plans',
  listName: 'journey-plans',
  select: (query) => query.selectAll('t'),
};

export function journeyPlanFilters(query: Record<string, string | undefined>): Record<string, Filter | undefined> {
  return { routeId: equals('journey_plans', 'route_id', query.routeId) };
}

/**
 * The visits of several plans in one query, already in their JSON shape and order (weekday, then sequence):
 * Postgres builds the arrays, so a page of large plans costs one round trip and one JSON.parse per plan.
 */
export async function visitsOf(db: Db, organizationId: string, planIds: string[]): Promise<Map<string, Visit[]>> {
  const rows = await db
    .selectFrom('journey_plan_visits as v')
    // An ordered json_agg of json_build_object has no builder form; the columns are this table's own.
    .select([
      'v.journey_plan_id',
      sql<Visit[]>`json_agg(json_build_object('customerId', v.customer_id, 'weekday', v.weekday, 'sequence', v.sequence,
      'frequency', v.frequency, 'weekParity', v.week_parity) ORDER BY v.weekday, v.sequence)`.as('visits'),
    ])
    .where('v.organization_id', '=', organizationId)
    .where('v.journey_plan_id', 'in', planIds)
    .groupBy('v.journey_plan_id')
    .execute();
  return new Map(rows.map((row) => [row.journey_plan_id, row.visits]));
}

/** Which of the references a plan makes exist in the organisation: its route, and which of its customers. */
export async function existingReferences(
  db: Db,
  organizationId: string,
  routeId: string,
  customerIds: string[],
): Promise<{ routeExists: boolean; customerIds: Set<string> }> {
  const route = await db
    .selectFrom('routes')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('id', '=', routeId)
    .executeTakeFirst();
  const customers =
    customerIds.length === 0
      ? []
      : await db
          .selectFrom('customers')
          .select('id')
          .where('organization_id', '=', organizationId)
          .where('id', 'in', customerIds)
          .execute();
  return { routeExists: route !== undefined, customerIds: new Set(customers.map((row) => row.id)) };
}

/**
 * Creates the route's plan row or moves its updated_at, atomically (two concurrent first PUTs make one plan),
 * then replaces its visits whole.
 */
export async function replacePlan(
  tx: Tx,
  organizationId: string,
  routeId: string,
  visits: Visit[],
): Promise<{ row: JourneyPlanRow; created: boolean }> {
  const { created, ...row } = await tx
    .insertInto('journey_plans')
    .values((eb) => ({
      organization_id: organizationId,
      id: newId('jpl'),
      route_id: routeId,
      created_at: eb.fn('now'),
      updated_at: eb.fn('now'),
    }))
    .onConflict((conflict) =>
      conflict.columns(['organization_id', 'route_id']).doUpdateSet((eb) => ({ updated_at: eb.fn('now') })),
    )
    // xmax = 0 only on a row this statement inserted: the builder has no name for the system column.
    .returning([
      'organization_id',
      'id',
      'route_id',
      'created_at',
      'updated_at',
      sql<boolean>`(xmax = 0)`.as('created'),
    ])
    .executeTakeFirstOrThrow();
  if (!created)
    await tx
      .deleteFrom('journey_plan_visits')
      .where('organization_id', '=', organizationId)
      .where('journey_plan_id', '=', row.id)
      .execute();
  if (visits.length > 0) {
    // One multi-row insert for the whole plan (up to 5000 visits).
    await tx
      .insertInto('journey_plan_visits')
      .values(
        visits.map((visit) => ({
          organization_id: organizationId,
          journey_plan_id: row.id,
          customer_id: visit.customerId,
          weekday: visit.weekday,
          sequence: visit.sequence,
          frequency: visit.frequency,
          week_parity: visit.weekParity ?? null,
        })),
      )
      .execute();
  }
  return { row, created };
}
