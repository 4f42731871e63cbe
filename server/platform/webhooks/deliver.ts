// Delivery by pg-boss jobs. Each attempt of a delivery is one job of the queue webhooks.deliver, sent in the
// transaction that made the delivery due (the fan-out, a retry's outcome, a CLI test, resend or enable), so a due
// delivery always has its job. An attempt sends only while it holds one of its endpoint's send slots (slots.ts): at
// most perEndpointInFlight sends to one endpoint across all workers, so a slow or dead endpoint holds only its own
// slots. Jobs are also grouped by endpoint with pg-boss's groupConcurrency, so that workers mostly fetch jobs whose
// endpoint has room; a job that finds every slot taken is sent again for half a second later. The slot is leased by
// the worker's heartbeat (jobs/processes.ts): a worker that dies mid-send loses its slots within
// PROCESS_LEASE_SECONDS, and a live worker fails its jobs so that pg-boss retries them at once; so is a job left
// active without a slot for UNCLAIMED_JOB_SECONDS (its worker died before taking one; jobs/lost.ts). The job's own expiry (60 s)
// stays as the last resort. A job for a delivery no longer pending,
// already past that attempt, or of a disabled endpoint does nothing. A fan-out loop in each worker process turns
// event rows into deliveries and their first jobs.
import { DEFAULT_POLL_INTERVAL_MS, startLoop, type BackgroundLoop, type LoopSafetyNet } from '../jobs/loop.js';
import { sql } from 'kysely';
import type { Job } from 'pg-boss';
import type { Logger } from 'pino';
import type { JobDefinition, SendMany } from '../jobs/jobs.js';
import type { Db } from '../database/transaction.js';
import { attemptDelivery, type AttemptSettings } from './attempt.js';
import { dispatchEvents } from './dispatch.js';
import { readEndpointObject, TEST_EVENT } from './endpoints.js';
import { OBJECT_LIMIT_BYTES, type WebhookObjectRegistry } from './objects.js';
import { DISABLE_AFTER_FAILED_EVENTS, recordOutcome } from './outcome.js';
import { DELIVERY_TIMEOUT_MS, type SendOutcome } from './send.js';
import type { DestinationPolicy } from './destination.js';
import { claimSendSlot, releaseSendSlot } from './slots.js';
import {
  DELIVERY_QUEUE,
  type ClaimedDelivery,
  type DeliveryJobData,
  type EnqueueDeliveries,
  type OutcomeListener,
} from './types.js';

export {
  DELIVERY_QUEUE,
  type ClaimedDelivery,
  type DeliveryJob,
  type DeliveryJobData,
  type EnqueueDeliveries,
} from './types.js';

/** How long an attempt may hold its job before pg-boss retries it: the backstop behind the slots' heartbeat lease. */
export const DELIVERY_LEASE_SECONDS = 60;
/** How long a job that found its endpoint's slots all taken waits before it is tried again. */
export const SLOT_WAIT_MS = 500;

/**
 * Sends delivery jobs, in the order of sending (not `fair`: the queue's jobs are fetched through pg-boss's
 * groupConcurrency, whose filter comes after the fetch's order, so a higher-priority job of a full endpoint would
 * hide the others; fairness between organisations comes from the fan-out, which takes each organisation's events
 * side by side).
 */
export function deliveryEnqueuer(sendMany: SendMany, options: { fair?: boolean } = {}): EnqueueDeliveries {
  return (tx, jobs) =>
    sendMany<DeliveryJobData>(
      DELIVERY_QUEUE,
      jobs.map((job) => ({
        data: {
          organizationId: job.organizationId,
          deliveryId: job.deliveryId,
          attempts: job.attempts,
          ...(job.retried ? { retried: job.retried } : {}),
        },
        group: job.endpointId,
        ...(options.fair ? { fair: true } : {}),
        ...(job.startAfter !== undefined ? { startAfter: job.startAfter } : {}),
      })),
      tx,
    );
}

/**
 * Counts the job's attempt on the delivery and moves next_attempt_at to the end of the lease, if the delivery is
 * still pending, its endpoint enabled, and it has had the attempts the job was sent for (a pg-boss retry of a job
 * whose worker died may find them counted once per earlier try). Null when the job has nothing left to do.
 */
