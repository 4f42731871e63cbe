// Fan-out: event rows not yet dispatched become one delivery row per enabled endpoint that wants the event type,
// each with its first webhooks.deliver job, and the events are marked dispatched, all in one transaction (so a
// crash can never leave a delivery without its job, nor an event dispatched without its deliveries). Events are
// claimed with FOR UPDATE SKIP LOCKED, so several workers dispatch side by side without taking one event twice. An endpoint only receives
// events created after it was added; event types without an object source (not delivered yet) are marked and
// skipped.
import type pg from 'pg';
import { inTransaction } from '../database/transaction.js';
import { newId } from '../ids.js';
import type { EnqueueDeliveries } from './deliver.js';

/** Dispatches up to `batch` events; returns how many events and deliveries it handled. */
export async function dispatchEvents(pool: pg.Pool, deliverableTypes: readonly string[], enqueue: EnqueueDeliveries, batch = 500): Promise<{ events: number; deliveries: number }> {
  return inTransaction(pool, async (tx) => {
    const { rows: events } = await tx.query<{ organization_id: string; id: string }>(
      `SELECT organization_id, id FROM events WHERE dispatched_at IS NULL ORDER BY created_at, id LIMIT $1 FOR UPDATE SKIP LOCKED`, [batch]);
    if (events.length === 0) return { events: 0, deliveries: 0 };
    const orgs = events.map((e) => e.organization_id);
    const ids = events.map((e) => e.id);
    const { rows: matches } = await tx.query<{ organization_id: string; endpoint_id: string; event_id: string; event_type: string }>(
      `SELECT e.organization_id, ep.id AS endpoint_id, e.id AS event_id, e.type AS event_type
         FROM unnest($1::text[], $2::text[]) AS k(organization_id, id)
         JOIN events e ON e.organization_id = k.organization_id AND e.id = k.id
         JOIN webhook_endpoints ep ON ep.organization_id = e.organization_id AND ep.enabled AND ep.created_at <= e.created_at
                                  AND (e.type = ANY(ep.events) OR '*' = ANY(ep.events))
        WHERE e.type = ANY($3::text[])`,
      [orgs, ids, deliverableTypes]);
    let deliveries = 0;
    if (matches.length > 0) {
      const { rows: created } = await tx.query<{ organization_id: string; id: string; endpoint_id: string }>(
        `INSERT INTO webhook_deliveries (organization_id, id, endpoint_id, event_id, event_type, status, next_attempt_at)
         SELECT organization_id, id, endpoint_id, event_id, event_type, 'pending', now()
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS d(organization_id, id, endpoint_id, event_id, event_type)
         ON CONFLICT (organization_id, endpoint_id, event_id) DO NOTHING
         RETURNING organization_id, id, endpoint_id`,
        [matches.map((m) => m.organization_id), matches.map(() => newId('whd')), matches.map((m) => m.endpoint_id), matches.map((m) => m.event_id), matches.map((m) => m.event_type)]);
      await enqueue(tx, created.map((d) => ({ organizationId: d.organization_id, deliveryId: d.id, endpointId: d.endpoint_id, attempts: 0 })));
      deliveries = created.length; // deliveries that already existed (ON CONFLICT) get no new job
    }
    await tx.query(
      `UPDATE events e SET dispatched_at = now() FROM unnest($1::text[], $2::text[]) AS k(organization_id, id)
        WHERE e.organization_id = k.organization_id AND e.id = k.id`, [orgs, ids]);
    return { events: events.length, deliveries };
  });
}
