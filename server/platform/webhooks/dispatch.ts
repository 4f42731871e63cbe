// Fan-out: event rows not yet dispatched become one delivery row per enabled endpoint that wants the event type,
// each with its first webhooks.deliver job, and the events are marked dispatched, all in one transaction (so a
// crash can never leave a delivery without its job, nor an event dispatched without its deliveries). Events are
// claimed with FOR UPDATE SKIP LOCKED, so several workers dispatch side by side without taking one event twice; each
// organisation's in its own turn. An endpoint only receives
// events created after it was added; event types without an object source (not delivered yet) are marked and
// skipped.
import { sql } from 'kysely';
import { inTransaction, type Db } from '../database/transaction.js';
import { newId } from '../ids.js';
import type { EnqueueDeliveries } from './types.js';

/** Organisations served in one pass at most (the others in the next, at once). */
const ORGANIZATIONS_PER_PASS = 100;

/** Dispatches up to `batch` events of each organisation with some; returns how many events and deliveries it handled. */
export async function dispatchEvents(
  db: Db,
  deliverableTypes: readonly string[],
  enqueue: EnqueueDeliveries,
  batch = 500,
): Promise<{ events: number; deliveries: number }> {
  return inTransaction(db, async (tx) => {
    // Up to `batch` of each organisation's oldest events, side by side (fair to every organisation, decision 0040):
    // one organisation's flood of events does not hold another's behind it.
    const withEvents = tx
      .selectFrom('events')
      .select('organization_id')
      .distinct()
      .where('dispatched_at', 'is', null)
      .limit(ORGANIZATIONS_PER_PASS);
    const events = await tx
      .selectFrom(withEvents.as('o'))
      .innerJoinLateral(
        (eb) =>
          eb
            .selectFrom('events as e')
            .select(['e.organization_id', 'e.id', 'e.type', 'e.created_at'])
            .whereRef('e.organization_id', '=', 'o.organization_id')
            .where('e.dispatched_at', 'is', null)
            .orderBy('e.created_at')
            .orderBy('e.id')
            .limit(batch)
            .forUpdate()
            .skipLocked()
            .as('e'),
        (join) => join.onTrue(),
      )
      .select(['e.organization_id', 'e.id', 'e.type', 'e.created_at'])
      .execute();
    if (events.length === 0) return { events: 0, deliveries: 0 };
    // The enabled endpoints of these events' organisations that want them (created no later than the event).
    const deliverable = new Set(deliverableTypes);
    const wanted = events.filter((event) => deliverable.has(event.type));
    const organizations = [...new Set(wanted.map((event) => event.organization_id))];
    const endpoints =
      organizations.length === 0
        ? []
        : await tx
            .selectFrom('webhook_endpoints')
            .select(['organization_id', 'id', 'events', 'created_at'])
            .where('organization_id', 'in', organizations)
            .where('enabled', '=', true)
            .execute();
    const matches = wanted.flatMap((event) =>
      endpoints
        .filter(
          (endpoint) =>
            endpoint.organization_id === event.organization_id &&
            endpoint.created_at <= event.created_at &&
            (endpoint.events.includes(event.type) || endpoint.events.includes('*')),
        )
        .map((endpoint) => ({
          organization_id: event.organization_id,
          endpoint_id: endpoint.id,
          event_id: event.id,
          event_type: event.type,
        })),
    );
    let deliveries = 0;
    if (matches.length > 0) {
      // Due now by the database's clock (the builder has no bare function value).
      const created = await tx
        .insertInto('webhook_deliveries')
        .values(
          matches.map((match) => ({
            ...match,
            id: newId('whd'),
            status: 'pending',
            next_attempt_at: sql<Date>`now()`,
          })),
        )
        .onConflict((conflict) => conflict.columns(['organization_id', 'endpoint_id', 'event_id']).doNothing())
        .returning(['organization_id', 'id', 'endpoint_id'])
        .execute();
      await enqueue(
        tx,
        created.map((d) => ({
          organizationId: d.organization_id,
          deliveryId: d.id,
          endpointId: d.endpoint_id,
          attempts: 0,
        })),
      );
      deliveries = created.length; // deliveries that already existed (ON CONFLICT) get no new job
    }
    await tx
      .updateTable('events')
      .set((eb) => ({ dispatched_at: eb.fn('now') }))
      .where((eb) =>
        eb(
          eb.refTuple('organization_id', 'id'),
          'in',
          events.map((event) => eb.tuple(event.organization_id, event.id)),
        ),
      )
      .execute();
    return { events: events.length, deliveries };
  });
}