export async function claimDelivery(
  db: Db,
  data: DeliveryJobData,
  retryCount: number,
  leaseSeconds = DELIVERY_LEASE_SECONDS,
): Promise<ClaimedDelivery | null> {
  const row = await db
    .updateTable('webhook_deliveries as d')
    .from('webhook_endpoints as ep')
    .set((eb) => ({
      attempts: eb('d.attempts', '+', 1),
      // The lease's end from the database's clock: interval arithmetic has no builder form; the seconds are bound.
      next_attempt_at: sql<Date>`now() + make_interval(secs => ${leaseSeconds})`,
      updated_at: eb.fn('now'),
    }))
    .where('d.organization_id', '=', data.organizationId)
    .where('d.id', '=', data.deliveryId)
    .where('d.status', '=', 'pending')
    .where('d.attempts', '>=', data.attempts)
    .where('d.attempts', '<=', data.attempts + (data.retried ?? 0) + retryCount)
    .whereRef('ep.organization_id', '=', 'd.organization_id')
    .whereRef('ep.id', '=', 'd.endpoint_id')
    .where('ep.enabled', '=', true)
    .returning(['d.organization_id', 'd.id', 'd.endpoint_id', 'd.attempts'])
    .executeTakeFirst();
  return row
    ? { organizationId: row.organization_id, id: row.id, endpointId: row.endpoint_id, attempt: row.attempts }
    : null;
}

export interface WebhookDeliveryOptions {
  db: Db;
  logger: Logger;
  /** Event type -> object source, from the composition level; webhook.test is added here. */
  objects: WebhookObjectRegistry;
  policy: DestinationPolicy;
  secretKey: Buffer;
  retryScheduleSeconds: readonly number[];
  /** Sends to one process at once. */
  maxInFlight?: number;
  /** Sends to one endpoint at once, across all worker processes (its slots; at most 64). */
  perEndpointInFlight?: number;
  /** This process (service_processes.id): its heartbeat is the lease of the slots it takes. */
  processId: string;
  timeoutMs?: number;
  objectLimitBytes?: number;
  disableAfterFailedEvents?: number;
  /** Told of each outcome in its transaction (composition wires the DMS's callback actions). */
  onOutcome?: OutcomeListener;
}

/** The event types the engine can deliver with a registry: the registry's plus webhook.test. */
export function withTestEvent(objects: WebhookObjectRegistry): WebhookObjectRegistry {
  return {
    ...objects,
    [TEST_EVENT]: {
      read: async (db, actor, id) =>
        (await readEndpointObject(db, actor.organization.id, id)) as Record<string, unknown> | null,
      fetchPath: () => '',
    },
  };
}

