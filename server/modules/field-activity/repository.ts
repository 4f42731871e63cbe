// The field activity tables (visits, outlet_activities, competitor_observations, photos): the rows the
// representation reads, the list queries and their filters. Every statement is scoped by organization_id first
// (docs/decisions/0005-tenancy-organization-id-first.md).
import { expressionBuilder, type ExpressionBuilder } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';
import type { Db } from '../../platform/database/transaction.js';
import type { Filter, ListQuery } from '../../platform/lists/page.js';

export const VISIT_RESOURCE = 'visit';
export const ACTIVITY_RESOURCE = 'outlet_activity';
export const OBSERVATION_RESOURCE = 'competitor_observation';

type Listed = 'visits' | 'outlet_activities' | 'competitor_observations';
type Over<TB extends Listed> = ExpressionBuilder<DB & { t: DB[TB] }, 't'>;

/** A DATE as its calendar day (pg would turn it into a Date at local midnight). */
const day = <TB extends Listed>(eb: Over<TB>, column: 't.visit_date' | 't.performed_on' | 't.observed_at') =>
  eb.fn<string>('to_char', [eb.ref(column as never), eb.val('YYYY-MM-DD')]);

export interface VisitRow {
  id: string;
  customer_id: string;
  salesperson_id: string;
  trip_id: string | null;
  visit_date: string;
  check_in_at: Date;
  check_out_at: Date | null;
  outcome: string;
  no_sale_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface ActivityRow {
  id: string;
  customer_id: string;
  visit_id: string | null;
  salesperson_id: string;
  kind: string;
  description: string | null;
  performed_on: string;
  created_at: Date;
  updated_at: Date;
}

export interface ObservationRow {
  id: string;
  site_kind: string;
  customer_id: string;
  brand: string;
  is_own_brand: boolean;
  quantity: number;
  observed_on: string;
  observed_by: string;
  visit_id: string | null;
  photo_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export function visitQuery(db: Db, organizationId: string): ListQuery<VisitRow> {
  return db
    .selectFrom('visits as t')
    .where('t.organization_id', '=', organizationId)
    .select((eb) => [
      't.id',
      't.customer_id',
      't.salesperson_id',
      't.trip_id',
      day(eb, 't.visit_date').as('visit_date'),
      't.check_in_at',
      't.check_out_at',
      't.outcome',
      't.no_sale_reason',
      't.created_at',
      't.updated_at',
    ]) as unknown as ListQuery<VisitRow>;
}

export function activityQuery(db: Db, organizationId: string): ListQuery<ActivityRow> {
  return db
    .selectFrom('outlet_activities as t')
    .where('t.organization_id', '=', organizationId)
    .select((eb) => [
      't.id',
      't.customer_id',
      't.visit_id',
      't.salesperson_id',
      't.kind',
      't.description',
      day(eb, 't.performed_on').as('performed_on'),
      't.created_at',
      't.updated_at',
    ]) as unknown as ListQuery<ActivityRow>;
}

/** `observed_on` is the calendar day of `t.observed_at`, the list's order key (the column keeps its own name). */
export function observationQuery(db: Db, organizationId: string): ListQuery<ObservationRow> {
  return db
    .selectFrom('competitor_observations as t')
    .where('t.organization_id', '=', organizationId)
    .select((eb) => [
      't.id',
      't.site_kind',
      't.customer_id',
      't.brand',
      't.is_own_brand',
      't.quantity',
      day(eb, 't.observed_at').as('observed_on'),
      't.observed_by',
      't.visit_id',
      't.photo_id',
      't.created_at',
      't.updated_at',
    ]) as unknown as ListQuery<ObservationRow>;
}

/** Observations that carry this code in any of the caller's code systems. */
export function observationHasCode(code: string | undefined): Filter | undefined {
  if (code === undefined) return undefined;
  const value = code.trim();
  const eb = expressionBuilder<DB & { t: DB['competitor_observations'] }, 't'>();
  const holders = eb
    .selectFrom('external_codes as e')
    .select('e.record_id')
    .whereRef('e.organization_id', '=', 't.organization_id')
    .where('e.resource', '=', OBSERVATION_RESOURCE)
    .where('e.code', '=', value);
  return { condition: eb('t.id', 'in', holders), value };
}

export interface PhotoRow {
  content_type: string;
  bytes: Buffer;
}

export async function findPhoto(db: Db, organizationId: string, id: string): Promise<PhotoRow | null> {
  return (
    (await db
      .selectFrom('photos')
      .select(['content_type', 'bytes'])
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst()) ?? null
  );
}
