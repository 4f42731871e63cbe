// Wake-ups instead of polling (decision 0040). A worker's loops and job workers sleep until Postgres tells them there
// is work: the loops hear the channel work_due (NOTIFYed by triggers in the transaction that makes the work due; the
// payload names the loop), the job workers hear pg-boss's own channel (its insert NOTIFYs in the same statement, for
// queues created with notify, when a job is due now). Both LISTENs go through listenToChannel
// (database/notifications.ts), the one place that holds a session. While a listener is down nothing is heard: when
// it is back, everything is woken once, and the rare safety-net pass of each loop and worker covers the gap.
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { listenToChannel, type ChannelListener } from '../database/notifications.js';
import type { BackgroundLoop } from './loop.js';

/** The channel of the work_due triggers (migration work_due_notifications). */
export const WORK_DUE_CHANNEL = 'work_due';

/** The loops a payload of work_due wakes: 'dms', 'postings', 'events'. */
export type WorkKind = 'dms' | 'postings' | 'events';

/**
 * pg-boss's channel for a schema, as its notifyChannelSql computes it in SQL: 'pgboss_' and the first 24 hex
 * digits of the schema name's sha224.
 */
export function jobsChannel(schema: string): string {
  return `pgboss_${createHash('sha224').update(schema).digest('hex').slice(0, 24)}`;
}

export interface WorkListener {
  /** Wakes this loop on the payload `kind` (and whenever the listener is (re)established). */
  onWork(kind: WorkKind, loop: BackgroundLoop): void;
  close(): Promise<void>;
}

/** LISTENs on work_due and wakes the loops registered for each payload. */
export function listenForWork(databaseUrl: string, logger: Logger): WorkListener {
  const loops = new Map<string, BackgroundLoop[]>();
  const wakeAll = () => {
    for (const list of loops.values()) for (const loop of list) loop.wake();
  };
  const listener: ChannelListener = listenToChannel(
    databaseUrl,
    WORK_DUE_CHANNEL,
    {
      onNotification: (payload) => {
        for (const loop of loops.get(payload) ?? []) loop.wake();
      },
      // Notifications sent while no LISTEN was in place are lost: a pass of every loop finds their work.
      onListening: wakeAll,
      onLost: () => {},
    },
    logger,
  );
  return {
    onWork(kind, loop) {
      loops.set(kind, [...(loops.get(kind) ?? []), loop]);
    },
    close: () => listener.close(),
  };
}

/** LISTENs on pg-boss's channel: each payload is a queue whose idle workers fetch now (all queues when (re)established). */
export function listenForJobs(
  databaseUrl: string,
  schema: string,
  wake: (queue: string | null) => void,
  logger: Logger,
): ChannelListener {
  return listenToChannel(
    databaseUrl,
    jobsChannel(schema),
    {
      onNotification: (queue) => wake(queue),
      onListening: () => wake(null),
      onLost: () => {},
    },
    logger,
  );
}
