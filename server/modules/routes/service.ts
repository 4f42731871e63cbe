// The rules of routes: the route code is unique (repository.ts), the salesperson must be one of the
// organisation's and the van a van location of the organisation, and every change writes its event in the
// same transaction. The outlets of a route are replaced by outlets.ts.
import type { components } from '../../../generated/api-types.js';
import type { Actor } from '../../platform/access/actor.js';
import type { Tx } from '../../platform/database/transaction.js';
import { resourceService } from '../../platform/resources/service.js';
import { columnsOf } from '../../platform/resources/master-data.js';
import { SALESPEOPLE, requireReference, referenceProblem } from '../../platform/resources/references.js';
import type { ColumnsOf } from '../../platform/resources/table.js';
import { referencedLocation } from '../locations/repository.js';
import { toRoute } from './representation.js';
import { ROUTE_FIELDS, routeTable } from './repository.js';

type RouteUpsert = components['schemas']['RouteUpsert'];

type RouteColumns = ColumnsOf<'routes'>;

export const routes = resourceService({
  table: routeTable,
  idPrefix: 'rte',
  events: { created: 'route.created', updated: 'route.updated' },
  defaults: { salesperson_id: null, van_location_id: null, active: true },
  requiredOnCreate: ['routeCode', 'name'],
  toColumns,
  represent: (row, codes) => toRoute(row, codes),
});

async function toColumns(tx: Tx, actor: Actor, fields: RouteUpsert): Promise<Partial<RouteColumns>> {
  await requireReference(tx, actor.organization.id, SALESPEOPLE, fields.salespersonId, '/salespersonId');
  const van = await referencedLocation(tx, actor.organization.id, fields.vanLocationId, '/vanLocationId');
  if (van && van.kind !== 'van') {
    throw referenceProblem(
      '/vanLocationId',
      `A route's van must be a van location (code V_<routeCode>-G or -B); ${van.code} is not.`,
    );
  }
  return columnsOf<RouteColumns, typeof ROUTE_FIELDS>(fields, ROUTE_FIELDS);
}
