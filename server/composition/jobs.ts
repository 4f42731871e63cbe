// Every background job of the service: the platform's own, then each module's (from its manifest). The worker role
// runs them; the API role only sends. Webhook delivery is the queue webhooks.deliver (one job per attempt, grouped by
// endpoint); the fan-out from event rows to deliveries and their first jobs is a short loop in the worker role,
// started here beside the jobs. The loops are woken by NOTIFY when work is due (platform/jobs/wake.ts) and look for
// work on their own only at the safety net's interval (WORK_POLL_SECONDS).
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { ServiceConfig } from '../platform/config.js';
import type { Db } from '../platform/database/transaction.js';
import { purgeExpiredIdempotencyKeys } from '../platform/http/idempotency.js';
import type { JobDefinition, Jobs } from '../platform/jobs/jobs.js';
import type { ModuleContext, ModuleManifest } from '../platform/modules/manifest.js';
import {
  abandonedPostingsExist,
  requeueAbandonedPostings,
  startPostingDispatcher,
  unclaimedPostingJobs,
  type PostingDispatcher,
} from '../modules/postings/dispatch.js';
import { POSTING_QUEUE } from '../modules/postings/run.js';
import {
  abandonedDocumentsExist,
  DMS_QUEUE,
  requeueAbandonedDocuments,
  startDmsDispatcher,
  unclaimedDmsJobs,
} from '../modules/dms/dispatch.js';
import { noteCallback } from '../modules/dms/actions.js';
import {
  DELIVERY_QUEUE,
  deliveryEnqueuer,
  startWebhookDispatcher,
  webhookDeliveryJob,
  type WebhookDispatcher,
} from '../platform/webhooks/deliver.js';
import { deadSlotsExist, reclaimDeadSlots, slotlessDeliveryJobs } from '../platform/webhooks/slots.js';
import { failLostJobs, lostJobsExist } from '../platform/jobs/lost.js';
import { forgetOldProcesses, oldProcessesExist } from '../platform/jobs/processes.js';
import { loopsTogether, startLoopSafetyNet, type LoopSafetyNet } from '../platform/jobs/loop.js';
import { listenForWork, type WorkListener } from '../platform/jobs/wake.js';
import { MODULES, webhookEventTypes, webhookObjects } from './modules.js';
import { purgeEndedSessions } from '../console/sessions.js';

/** The scheduled sweep of the operator console's ended sessions (decision 0047). */
export const CONSOLE_SESSIONS_PURGE_QUEUE = 'console.sessions.purge';

