// The delivery loop of a worker process: every poll it dispatches new events into deliveries, claims the due
// ones it has room for (a lease each, SKIP LOCKED, a few per endpoint) and sends them concurrently without
// waiting for one another, so a slow or dead endpoint holds only its own slots. A stop stops claiming and waits
// for the attempts under way; any it cannot wait for keeps its lease and is sent again later (at least once).
import type pg from 'pg';
import type { Logger } from 'pino';
import { attemptDelivery, type AttemptSettings } from './attempt.js';
import { claimDueDeliveries, type ClaimedDelivery } from './claim.js';
import { dispatchEvents } from './dispatch.js';
import { readEndpointObject, TEST_EVENT } from './endpoints.js';
import { OBJECT_LIMIT_BYTES, type WebhookObjectRegistry } from './objects.js';
import { DISABLE_AFTER_FAILED_EVENTS, recordOutcome } from './outcome.js';
import { DELIVERY_TIMEOUT_MS, type SendOutcome } from './send.js';
import type { DestinationPolicy } from './destination.js';

export interface WebhookWorkerOptions {
  pool: pg.Pool;
  logger: Logger;
  /** Event type -> object source, from the composition level; webhook.test is added here. */
  objects: WebhookObjectRegistry;
  policy: DestinationPolicy;
  secretKey: Buffer;
  retryScheduleSeconds: readonly number[];
  pollIntervalMs?: number;
  maxInFlight?: number;
  perEndpointInFlight?: number;
  leaseSeconds?: number;
  timeoutMs?: number;
  objectLimitBytes?: number;
  disableAfterFailedEvents?: number;
}

export interface WebhookWorker {
  /** Stops claiming and waits up to timeoutMs for the attempts under way. */
  stop(timeoutMs: number): Promise<void>;
}

/** The event types the engine can deliver with a registry: the registry's plus webhook.test. */
export function withTestEvent(objects: WebhookObjectRegistry): WebhookObjectRegistry {
  return {
    ...objects,
    [TEST_EVENT]: {
      read: async (pool, organizationId, id) => (await readEndpointObject(pool, organizationId, id)) as Record<string, unknown> | null,
      fetchPath: () => '',
    },
  };
}

export function startWebhookWorker(options: WebhookWorkerOptions): WebhookWorker {
  const { pool, logger } = options;
  const objects = withTestEvent(options.objects);
  const deliverable = Object.keys(options.objects);
  const pollIntervalMs = options.pollIntervalMs ?? 500;
  const maxInFlight = options.maxInFlight ?? 32;
  const perEndpoint = options.perEndpointInFlight ?? 4;
  const leaseSeconds = options.leaseSeconds ?? 60;
  const settings: AttemptSettings = {
    objects, policy: options.policy, secretKey: options.secretKey,
    timeoutMs: options.timeoutMs ?? DELIVERY_TIMEOUT_MS, objectLimitBytes: options.objectLimitBytes ?? OBJECT_LIMIT_BYTES,
  };
  const inFlight = new Set<Promise<void>>();
  const busy = new Map<string, number>();
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let ticking: Promise<void> | null = null;

  async function deliver(claim: ClaimedDelivery): Promise<void> {
    let outcome: SendOutcome;
    try {
      outcome = await attemptDelivery(pool, settings, claim);
    } catch (error) {
      outcome = { ok: false, status: null, durationMs: 0, error: 'internal error while sending' };
      logger.error({ err: error, deliveryId: claim.id }, 'webhook attempt failed unexpectedly');
    }
    try {
      const recorded = await recordOutcome(pool, claim, outcome, options.retryScheduleSeconds, options.disableAfterFailedEvents ?? DISABLE_AFTER_FAILED_EVENTS);
      const entry = { deliveryId: claim.id, endpointId: claim.endpointId, organizationId: claim.organizationId, attempt: claim.attempt, status: recorded.status, responseCode: outcome.status, durationMs: outcome.durationMs, error: outcome.error };
      if (recorded.endpointDisabled) logger.warn(entry, 'webhook endpoint disabled after consecutive failed events');
      else if (outcome.ok) logger.debug(entry, 'webhook delivered');
      else logger.info(entry, 'webhook attempt failed');
    } catch (error) {
      // The lease stays: the delivery is tried again when it ends.
      logger.error({ err: error, deliveryId: claim.id }, 'webhook outcome could not be recorded');
    }
  }

  function launch(claim: ClaimedDelivery): void {
    busy.set(claim.endpointId, (busy.get(claim.endpointId) ?? 0) + 1);
    const running: Promise<void> = deliver(claim).finally(() => {
      inFlight.delete(running);
      const left = (busy.get(claim.endpointId) ?? 1) - 1;
      if (left > 0) busy.set(claim.endpointId, left);
      else busy.delete(claim.endpointId);
      if (!stopped && inFlight.size === maxInFlight - 1) schedule(0); // a slot came free: claim at once
    });
    inFlight.add(running);
  }

  async function tick(): Promise<boolean> {
    let worked = false;
    try {
      const dispatched = await dispatchEvents(pool, deliverable);
      worked = dispatched.events > 0;
      if (stopped) return false;
      const claims = await claimDueDeliveries(pool, { capacity: maxInFlight - inFlight.size, perEndpoint, leaseSeconds, busy });
      for (const claim of claims) launch(claim);
      worked ||= claims.length > 0;
    } catch (error) {
      if (!stopped) logger.error({ err: error }, 'webhook delivery loop failed; retrying');
    }
    return worked;
  }

  function schedule(delayMs: number): void {
    if (stopped || ticking) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      ticking = tick().then((worked) => {
        ticking = null;
        schedule(worked ? 20 : pollIntervalMs);
      });
    }, delayMs);
  }

  schedule(0);
  return {
    async stop(timeoutMs) {
      stopped = true;
      if (timer) clearTimeout(timer);
      await ticking;
      let deadline: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...inFlight]),
        new Promise<void>((resolve) => { deadline = setTimeout(resolve, timeoutMs); }),
      ]);
      clearTimeout(deadline);
    },
  };
}
