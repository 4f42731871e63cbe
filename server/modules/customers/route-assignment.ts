// Which route each customer is on, as the routes module sets it (PUT /routes/{id}/outlets): the customers table is
// this module's, so the routes module calls this function rather than writing it.
import type { Actor } from '../../platform/access/actor.js';
import type { Tx } from '../../platform/database/transaction.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { recordEvents } from '../../platform/events/outbox.js';
import { CUSTOMER_RESOURCE } from './repository.js';

/**
 * Puts exactly `customerIds` on the route: the customers listed move onto it, those on it that are not listed
 * leave it; each customer whose route changed gets its customer.updated event. Set-based (up to 5000 ids in a few
 * statements), in the caller's transaction. An id that is not a customer of the organisation is 422
 * customer_not_found naming it, and nothing is changed.
 */
export async function assignRouteOutlets(
  tx: Tx,
  actor: Actor,
  routeId: string,
  customerIds: readonly string[],
): Promise<void> {
  const organizationId = actor.organization.id;
  const known = new Set(
    customerIds.length === 0
      ? []
      : (
          await tx
            .selectFrom('customers')
            .select('id')
            .where('organization_id', '=', organizationId)
            .where('id', 'in', [...customerIds])
            .execute()
        ).map((row) => row.id),
  );
  const unknown = customerIds.map((id, index) => ({ id, index })).filter(({ id }) => !known.has(id));
  if (unknown.length > 0) {
    throw new ApiError(
      'customer_not_found',
      `${unknown.length} of the customer ids are not customers of this organisation; nothing was changed.`,
      unknown.map(({ index, id }) => ({
        field: `/customerIds/${index}`,
        code: 'customer_not_found',
        message: `no customer ${id} in this organisation`,
      })),
    );
  }

  // Rows are locked in id order first, so that two replacements sharing customers cannot deadlock.
  const affected = await tx
    .selectFrom('customers')
    .select(['id', 'route_id'])
    .where('organization_id', '=', organizationId)
    .where((eb) =>
      customerIds.length === 0
        ? eb('route_id', '=', routeId)
        : eb.or([eb('id', 'in', [...customerIds]), eb('route_id', '=', routeId)]),
    )
    .orderBy('id')
    .forUpdate()
    .execute();
  const listedIds = new Set(customerIds);
  const joining = affected.filter((row) => listedIds.has(row.id) && row.route_id !== routeId).map((row) => row.id);
  const leaving = affected.filter((row) => !listedIds.has(row.id) && row.route_id === routeId).map((row) => row.id);
  if (joining.length > 0) {
    await tx
      .updateTable('customers')
      .set((eb) => ({ route_id: routeId, updated_at: eb.fn('now') }))
      .where('organization_id', '=', organizationId)
      .where('id', 'in', joining)
      .execute();
  }
  if (leaving.length > 0) {
    await tx
      .updateTable('customers')
      .set((eb) => ({ route_id: null, updated_at: eb.fn('now') }))
      .where('organization_id', '=', organizationId)
      .where('id', 'in', leaving)
      .execute();
  }
  await recordEvents(tx, organizationId, 'customer.updated', CUSTOMER_RESOURCE, [...joining, ...leaving].sort());
}
