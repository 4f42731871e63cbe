// Every background job of the service, one entry per job. The worker role runs them; the API role only sends.
import type pg from 'pg';
import type { Logger } from 'pino';
import { purgeExpiredIdempotencyKeys } from './platform/http/idempotency.js';
import type { JobDefinition } from './platform/jobs/jobs.js';

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
