// What an attempt leaves behind, in one transaction: success, or the next retry from the schedule (a new
// webhooks.deliver job due then, sent in the same transaction), or (after the last retry) a failed delivery. An endpoint whose events fail for good N times in a row (20 by the spec) is
// disabled with a reason and the organisation's administrators get a notification. Nothing here touches the
// change the event describes: a failed delivery never undoes it.
import type pg from 'pg';
import { inTransaction } from '../database/transaction.js';
import type { ClaimedDelivery, EnqueueDeliveries } from './deliver.js';
import { notify } from './notifications.js';
import type { SendOutcome } from './send.js';

export const DISABLE_AFTER_FAILED_EVENTS = 20;

export interface RecordedOutcome {
  status: 'succeeded' | 'pending' | 'failed' | 'superseded';
  /** Set when this failure turned the endpoint off. */
  endpointDisabled: boolean;
}

export async function recordOutcome(pool: pg.Pool, claim: ClaimedDelivery, outcome: SendOutcome, retryScheduleSeconds: readonly number[], disableAfter: number, enqueue: EnqueueDeliveries): Promise<RecordedOutcome> {
  return inTransaction(pool, async (tx) => {
    const retryIn = outcome.ok ? null : retryScheduleSeconds[claim.attempt - 1] ?? null;
    const status = outcome.ok ? 'succeeded' : retryIn === null ? 'failed' : 'pending';
    // attempts = this claim's number: a resend or an enable in the meantime has restarted the delivery, and wins.
    const { rowCount } = await tx.query(
      `UPDATE webhook_deliveries
          SET status = $3, next_attempt_at = CASE WHEN $4::float8 IS NULL THEN NULL ELSE now() + make_interval(secs => $4::float8) END,
              last_response_code = $5, last_duration_ms = $6, last_error = $7, updated_at = now()
        WHERE organization_id = $1 AND id = $2 AND status = 'pending' AND attempts = $8`,
      [claim.organizationId, claim.id, status, retryIn, outcome.status, outcome.durationMs, outcome.error, claim.attempt]);
    if (rowCount === 0) return { status: 'superseded', endpointDisabled: false };
    if (status === 'succeeded') {
      await tx.query('UPDATE webhook_endpoints SET consecutive_failures = 0 WHERE organization_id = $1 AND id = $2 AND consecutive_failures <> 0', [claim.organizationId, claim.endpointId]);
      return { status, endpointDisabled: false };
    }
    if (status === 'pending') {
      await enqueue(tx, [{ organizationId: claim.organizationId, deliveryId: claim.id, endpointId: claim.endpointId, attempts: claim.attempt, startAfter: retryIn! }]);
      return { status, endpointDisabled: false };
    }
    const { rows } = await tx.query<{ consecutive_failures: number; enabled: boolean; url: string }>(
      `UPDATE webhook_endpoints SET consecutive_failures = consecutive_failures + 1, updated_at = now()
        WHERE organization_id = $1 AND id = $2 RETURNING consecutive_failures, enabled, url`, [claim.organizationId, claim.endpointId]);
    const endpoint = rows[0];
    if (!endpoint || !endpoint.enabled || endpoint.consecutive_failures < disableAfter) return { status, endpointDisabled: false };
    const reason = `${endpoint.consecutive_failures} consecutive events failed to deliver (last: ${outcome.error ?? 'no answer'})`;
    await tx.query(
      `UPDATE webhook_endpoints SET enabled = false, disabled_reason = $3, disabled_at = now(), updated_at = now() WHERE organization_id = $1 AND id = $2`,
      [claim.organizationId, claim.endpointId, reason]);
    await notify(tx, claim.organizationId, 'webhook_endpoint.disabled',
      `Webhook endpoint ${claim.endpointId} (${endpoint.url}) was turned off: ${reason}. Fix the receiver, then enable it again (webhook enable ${claim.endpointId}); its failed deliveries are then resent.`);
    return { status, endpointDisabled: true };
  });
}