export function jobDefinitions(
  context: ModuleContext,
  modules: readonly ModuleManifest[] = MODULES,
): JobDefinition<never>[] {
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
    {
      queue: CONSOLE_SESSIONS_PURGE_QUEUE,
      cron: '*/15 * * * *', // a console session ends after 30 idle minutes; this deletes the rows of those never resumed
      async handle() {
        const purged = await purgeEndedSessions(db);
        if (purged > 0) logger.info({ purged }, 'ended console sessions deleted');
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

/** The queues whose jobs claim their work, each with how a job lost before its claim is known (jobs/lost.ts). */
const CLAIMING_QUEUES = [slotlessDeliveryJobs(DELIVERY_QUEUE), unclaimedPostingJobs, unclaimedDmsJobs];

/**
 * A worker's sweep after each heartbeat: the send slots of dead processes are taken back and their jobs failed, and
 * so are the jobs of each claiming queue left active with their work unclaimed (delivery jobs without a slot, posting
 * jobs with their posting unclaimed, DMS jobs with their documents unclaimed), so pg-boss retries them now (not after
 * their expiry); postings and DMS documents claimed by dead processes are due again; rows of processes gone for a day are deleted.
 * Returns how many attempts are retried.
 */
export async function sweepDeadProcesses(db: Db, jobs: Jobs): Promise<number> {
  let retried = await reclaimDeadSlots(db, (tx, dead) => jobs.failInTransaction(DELIVERY_QUEUE, dead, tx));
  for (const claiming of CLAIMING_QUEUES)
    retried += await failLostJobs(db, claiming, (tx, lost) => jobs.failInTransaction(claiming.queue, lost, tx));
  retried += (await requeueAbandonedPostings(db)) + (await requeueAbandonedDocuments(db));
  await forgetOldProcesses(db);
  return retried;
}

/**
 * What a worker's heartbeat asks the database before it sweeps (sweepDeadProcesses): whether any of the sweep's parts
 * has anything to do. One probe in the beat's own statement, so that an idle worker runs no sweep at all.
 */
export const sweepNeeded = () =>
  sql<boolean>`(${sql.join(
    [
      deadSlotsExist(),
      ...CLAIMING_QUEUES.map(lostJobsExist),
      abandonedPostingsExist(),
      abandonedDocumentsExist(),
      oldProcessesExist(),
    ],
    sql` OR `,
  )})`;

/**
 * How a worker's loops are woken: by the work_due listener (wake.ts), and by the safety net, one statement for every
 * loop each WORK_POLL_SECONDS (loop.ts's startLoopSafetyNet). With a safety net, pollIntervalMs is each loop's own
 * backstop (LOOP_BACKSTOP_FACTOR times longer); without one (a test's loops), each loop looks at that interval itself.
 */
export interface LoopWaking {
  work?: WorkListener;
  pollIntervalMs?: number;
  safetyNet?: LoopSafetyNet;
}

/** A worker's waking of its loops, as its service starts them: the listener, the safety net, and how to end both. */
export type WorkerWaking = LoopWaking & { close(): Promise<void> };

/**
 * The work_due listener (a LISTEN: on the direct URL, past any pooler, decision 0043) and the safety net of a worker's
 * loops (one statement each WORK_POLL_SECONDS asks when each loop's next work falls due, decision 0054).
 */
export function startWorkerWaking(
  database: { db: Db; directUrl: string },
  logger: Logger,
  pollSeconds: number,
): WorkerWaking {
  const work = listenForWork(database.directUrl, logger);
  const safetyNet = startLoopSafetyNet({
    db: database.db,
    intervalMs: pollSeconds * 1_000,
    onError: (error) => logger.error({ err: error }, "the loops' safety net failed; retrying"),
  });
  return {
    work,
    safetyNet,
    pollIntervalMs: pollSeconds * 1_000,
    async close() {
      await work.close();
      await safetyNet.stop();
    },
  };
}

/** How much longer than the safety net's interval a watched loop waits before it looks for work on its own. */
export const LOOP_BACKSTOP_FACTOR = 10;

const ownPollIntervalMs = (waking: LoopWaking) =>
  waking.safetyNet && waking.pollIntervalMs !== undefined
    ? waking.pollIntervalMs * LOOP_BACKSTOP_FACTOR
    : waking.pollIntervalMs;

/** Postings to the external systems and DMS documents to post: due rows -> jobs (worker and all roles). */
export function startPostings(db: Db, logger: Logger, jobs: Jobs, waking: LoopWaking = {}): PostingDispatcher {
  const postings = startPostingDispatcher({
    db,
    sendMany: jobs.sendMany,
    wake: (count) => jobs.wake(POSTING_QUEUE, count),
    pollIntervalMs: ownPollIntervalMs(waking),
    safetyNet: waking.safetyNet,
    onError: (error) => logger.error({ err: error }, 'posting dispatch failed; retrying'),
  });
  const dms = startDmsDispatcher({
    db,
    sendMany: jobs.sendMany,
    wake: (count) => jobs.wake(DMS_QUEUE, count),
    pollIntervalMs: ownPollIntervalMs(waking),
    safetyNet: waking.safetyNet,
    onError: (error) => logger.error({ err: error }, 'DMS dispatch failed; retrying'),
  });
  waking.work?.onWork('postings', postings);
  waking.work?.onWork('dms', dms);
  return loopsTogether([postings, dms]);
}

/** Webhook fan-out: events -> deliveries and their jobs (worker and all roles). */
export function startWebhookDelivery(db: Db, logger: Logger, jobs: Jobs, waking: LoopWaking = {}): WebhookDispatcher {
  const loop = startWebhookDispatcher({
    db,
    logger,
    deliverableTypes: webhookEventTypes,
    enqueue: deliveryEnqueuer(jobs.sendMany),
    wake: (deliveries) => jobs.wake(DELIVERY_QUEUE, deliveries),
    pollIntervalMs: ownPollIntervalMs(waking),
    safetyNet: waking.safetyNet,
  });
  waking.work?.onWork('events', loop);
  return loop;
}
