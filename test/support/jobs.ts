// Jobs that only send: a test that drives a queue by hand (fetching its jobs as a worker would) depends on no worker
// and no background timing.
import pino from 'pino';
import { startJobs, type Jobs } from '../../server/platform/jobs/jobs.js';

/** pg-boss on the test's database, sending to `queue` and running no worker (its handler is never called). */
export function sendOnlyJobs(databaseUrl: string, queue: string): Promise<Jobs> {
  return startJobs({
    databaseUrl,
    runWorkers: false,
    definitions: [{ queue, async handle() {} }],
    logger: pino({ level: 'silent' }),
  });
}
