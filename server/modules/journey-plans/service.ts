// The rules of journey plans: a PUT replaces a route's whole plan in one transaction; the route and every
// customer must be the organisation's; one visit per weekday and sequence, one per customer and weekday; every
// problem is reported at once and nothing changes on any of them. (Weekly/biweekly parity is the spec's rule.)
import type { components } from '../../../generated/api-types.js';
import type { Actor } from '../../platform/access/actor.js';
import type { Db, Tx } from '../../platform/database/transaction.js';
import { ApiError, type FieldError } from '../../platform/errors/api-error.js';
import { recordEvent } from '../../platform/events/outbox.js';
import type { ListRequest, Page } from '../../platform/lists/page.js';
import { findRow, listRows } from '../../platform/resources/table.js';
import { toJourneyPlan, type JourneyPlan } from './representation.js';
import {
  existingReferences,
  JOURNEY_PLAN_RESOURCE,
  journeyPlanFilters,
  journeyPlanTable,
  replacePlan,
  visitsOf,
} from './repository.js';

type JourneyPlanReplace = components['schemas']['JourneyPlanReplace'];
type Visit = components['schemas']['JourneyPlanVisit'];

const WEEKDAYS = ['', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

export async function listJourneyPlans(
  db: Db,
  actor: Actor,
  request: ListRequest,
  query: Record<string, string | undefined>,
): Promise<Page<JourneyPlan>> {
  const page = await listRows(db, journeyPlanTable, actor.organization.id, request, journeyPlanFilters(query));
  const visits =
    page.rows.length === 0
      ? new Map<string, Visit[]>()
      : await visitsOf(
          db,
          actor.organization.id,
          page.rows.map((row) => row.id),
        );
  return { ...page, rows: page.rows.map((row) => toJourneyPlan(row, visits.get(row.id) ?? [])) };
}

export async function getJourneyPlan(db: Db, actor: Actor, id: string): Promise<JourneyPlan> {
  const row = await findRow(db, journeyPlanTable, actor.organization.id, id);
  if (!row) throw new ApiError('not_found', `No journey plan ${id} in this organisation.`);
  return toJourneyPlan(row, (await visitsOf(db, actor.organization.id, [row.id])).get(row.id) ?? []);
}

/** Replaces the route's plan whole; `created` when the route had none. Writes journey_plan.updated. */
export async function replaceJourneyPlan(
  tx: Tx,
  actor: Actor,
  body: JourneyPlanReplace,
): Promise<{ created: boolean; plan: JourneyPlan }> {
  const visits: Visit[] = body.visits.map((visit) => ({
    customerId: visit.customerId,
    weekday: visit.weekday,
    sequence: visit.sequence,
    frequency: visit.frequency,
    weekParity: visit.frequency === 'biweekly' ? (visit.weekParity ?? null) : null,
  }));
  const references = await existingReferences(tx, actor.organization.id, body.routeId, [
    ...new Set(visits.map((visit) => visit.customerId)),
  ]);
  const errors: FieldError[] = [];
  if (!references.routeExists) {
    errors.push({
      field: '/routeId',
      code: 'route_not_found',
      message: `no route ${body.routeId} in this organisation`,
    });
  }
  visits.forEach((visit, i) => {
    if (!references.customerIds.has(visit.customerId)) {
      errors.push({
        field: `/visits/${i}/customerId`,
        code: 'customer_not_found',
        message: `no customer ${visit.customerId} in this organisation`,
      });
    }
  });
  errors.push(...duplicateVisits(visits));
  if (errors.length > 0) {
    const unknownCustomers = errors.some((error) => error.code === 'customer_not_found');
    throw new ApiError(
      unknownCustomers ? 'customer_not_found' : 'business_rule',
      `The journey plan cannot be saved: ${errors.length} problem${errors.length === 1 ? '' : 's'}, listed in errors[]. Nothing was changed.`,
      errors,
    );
  }
  const { row, created } = await replacePlan(tx, actor.organization.id, body.routeId, visits);
  await recordEvent(tx, actor.organization.id, 'journey_plan.updated', JOURNEY_PLAN_RESOURCE, row.id);
  const ordered = [...visits].sort((a, b) => a.weekday - b.weekday || a.sequence - b.sequence);
  return { created, plan: toJourneyPlan(row, ordered) };
}

/** Visits that share a weekday and sequence, or a customer and weekday: each clash names both rows. */
function duplicateVisits(visits: Visit[]): FieldError[] {
  const errors: FieldError[] = [];
  const bySlot = new Map<string, number>();
  const byCustomerDay = new Map<string, number>();
  visits.forEach((visit, i) => {
    const day = WEEKDAYS[visit.weekday];
    const slot = `${visit.weekday}:${visit.sequence}`;
    const first = bySlot.get(slot);
    if (first === undefined) bySlot.set(slot, i);
    else {
      errors.push(
        {
          field: `/visits/${first}/sequence`,
          code: 'duplicate_visit',
          message: `${day} sequence ${visit.sequence} is also given by /visits/${i}`,
        },
        {
          field: `/visits/${i}/sequence`,
          code: 'duplicate_visit',
          message: `${day} sequence ${visit.sequence} is already given by /visits/${first}`,
        },
      );
    }
    const customerDay = `${visit.weekday}:${visit.customerId}`;
    const firstOfCustomer = byCustomerDay.get(customerDay);
    if (firstOfCustomer === undefined) byCustomerDay.set(customerDay, i);
    else {
      errors.push(
        {
          field: `/visits/${firstOfCustomer}/customerId`,
          code: 'duplicate_visit',
          message: `customer ${visit.customerId} is also visited on ${day} by /visits/${i}`,
        },
        {
          field: `/visits/${i}/customerId`,
          code: 'duplicate_visit',
          message: `customer ${visit.customerId} is already visited on ${day} by /visits/${firstOfCustomer}`,
        },
      );
    }
  });
  return errors;
}
