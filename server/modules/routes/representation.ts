// The exact JSON of a route (spec: components/schemas/Route) and of its outlets (RouteOutlets).
import type { components } from '../../../generated/api-types.js';
import { fieldsOf, recordMetadata } from '../../platform/resources/master-data.js';
import { ROUTE_FIELDS, type RouteRow } from './repository.js';

export type Route = components['schemas']['Route'];
export type RouteOutlets = components['schemas']['RouteOutlets'];

export function toRoute(row: RouteRow, externalCodes: Record<string, string>): Route {
  return { id: row.id, ...fieldsOf(row, ROUTE_FIELDS), ...recordMetadata(row, externalCodes) };
}
