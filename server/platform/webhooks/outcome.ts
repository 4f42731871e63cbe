// What an attempt leaves behind, in one transaction: success, or the next retry from the schedule (a new
// webhooks.deliver job due then, sent in the same transaction), or (after the last retry) a failed delivery. An endpoint whose events fail for good N times in a row (20 by the spec) is
// disabled with a reason and the organisation's administrators get a notification. Nothing here touches the
// change the event describes: a failed delivery never undoes it.
import { sql } from 'kysely';
import { inTransaction, type Db } from '../database/transaction.js';
import type { ClaimedDelivery, EnqueueDeliveries, OutcomeListener } from './types.js';
import { notify } from './notifications.js';
import type { SendOutcome } from './send.js';

export const DISABLE_AFTER_FAILED_EVENTS = 20;

export interface RecordedOutcome {
  status: 'succeeded' | 'pending' | 'failed' | 'superseded';
  /** Set when this failure turned the endpoint off. */
  endpointDisabled: boolean;
}

export async function recordOutcome(
  db: Db,
  claim: ClaimedDelivery,
  outcome: SendOutcome,
  retryScheduleSeconds: readonly number[],
  disableAfter: number,
  enqueue: EnqueueDeliveries,
  onOutcome?: OutcomeListener,
): Promise<RecordedOutcome> {
  return inTransaction(db, async (tx) => {
    const retryIn = outcome.ok ? null : (retryScheduleSeconds[claim.attempt - 1] ?? null);
    const status = outcome.ok ? 'succeeded' : retryIn === null ? 'failed' : 'pending';
    // attempts = this claim's number: a resend or an enable in the meantime has restarted the delivery, and wins.
    const { numUpdatedRows } = await tx
      .updateTable('webhook_deliveries')
      .set({
        status,
        // A due time from the database's clock: interval arithmetic has no builder form; the seconds are bound.
        next_attempt_at: retryIn === null ? null : sql<Date>`now() + make_interval(secs => ${retryIn}::float8)`,
        last_response_code: outcome.status,
        last_duration_ms: outcome.durationMs,
        last_error: outcome.error,
        updated_at: sql<Date>`now()`,
      })
      .where('organization_id', '=', claim.organizationId)
      .where('id', '=', claim.id)
      .where('status', '=', 'pending')
      .where('attempts', '=', claim.attempt)
      .executeTakeFirst();
    if (numUpdatedRows === 0n) return { status: 'superseded', endpointDisabled: false };
    await onOutcome?.(tx, claim, status);
    if (status === 'succeeded') {
      await tx
        .updateTable('webhook_endpoints')
        .set({ consecutive_failures: 0 })
        .where('organization_id', '=', claim.organizationId)
        .where('id', '=', claim.endpointId)
        .where('consecutive_failures', '<>', 0)
        .execute();
      return { status, endpointDisabled: false };
    }
    if (status === 'pending') {
      await enqueue(tx, [
        {
          organizationId: claim.organizationId,
          deliveryId: claim.id,
          endpointId: claim.endpointId,
          attempts: claim.attempt,
          startAfter: retryIn!,
        },
      ]);
      return { status, endpointDisabled: false };
    }
    const endpoint = await tx
      .updateTable('webhook_endpoints')
      .set((eb) => ({ consecutive_failures: eb('consecutive_failures', '+', 1), updated_at: eb.fn('now') }))
      .where('organization_id', '=', claim.organizationId)
      .where('id', '=', claim.endpointId)
      .returning(['consecutive_failures', 'enabled', 'url'])
      .executeTakeFirst();
    if (!endpoint?.enabled || endpoint.consecutive_failures < disableAfter) return { status, endpointDisabled: false };
    const reason = `${endpoint.consecutive_failures} consecutive events failed to deliver (last: ${outcome.error ?? 'no answer'})`;
    await tx
      .updateTable('webhook_endpoints')
      .set((eb) => ({ enabled: false, disabled_reason: reason, disabled_at: eb.fn('now'), updated_at: eb.fn('now') }))
      .where('organization_id', '=', claim.organizationId)
      .where('id', '=', claim.endpointId)
      .execute();
    await notify(
      tx,
      claim.organizationId,
      'webhook_endpoint.disabled',
      `Webhook endpoint ${claim.endpointId} (${endpoint.url}) was turned off: ${reason}. Fix the receiver, then enable it again (webhook enable ${claim.endpointId}); its failed deliveries are then resent.`,
    );
    return { status, endpointDisabled: true };
  });
}