/** The job that makes one attempt of a delivery and records its outcome (with the retry's job, if any). */
export function webhookDeliveryJob(options: WebhookDeliveryOptions): JobDefinition<DeliveryJobData> {
  const { db, logger } = options;
  const settings: AttemptSettings = {
    objects: withTestEvent(options.objects),
    policy: options.policy,
    secretKey: options.secretKey,
    timeoutMs: options.timeoutMs ?? DELIVERY_TIMEOUT_MS,
    objectLimitBytes: options.objectLimitBytes ?? OBJECT_LIMIT_BYTES,
  };
  const perEndpoint = options.perEndpointInFlight ?? 4;

  async function deliver(job: Job<DeliveryJobData>, enqueue: EnqueueDeliveries, sendMany: SendMany): Promise<void> {
    const endpointId =
      job.groupId ??
      (
        await db
          .selectFrom('webhook_deliveries')
          .select('endpoint_id')
          .where('organization_id', '=', job.data.organizationId)
          .where('id', '=', job.data.deliveryId)
          .executeTakeFirst()
      )?.endpoint_id;
    if (!endpointId) return;
    const slot = await claimSendSlot(db, {
      organizationId: job.data.organizationId,
      endpointId,
      limit: perEndpoint,
      processId: options.processId,
      jobId: job.id,
      jobRetryCount: job.retryCount,
      deliveryId: job.data.deliveryId,
    });
    if (slot === null) {
      // Every slot of the endpoint is taken: the same attempt again shortly, as a new job that carries what this one's
      // retries allowed for. (Not a pg-boss retry: waiting for a slot must not use up the retries kept for crashes.)
      await sendMany<DeliveryJobData>(DELIVERY_QUEUE, [
        {
          data: { ...job.data, retried: (job.data.retried ?? 0) + job.retryCount },
          group: endpointId,
          startAfter: new Date(Date.now() + SLOT_WAIT_MS),
        },
      ]);
      return;
    }
    try {
      await attempt(job, enqueue);
    } finally {
      const released = await releaseSendSlot(db, {
        organizationId: job.data.organizationId,
        endpointId,
        slot,
        processId: options.processId,
        jobId: job.id,
      });
      if (!released)
        logger.warn(
          { deliveryId: job.data.deliveryId, endpointId, slot },
          'webhook send slot was taken back while sending (this process missed its heartbeat lease)',
        );
    }
  }

  async function attempt(job: Job<DeliveryJobData>, enqueue: EnqueueDeliveries): Promise<void> {
    const claim = await claimDelivery(db, job.data, job.retryCount);
    if (!claim) return;
    let outcome: SendOutcome;
    try {
      outcome = await attemptDelivery(db, settings, claim);
    } catch (error) {
      outcome = { ok: false, status: null, durationMs: 0, error: 'internal error while sending' };
      logger.error({ err: error, deliveryId: claim.id }, 'webhook attempt failed unexpectedly');
    }
    try {
      const recorded = await recordOutcome(
        db,
        claim,
        outcome,
        options.retryScheduleSeconds,
        options.disableAfterFailedEvents ?? DISABLE_AFTER_FAILED_EVENTS,
        enqueue,
        options.onOutcome,
      );
      const entry = {
        deliveryId: claim.id,
        endpointId: claim.endpointId,
        organizationId: claim.organizationId,
        attempt: claim.attempt,
        status: recorded.status,
        responseCode: outcome.status,
        durationMs: outcome.durationMs,
        error: outcome.error,
      };
      if (recorded.endpointDisabled) logger.warn(entry, 'webhook endpoint disabled after consecutive failed events');
      else if (outcome.ok) logger.debug(entry, 'webhook delivered');
      else logger.info(entry, 'webhook attempt failed');
    } catch (error) {
      // The job fails: pg-boss retries it, and the retry may claim the attempt counted above (at least once).
      logger.error({ err: error, deliveryId: claim.id }, 'webhook outcome could not be recorded');
      throw error;
    }
  }
  return {
    queue: DELIVERY_QUEUE,
    concurrency: options.maxInFlight ?? 32,
    wakeAfterJob: true,
    groupConcurrency: perEndpoint,
    // A pg-boss retry is for a crashed worker or an outcome not recorded; the delivery's own retries are new jobs.
    queueOptions: { expireInSeconds: DELIVERY_LEASE_SECONDS, retryLimit: 5, retryDelay: 1 },
    async handle(jobs, sendMany) {
      const enqueue = deliveryEnqueuer(sendMany);
      for (const job of jobs) await deliver(job, enqueue, sendMany);
    },
  };
}

export type WebhookDispatcher = BackgroundLoop;

/**
 * The fan-out loop of a worker process: new event rows become deliveries and their first jobs, when an event is
 * written (its trigger's NOTIFY wakes the loop: wake()), and at the safety net's interval otherwise.
 */
export function startWebhookDispatcher(options: {
  db: Db;
  logger: Logger;
  deliverableTypes: readonly string[];
  enqueue: EnqueueDeliveries;
  /** Called after a pass committed new deliveries: wakes as many of this process's delivery workers. */
  wake?: (deliveries: number) => void;
  pollIntervalMs?: number;
  /** The worker's safety net, which watches the loop (when given, pollIntervalMs is only the loop's backstop). */
  safetyNet?: LoopSafetyNet;
}): WebhookDispatcher {
  const loop = startLoop({
    pollIntervalMs: options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
    async pass() {
      const dispatched = await dispatchEvents(options.db, options.deliverableTypes, options.enqueue);
      if (dispatched.deliveries > 0) options.wake?.(dispatched.deliveries);
      return dispatched.events > 0;
    },
    onError: (error) => options.logger.error({ err: error }, 'webhook fan-out failed; retrying'),
  });
  options.safetyNet?.watch(loop, eventsDueAt());
  return loop;
}

/** Now if an event waits for its fan-out, else null (SQL): the fan-out's part of the worker's safety net. */
export const eventsDueAt = () =>
  sql<Date | null>`SELECT now() WHERE EXISTS (SELECT 1 FROM events WHERE dispatched_at IS NULL)`;
