// The shapes the webhook engine's files share (delivery jobs, claims, the enqueuer), in one file that imports none
// of them: deliver.ts composes attempt, dispatch, endpoints and outcome, and they import only this.
import type { Tx } from '../database/transaction.js';

export const DELIVERY_QUEUE = 'webhooks.deliver';

/** A job's data: the delivery, and how many attempts it had when the job was sent (this job is the next one). */
export interface DeliveryJobData {
  organizationId: string;
  deliveryId: string;
  attempts: number;
  /**
   * Attempts that dead workers may have counted before this job (the retry count of the job it replaces, when a job
   * that found its endpoint's slots all taken is sent again for later): claimDelivery allows for them.
   */
  retried?: number;
}

export interface DeliveryJob extends DeliveryJobData {
  endpointId: string;
  /** Not before this time (a Date) or this many seconds from now; now when absent. */
  startAfter?: Date | number;
}

/** Sends delivery jobs inside the caller's transaction. */
export type EnqueueDeliveries = (tx: Tx, jobs: DeliveryJob[]) => Promise<void>;

export interface ClaimedDelivery {
  organizationId: string;
  id: string;
  endpointId: string;
  /** The attempt number this claim is (1 for the first send). */
  attempt: number;
}

/**
 * Told of each delivery's recorded outcome, in the outcome's transaction (a module that follows its own endpoints'
 * deliveries: the DMS's flag callbacks). The platform names no module; composition wires it.
 */
export type OutcomeListener = (
  tx: Tx,
  claim: ClaimedDelivery,
  status: 'succeeded' | 'pending' | 'failed',
) => Promise<void>;
