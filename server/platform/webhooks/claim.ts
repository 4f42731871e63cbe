// Claiming due deliveries. A claim is a lease: the attempt is counted and next_attempt_at moves to the end of the
// lease, in one short transaction, before anything is sent. A worker that stops or dies mid-send leaves the
// delivery pending with that lease, so it becomes due again when the lease ends (at least once, never lost).
// Rows are locked with FOR UPDATE SKIP LOCKED, so workers on several processes never claim the same delivery, and
// at most `perEndpoint` deliveries of one endpoint are taken at a time, so one slow endpoint cannot fill the slots.
import type pg from 'pg';
import { inTransaction } from '../database/transaction.js';

export interface ClaimedDelivery {
  organizationId: string;
  id: string;
  endpointId: string;
  /** The attempt number this claim is (1 for the first send). */
  attempt: number;
}

export async function claimDueDeliveries(pool: pg.Pool, options: {
  capacity: number;
  perEndpoint: number;
  leaseSeconds: number;
  /** Deliveries this process is sending now, per endpoint (they count against perEndpoint). */
  busy: ReadonlyMap<string, number>;
}): Promise<ClaimedDelivery[]> {
  if (options.capacity <= 0) return [];
  return inTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ organization_id: string; id: string; endpoint_id: string }>(
      `SELECT d.organization_id, d.id, d.endpoint_id
         FROM webhook_deliveries d
         JOIN webhook_endpoints ep ON ep.organization_id = d.organization_id AND ep.id = d.endpoint_id AND ep.enabled
        WHERE (d.organization_id, d.id) IN (
                SELECT organization_id, id FROM (
                  SELECT organization_id, id, row_number() OVER (PARTITION BY organization_id, endpoint_id ORDER BY next_attempt_at, id) AS rank
                    FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= now()) ranked
                 WHERE rank <= $1)
          AND d.status = 'pending' AND d.next_attempt_at <= now()
        ORDER BY d.next_attempt_at, d.id
        LIMIT $2
        FOR UPDATE OF d SKIP LOCKED`,
      [options.perEndpoint, options.capacity * 2]);
    const taken = new Map(options.busy);
    const chosen = rows.filter((row) => {
      const count = taken.get(row.endpoint_id) ?? 0;
      if (count >= options.perEndpoint) return false;
      taken.set(row.endpoint_id, count + 1);
      return true;
    }).slice(0, options.capacity);
    if (chosen.length === 0) return [];
    const { rows: leased } = await tx.query<{ organization_id: string; id: string; endpoint_id: string; attempts: number }>(
      `UPDATE webhook_deliveries d SET attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => $3), updated_at = now()
         FROM unnest($1::text[], $2::text[]) AS k(organization_id, id)
        WHERE d.organization_id = k.organization_id AND d.id = k.id
        RETURNING d.organization_id, d.id, d.endpoint_id, d.attempts`,
      [chosen.map((row) => row.organization_id), chosen.map((row) => row.id), options.leaseSeconds]);
    return leased.map((row) => ({ organizationId: row.organization_id, id: row.id, endpointId: row.endpoint_id, attempt: row.attempts }));
  });
}
