// The rules of locations: kind and stock condition follow from the code, the code is unique (repository.ts),
// a route reference must be a route of the organisation and belongs on vans only, and every change writes its
// event in the same transaction.
import type { components } from '../../../generated/api-types.js';
import type { Actor } from '../../platform/access/actor.js';
import type { Tx } from '../../platform/database/transaction.js';
import { resourceService, type ResourceService } from '../../platform/resources/service.js';
import { columnsOf } from '../../platform/resources/master-data.js';
import { ROUTES, requireReference, referenceProblem } from '../../platform/resources/references.js';
import type { ColumnsOf } from '../../platform/resources/table.js';
import { meaningOfCode } from './codes.js';
import { toLocation, type Location } from './representation.js';
import { LOCATION_FIELDS, locationTable } from './repository.js';

type LocationUpsert = components['schemas']['LocationUpsert'];

type LocationColumns = ColumnsOf<'locations'>;

const base = resourceService({
  table: locationTable,
  idPrefix: 'loc',
  events: { created: 'location.created', updated: 'location.updated' },
  defaults: { active: true, route_id: null },
  requiredOnCreate: ['code', 'name'],
  toColumns,
  represent: (row, codes) => toLocation(row, codes),
});

/**
 * Only a van belongs to a route. The rule concerns the record as it ends up (an update may change the code
 * and keep the route, or set the route and keep the code), so it is checked on the written record, inside the
 * transaction: refusing it rolls the write back.
 */
function refuseRouteOffVan(location: Location, fields: LocationUpsert): Location {
  if (location.kind !== 'van' && location.routeId !== null) {
    const field = fields.routeId !== undefined || fields.code === undefined ? '/routeId' : '/code';
    throw referenceProblem(
      field,
      `Only a van (code V_<routeCode>-G or -B) belongs to a route; ${location.code} is a ${location.kind === 'main' ? 'main warehouse' : 'damages store'}.`,
    );
  }
  return location;
}

export const locations: ResourceService<LocationUpsert, Location> = {
  ...base,
  create: async (tx, actor, fields, externalCodes) =>
    refuseRouteOffVan(await base.create(tx, actor, fields, externalCodes), fields),
  change: async (tx, actor, id, fields) => refuseRouteOffVan(await base.change(tx, actor, id, fields), fields),
  async upsertByCode(tx, actor, system, code, fields) {
    const result = await base.upsertByCode(tx, actor, system, code, fields);
    refuseRouteOffVan(result.body, fields);
    return result;
  },
};

async function toColumns(tx: Tx, actor: Actor, fields: LocationUpsert): Promise<Partial<LocationColumns>> {
  await requireReference(tx, actor.organization.id, ROUTES, fields.routeId, '/routeId');
  const columns = columnsOf<LocationColumns, typeof LOCATION_FIELDS>(fields, LOCATION_FIELDS);
  if (fields.code === undefined) return columns;
  const { kind, stockCondition } = meaningOfCode(fields.code);
  return { ...columns, kind, stock_condition: stockCondition };
}
