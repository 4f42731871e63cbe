// Postings to the external systems: the job that makes one attempt of one posting (run.ts). The dispatch loop that
// turns due rows into jobs, and the sweep that frees the attempts of dead workers, run beside the jobs in the worker
// role (server/composition/jobs.ts). The blocks and events belong to the documents (their posting.ts).
import type { Job } from 'pg-boss';
import type { SendMany } from '../../platform/jobs/jobs.js';
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import { POSTING_QUEUE, runPosting, type PostingJob } from './run.js';

export const postingsModule: ModuleManifest = {
  name: 'postings',
  jobs: ({ db, logger, connectors, processId }) =>
    [
      {
        queue: POSTING_QUEUE,
        // Calls wait on the systems' network round trips, not on this process's CPU: several at once per worker. The
        // accounting system's own limit (10 concurrent requests per company) is above what two workers send.
        concurrency: 4,
        wakeAfterJob: true,
        // A job whose worker died is retried by pg-boss after its expiry; the heartbeat sweep usually re-queues sooner.
        queueOptions: { expireInSeconds: 120, retryLimit: 20, retryDelay: 5 },
        async handle(jobs: Job<PostingJob>[], sendMany: SendMany) {
          for (const job of jobs) {
            const outcome = await runPosting({ db, settings: connectors, processId, sendMany, logger }, job.data);
            logger.debug({ posting: job.data.postingId, outcome }, 'posting attempt');
          }
        },
      },
    ] as never,
};
