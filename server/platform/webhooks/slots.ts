// The per-endpoint send limit, exact across any number of worker processes. An attempt sends only while it holds
// one of the endpoint's slots, a row (organization_id, endpoint_id, slot) with slot in 0 .. limit-1: the primary key
// is the bound, so two workers claiming at the same moment cannot both take the last slot. (pg-boss's
// groupConcurrency, still used to fetch mostly jobs whose endpoint has room, counts active jobs from a snapshot and
// lets several fetch loops through at once: it is a filter, not the limit.)
//
// A slot is leased by its process's heartbeat (jobs/processes.ts): the slots of a process that stopped beating for
// PROCESS_LEASE_SECONDS are taken back by any live worker, and the pg-boss jobs they held are failed in the same
// transaction, so pg-boss retries them at once (retryDelay) instead of after their 60 s expiry.
import { sql } from 'kysely';
import { inTransaction, type Db } from '../database/transaction.js';
import type { ClaimingQueue, FailJobs } from '../jobs/lost.js';
import { leaseCutoff } from '../jobs/processes.js';

export interface SlotClaim {
  organizationId: string;
  endpointId: string;
  /** Slots of this endpoint: 0 .. limit - 1. */
  limit: number;
  processId: string;
  jobId: string;
  jobRetryCount: number;
  deliveryId: string;
}

/** Takes a free slot of the endpoint for this job; the slot's number, or null when all `limit` are held. */
export async function claimSendSlot(db: Db, claim: SlotClaim): Promise<number | null> {
  // Two claims may pick the same free slot; the loser tries the next free one (at most `limit` tries in all).
  for (let tries = 0; tries < claim.limit; tries++) {
    // The first free slot number and its insert in one statement: the builder has no generate_series source
    // for an INSERT ... SELECT; the values are bound. ON CONFLICT: another process took that number meanwhile.
    const { rows } = await sql<{ slot: number }>`
      INSERT INTO webhook_send_slots (organization_id, endpoint_id, slot, process_id, job_id, job_retry_count, delivery_id)
      SELECT ${claim.organizationId}, ${claim.endpointId}, s, ${claim.processId}, ${claim.jobId}::uuid, ${claim.jobRetryCount}, ${claim.deliveryId}
        FROM generate_series(0, ${claim.limit - 1}::int) AS s
       WHERE NOT EXISTS (SELECT 1 FROM webhook_send_slots x WHERE x.organization_id = ${claim.organizationId} AND x.endpoint_id = ${claim.endpointId} AND x.slot = s)
       ORDER BY s LIMIT 1
      ON CONFLICT DO NOTHING
      RETURNING slot`.execute(db);
    if (rows[0]) return rows[0].slot;
    const held = await db
      .selectFrom('webhook_send_slots')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('organization_id', '=', claim.organizationId)
      .where('endpoint_id', '=', claim.endpointId)
      .where('slot', '<', claim.limit)
      .executeTakeFirstOrThrow();
    if (Number(held.n) >= claim.limit) return null;
  }
  return null;
}

/** Gives the slot back; false when it was no longer this process's (taken back after a missed lease). */
export async function releaseSendSlot(
  db: Db,
  slot: { organizationId: string; endpointId: string; slot: number; processId: string; jobId: string },
): Promise<boolean> {
  const result = await db
    .deleteFrom('webhook_send_slots')
    .where('organization_id', '=', slot.organizationId)
    .where('endpoint_id', '=', slot.endpointId)
    .where('slot', '=', slot.slot)
    .where('process_id', '=', slot.processId)
    .where('job_id', '=', slot.jobId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Takes back the slots of dead processes (no heartbeat within the lease, or stopped) and fails their jobs, in one
 * transaction: pg-boss then retries each job after its retryDelay, and the retry may send the attempt again (the
 * dead process may have sent it: at least once). Returns how many slots were taken back.
 */
export async function reclaimDeadSlots(db: Db, failJobs: FailJobs): Promise<number> {
  return inTransaction(db, async (tx) => {
    const taken = await tx
      .deleteFrom('webhook_send_slots')
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('service_processes as p')
              .select('p.id')
              .whereRef('p.id', '=', 'webhook_send_slots.process_id')
              .where('p.stopped_at', 'is', null)
              .where('p.heartbeat_at', '>', leaseCutoff()),
          ),
        ),
      )
      .returning(['job_id', 'job_retry_count'])
      .execute();
    if (taken.length > 0)
      await failJobs(
        tx,
        taken.map((row) => ({ id: row.job_id, retryCount: row.job_retry_count })),
      );
    return taken.length;
  });
}

/** Whether reclaimDeadSlots has a slot to take back: read in the probe after each heartbeat of a worker. */
export const deadSlotsExist = () => sql<boolean>`EXISTS (SELECT 1 FROM webhook_send_slots s
  WHERE NOT EXISTS (SELECT 1 FROM service_processes p
    WHERE p.id = s.process_id AND p.stopped_at IS NULL AND p.heartbeat_at > ${leaseCutoff()}))`;

/**
 * Delivery jobs whose worker died between taking the job and taking a send slot (jobs/lost.ts): a live handler takes
 * its slot (or sends the job again for later) within milliseconds of taking the job, and holds the slot until its
 * outcome is recorded, so an active job no slot names lost its worker. The job's own 60 s expiry stays the last resort.
 */
export const slotlessDeliveryJobs = (queue: string): ClaimingQueue => ({
  queue,
  // Over pg-boss's job row `j` (lost.ts's raw SQL): no slot names the job.
  unclaimed: sql<boolean>`NOT EXISTS (SELECT 1 FROM webhook_send_slots s WHERE s.job_id = j.id)`,
});
