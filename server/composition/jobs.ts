// Every background job of the service, one entry per job. The worker role runs them; the API role only sends.
// Webhook delivery is the queue webhooks.deliver (one job per attempt, grouped by endpoint); the fan-out from event
// rows to deliveries and their first jobs is a short loop in the worker role, started here beside the jobs.
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from './platform/config.js';
import { purgeExpiredIdempotencyKeys } from './platform/http/idempotency.js';
import type { JobDefinition, Jobs } from './platform/jobs/jobs.js';
import { DELIVERY_QUEUE, deliveryEnqueuer, startWebhookDispatcher, webhookDeliveryJob, type WebhookDispatcher } from './platform/webhooks/deliver.js';
import { webhookEventTypes, webhookObjects } from './webhook-objects.js';

export function jobDefinitions(pool: pg.Pool, logger: Logger): JobDefinition<never>[] {
  return [
    {
      queue: 'idempotency.purge',
      cron: '*/15 * * * *', // stored results live 24 hours; lookups ignore older ones, this reclaims the rows
      async handle() {
        const purged = await purgeExpiredIdempotencyKeys(pool);
        if (purged > 0) logger.info({ purged }, 'expired idempotency keys purged');
      },
    },
  ];
}

/** One attempt of one webhook delivery. Always defined, beside jobDefinitions (or a test's): the fan-out sends it; so does the CLI. */
export function webhookJob(pool: pg.Pool, logger: Logger, config: Config): JobDefinition<never> {
  return webhookDeliveryJob({
    pool,
    logger,
    objects: webhookObjects,
    policy: { allowLoopback: config.webhookAllowLoopback },
    secretKey: config.webhookSecretKey,
    retryScheduleSeconds: config.webhookRetryScheduleSeconds,
  }) as unknown as JobDefinition<never>;
}

/** Webhook fan-out: events -> deliveries and their jobs (worker and all roles). */
export function startWebhookDelivery(pool: pg.Pool, logger: Logger, jobs: Jobs): WebhookDispatcher {
  return startWebhookDispatcher({ pool, logger, deliverableTypes: webhookEventTypes, enqueue: deliveryEnqueuer(jobs.sendMany), wake: (deliveries) => jobs.wake(DELIVERY_QUEUE, deliveries) });
}
