// The journey_plans table (one row per route) and its visits. Every statement is scoped by organization_id
// first (see docs/decisions/0005-tenancy-organization-id-first.md); lists and reads by id come from platform/resources/table.ts.
import type pg from 'pg';
import type { components } from '../../../generated/api-types.js';
import type { Tx } from '../../platform/database/transaction.js';
import { newId } from '../../platform/ids.js';
import type { Filter } from '../../platform/lists/page.js';
import { equals, type TableDefinition } from '../../platform/resources/table.js';

export const JOURNEY_PLAN_RESOURCE = 'journey_plan';

type Visit = components['schemas']['JourneyPlanVisit'];
type Db = pg.Pool | Tx;

export interface JourneyPlanRow {
  organization_id: string;
  id: string;
  route_id: string;
  created_at: Date;
  updated_at: Date;
}

export const journeyPlanTable: TableDefinition<{ route_id: string }> = {
  externalCodes: false,
  resource: JOURNEY_PLAN_RESOURCE,
  table: 'journey_plans',
  listName: 'journey-plans',
  selectColumns: 't.organization_id, t.id, t.route_id, t.created_at, t.updated_at',
  writable: ['route_id'],
};

export function journeyPlanFilters(query: Record<string, string | undefined>): Record<string, Filter | undefined> {
  return { routeId: equals('route_id', query.routeId) };
}

/**
 * The visits of several plans in one query, already in their JSON shape and order (weekday, then sequence):
 * Postgres builds the arrays, so a page of large plans costs one round trip and one JSON.parse per plan.
 */
export async function visitsOf(db: Db, organizationId: string, planIds: string[]): Promise<Map<string, Visit[]>> {
  const { rows } = await db.query<{ journey_plan_id: string; visits: Visit[] }>(
    `SELECT v.journey_plan_id,
            json_agg(json_build_object('customerId', v.customer_id, 'weekday', v.weekday, 'sequence', v.sequence,
                     'frequency', v.frequency, 'weekParity', v.week_parity) ORDER BY v.weekday, v.sequence) AS visits
       FROM journey_plan_visits v
      WHERE v.organization_id = $1 AND v.journey_plan_id = ANY($2::text[])
      GROUP BY v.journey_plan_id`,
    [organizationId, planIds],
  );
  return new Map(rows.map((row) => [row.journey_plan_id, row.visits]));
}

/** Which of the references a plan makes exist in the organisation: its route, and which of its customers. */
export async function existingReferences(db: Db, organizationId: string, routeId: string, customerIds: string[]): Promise<{ routeExists: boolean; customerIds: Set<string> }> {
  const { rows } = await db.query<{ route_exists: boolean; customer_ids: string[] }>(
    `SELECT EXISTS (SELECT 1 FROM routes WHERE organization_id = $1 AND id = $2) AS route_exists,
            ARRAY(SELECT id FROM customers WHERE organization_id = $1 AND id = ANY($3::text[])) AS customer_ids`,
    [organizationId, routeId, customerIds],
  );
  return { routeExists: rows[0]!.route_exists, customerIds: new Set(rows[0]!.customer_ids) };
}

/**
 * Creates the route's plan row or moves its updated_at, atomically (two concurrent first PUTs make one plan),
 * then replaces its visits whole.
 */
export async function replacePlan(tx: Tx, organizationId: string, routeId: string, visits: Visit[]): Promise<{ row: JourneyPlanRow; created: boolean }> {
  const { rows } = await tx.query<JourneyPlanRow & { created: boolean }>(
    `INSERT INTO journey_plans (organization_id, id, route_id, created_at, updated_at) VALUES ($1, $2, $3, now(), now())
     ON CONFLICT (organization_id, route_id) DO UPDATE SET updated_at = now()
     RETURNING organization_id, id, route_id, created_at, updated_at, (xmax = 0) AS created`,
    [organizationId, newId('jpl'), routeId],
  );
  const { created, ...row } = rows[0]!;
  if (!created) await tx.query('DELETE FROM journey_plan_visits WHERE organization_id = $1 AND journey_plan_id = $2', [organizationId, row.id]);
  if (visits.length > 0) {
    await tx.query(
      `INSERT INTO journey_plan_visits (organization_id, journey_plan_id, customer_id, weekday, sequence, frequency, week_parity)
       SELECT $1, $2, x."customerId", x.weekday, x.sequence, x.frequency, x."weekParity"
         FROM jsonb_to_recordset($3::jsonb) AS x("customerId" text, weekday smallint, sequence int, frequency text, "weekParity" smallint)`,
      [organizationId, row.id, JSON.stringify(visits)],
    );
  }
  return { row, created };
}
