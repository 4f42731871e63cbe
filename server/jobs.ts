// Every background job of the service, one entry per job. The worker role runs them; the API role only sends.
// Webhook delivery is a polling claim loop rather than a pg-boss queue (pg-boss cron fires once a minute at
// most; deliveries must go out within a second and one slow endpoint must not hold a queue's slots): the worker
// role starts it here, beside the pg-boss jobs, and a graceful stop waits for it.
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from './platform/config.js';
import { purgeExpiredIdempotencyKeys } from './platform/http/idempotency.js';
import type { JobDefinition } from './platform/jobs/jobs.js';
import { startWebhookWorker, type WebhookWorker } from './platform/webhooks/worker.js';
import { webhookObjects } from './webhook-objects.js';

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

/** Webhook delivery: events -> deliveries -> signed POSTs with retries (worker and all roles). */
export function startWebhookDelivery(pool: pg.Pool, logger: Logger, config: Config): WebhookWorker {
  return startWebhookWorker({
    pool,
    logger,
    objects: webhookObjects,
    policy: { allowLoopback: config.webhookAllowLoopback },
    secretKey: config.webhookSecretKey,
    retryScheduleSeconds: config.webhookRetryScheduleSeconds,
  });
}
