// Replacing a route's outlets: the customers module moves its customers (a module writes only its own tables);
// the route itself is touched (updatedAt, route.updated), all in the caller's transaction.
import type { Actor } from '../../platform/access/actor.js';
import type { Tx } from '../../platform/database/transaction.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { recordEvent } from '../../platform/events/outbox.js';
import { findRow, updateRow } from '../../platform/resources/table.js';
import { assignRouteOutlets } from '../customers/route-assignment.js';
import type { RouteOutlets } from './representation.js';
import { routeTable } from './repository.js';

export async function replaceRouteOutlets(
  tx: Tx,
  actor: Actor,
  routeId: string,
  customerIds: string[],
): Promise<RouteOutlets> {
  const organizationId = actor.organization.id;
  // Locking the route serialises two replacements of the same route.
  const route = await findRow(tx, routeTable, organizationId, routeId, true);
  if (!route) throw new ApiError('not_found', `No route ${routeId} in this organisation.`);
  await assignRouteOutlets(tx, actor, routeId, customerIds);
  const updated = await updateRow(tx, routeTable, organizationId, routeId, {});
  await recordEvent(tx, organizationId, 'route.updated', routeTable.resource, routeId);
  return { routeId, customerIds: [...customerIds].sort(), updatedAt: updated.updated_at.toISOString() };
}
