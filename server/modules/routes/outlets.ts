// Replacing a route's outlets: the customers listed move onto the route, the customers on it that are not
// listed leave it, all in the caller's transaction and set-based (up to 5000 ids in a few statements).
import type { CallerContext } from '../../platform/access/context.js';
import type { Tx } from '../../platform/database/transaction.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { recordEvent, recordEvents, type EventType } from '../../platform/events/outbox.js';
import { findRow, updateRow } from '../../platform/resources/table.js';
import { CUSTOMER_RESOURCE } from '../customers/repository.js';
import type { RouteOutlets } from './representation.js';
import { routeTable, type RouteColumns, type RouteRow } from './repository.js';

const CUSTOMER_UPDATED: EventType = 'customer.updated';

export async function replaceRouteOutlets(tx: Tx, caller: CallerContext, routeId: string, customerIds: string[]): Promise<RouteOutlets> {
  const { organizationId } = caller;
  // Locking the route serialises two replacements of the same route.
  const route = await findRow<RouteRow>(tx, routeTable, organizationId, routeId, true);
  if (!route) throw new ApiError('not_found', `No route ${routeId} in this organisation.`);

  const { rows: unknown } = await tx.query<{ index: string; id: string }>(
    `SELECT x.i - 1 AS index, x.id FROM unnest($2::text[]) WITH ORDINALITY AS x(id, i)
      WHERE NOT EXISTS (SELECT 1 FROM customers c WHERE c.organization_id = $1 AND c.id = x.id) ORDER BY x.i`,
    [organizationId, customerIds],
  );
  if (unknown.length > 0) {
    throw new ApiError('customer_not_found', `${unknown.length} of the customer ids are not customers of this organisation; nothing was changed.`,
      unknown.map(({ index, id }) => ({ field: `/customerIds/${index}`, code: 'customer_not_found', message: `no customer ${id} in this organisation` })));
  }

  // Rows are locked in id order first, so that two replacements sharing customers cannot deadlock.
  const { rows: changed } = await tx.query<{ id: string }>(
    `WITH locked AS (
       SELECT id FROM customers WHERE organization_id = $1 AND (id = ANY($3::text[]) OR route_id = $2) ORDER BY id FOR UPDATE)
     UPDATE customers c SET route_id = CASE WHEN c.id = ANY($3::text[]) THEN $2 ELSE NULL END, updated_at = now()
       FROM locked
      WHERE c.organization_id = $1 AND c.id = locked.id
        AND ((c.id = ANY($3::text[]) AND c.route_id IS DISTINCT FROM $2) OR (c.route_id = $2 AND NOT c.id = ANY($3::text[])))
     RETURNING c.id`,
    [organizationId, routeId, customerIds],
  );
  await recordEvents(tx, organizationId, CUSTOMER_UPDATED, CUSTOMER_RESOURCE, changed.map((row) => row.id));

  const updated = await updateRow<RouteRow, RouteColumns>(tx, routeTable, organizationId, routeId, {});
  await recordEvent(tx, organizationId, 'route.updated', routeTable.resource, routeId);
  return { routeId, customerIds: [...customerIds].sort(), updatedAt: updated.updated_at.toISOString() };
}
