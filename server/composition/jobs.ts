// Every background job of the service: the platform's own, then each module's (from its manifest). The worker role
// runs them; the API role only sends. Webhook delivery is the queue webhooks.deliver (one job per attempt, grouped by
// endpoint); the fan-out from event rows to deliveries and their first jobs is a short loop in the worker role,
// started here beside the jobs.
import type { Logger } from 'pino';
import type { ServiceConfig } from '../platform/config.js';
import type { Db } from '../platform/database/transaction.js';
import { purgeExpiredIdempotencyKeys } from '../platform/http/idempotency.js';
import type { JobDefinition, Jobs } from '../platform/jobs/jobs.js';
import type { ModuleContext, ModuleManifest } from '../platform/modules/manifest.js';
import { requeueAbandonedPostings, startPostingDispatcher, type PostingDispatcher } from '../modules/postings/dispatch.js';
import { POSTING_QUEUE } from '../modules/postings/run.js';
import { DMS_QUEUE, startDmsDispatcher } from '../modules/dms/dispatch.js';
import { noteCallback } from '../modules/dms/actions.js';
import { DELIVERY_QUEUE, deliveryEnqueuer, startWebhookDispatcher, webhookDeliveryJob, type WebhookDispatcher } from '../platform/webhooks/deliver.js';
import { reclaimDeadSlots, reclaimOrphanedJobs, type FailJobs } from '../platform/webhooks/slots.js';
import { forgetOldProcesses } from '../platform/jobs/processes.js';
import { MODULES, webhookEventTypes, webhookObjects } from './modules.js';

export function jobDefinitions(context: ModuleContext, modules: readonly ModuleManifest[] = MODULES): JobDefinition<never>[] {
  const { db, logger } = context;
  return [
    {
      queue: 'idempotency.purge',
      cron: '*/15 * * * *', // stored results live 24 hours; lookups ignore older ones, this reclaims the rows
      async handle() {
        const purged = await purgeExpiredIdempotencyKeys(db);
        if (purged > 0) logger.info({ purged }, 'expired idempotency keys purged');
      },
    },
    ...modules.flatMap((module) => module.jobs?.(context) ?? []),
  ];
}

/** One attempt of one webhook delivery. Always defined, beside jobDefinitions (or a test's): the fan-out sends it; so does the CLI. */
export function webhookJob(db: Db, logger: Logger, config: ServiceConfig, processId: string): JobDefinition<never> {
  return webhookDeliveryJob({
    db,
    processId,
    logger,
    objects: webhookObjects,
    policy: { allowLoopback: config.webhookAllowLoopback },
    secretKey: config.webhookSecretKey,
    retryScheduleSeconds: config.webhookRetryScheduleSeconds,
    // A DMS connection's flag callbacks are webhooks to its endpoint; each outcome is its callback action.
    onOutcome: noteCallback,
  }) as unknown as JobDefinition<never>;
}

/**
 * A worker's sweep after each heartbeat: the send slots of dead processes are taken back and their jobs failed, and
 * so are delivery jobs left active without a slot, so pg-boss retries them now (not after their expiry); rows of
 * processes gone for a day are deleted. Returns how many attempts are retried.
 */
export async function sweepDeadProcesses(db: Db, jobs: Jobs): Promise<number> {
  const fail: FailJobs = (tx, dead) => jobs.failInTransaction(DELIVERY_QUEUE, dead, tx);
  const taken = await reclaimDeadSlots(db, fail) + await reclaimOrphanedJobs(db, DELIVERY_QUEUE, fail);
  const postings = await requeueAbandonedPostings(db);
  await forgetOldProcesses(db);
  return taken + postings;
}

/** Postings to the external systems and DMS documents to post: due rows -> jobs (worker and all roles). */
export function startPostings(db: Db, logger: Logger, jobs: Jobs): PostingDispatcher {
  const postings = startPostingDispatcher({
    db, sendMany: jobs.sendMany, wake: (count) => jobs.wake(POSTING_QUEUE, count),
    onError: (error) => logger.error({ err: error }, 'posting dispatch failed; retrying'),
  });
  const dms = startDmsDispatcher({
    db, sendMany: jobs.sendMany, wake: (count) => jobs.wake(DMS_QUEUE, count),
    onError: (error) => logger.error({ err: error }, 'DMS dispatch failed; retrying'),
  });
  return { stop: async () => { await Promise.all([postings.stop(), dms.stop()]); } };
}

/** Webhook fan-out: events -> deliveries and their jobs (worker and all roles). */
export function startWebhookDelivery(db: Db, logger: Logger, jobs: Jobs): WebhookDispatcher {
  return startWebhookDispatcher({ db, logger, deliverableTypes: webhookEventTypes, enqueue: deliveryEnqueuer(jobs.sendMany), wake: (deliveries) => jobs.wake(DELIVERY_QUEUE, deliveries) });
}
