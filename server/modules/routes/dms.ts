// Salesmen from the DMS: the salesperson, the route, its outlets and its journey plan, each through its module's own
// functions (the same rules and events as REST; declared in this module's manifest's dmsHandlers, since the document
// is keyed by its route code; written with the DMS's kit). A new version updates them.
import type { Tx } from '../../platform/database/transaction.js';
import { replaceJourneyPlan } from '../journey-plans/service.js';
import { replaceRouteOutlets } from './outlets.js';
import { routes } from './service.js';
import { salespeople } from '../salespeople/service.js';
import type { BodyOf } from '../dms/canonical.js';
import { DmsRejection, waitKeys } from '../dms/reasons.js';
import { customerByCode } from '../dms/handlers/lookup.js';
import type { DocumentHandler } from '../dms/handlers/types.js';
import { activeOf, idByCode } from '../dms/handlers/master-data.js';

type DmsVisit = NonNullable<BodyOf<'DmsSalesmanDocument'>['visits']>[number];

/**
 * The journey plan's visits of a salesman document, as the journey-plans module takes them (PUT /journey-plans, one
 * posting path): customers by outlet code (not received yet: a wait), each weekday's sequence in the order listed.
 * What the module would refuse by its field names (a biweekly visit without its parity) is refused here naming the
 * DMS visit.
 */
async function journeyPlanVisits(tx: Tx, organizationId: string, visits: readonly DmsVisit[]) {
  const next = new Map<number, number>();
  const planned = [];
  for (const [i, visit] of visits.entries()) {
    const frequency = visit.frequency ?? 'weekly';
    if (frequency === 'biweekly' && visit.weekParity === undefined)
      throw new DmsRejection(
        'R09',
        `Visit ${i + 1} (${visit.outletCode}) is biweekly without weekParity (0: even ISO weeks, 1: odd ones).`,
      );
    const sequence = (next.get(visit.weekday) ?? 0) + 1;
    next.set(visit.weekday, sequence);
    planned.push({
      customerId: (await customerByCode(tx, organizationId, visit.outletCode)).id,
      weekday: visit.weekday,
      sequence,
      frequency,
      weekParity: frequency === 'biweekly' ? visit.weekParity! : null,
    });
  }
  return planned;
}

export const salesman: DocumentHandler = {
  async apply(tx, context, document) {
    const org = context.actor.organization.id;
    const body = document.document.body as BodyOf<'DmsSalesmanDocument'>;
    const outletIds: string[] = [];
    for (const code of body.outlets ?? []) outletIds.push((await customerByCode(tx, org, code)).id);
    const visits = body.visits === undefined ? undefined : await journeyPlanVisits(tx, org, body.visits);
    const active = activeOf(document.status);
    const salespersonFields = {
      salesmanCode: body.salesmanCode,
      name: body.salesmanName,
      active,
      ...(body.phone !== undefined ? { phone: body.phone } : {}),
    };
    const existingPerson = await idByCode(tx, org, 'salespeople', 'salesman_code', body.salesmanCode);
    const person = existingPerson
      ? await salespeople.change(tx, context.actor, existingPerson, salespersonFields)
      : await salespeople.create(tx, context.actor, salespersonFields, { dms: body.salesmanCode });
    const van = await tx
      .selectFrom('locations')
      .select('id')
      .where('organization_id', '=', org)
      .where('code', '=', `V_${document.number}-G`)
      .executeTakeFirst();
    const routeFields = {
      routeCode: document.number,
      name: body.routeName,
      salespersonId: (person as { id: string }).id,
      active,
      ...(van ? { vanLocationId: van.id } : {}),
    };
    const existingRoute = await idByCode(tx, org, 'routes', 'route_code', document.number);
    const route = existingRoute
      ? await routes.change(tx, context.actor, existingRoute, routeFields)
      : await routes.create(tx, context.actor, routeFields, { dms: document.number });
    const routeId = (route as { id: string }).id;
    if (body.outlets !== undefined) await replaceRouteOutlets(tx, context.actor, routeId, outletIds);
    if (visits !== undefined) await replaceJourneyPlan(tx, context.actor, { routeId, visits });
    return { table: 'routes', id: routeId, provides: [waitKeys.route(document.number)] };
  },
};
