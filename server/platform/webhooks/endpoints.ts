// Webhook endpoints as an administrator manages them (the operator CLI): add, list, disable, enable, test,
// rotate the secret; and the delivery log with its resend action. Secrets are sealed at rest, returned only by
// add and rotate, and never by list. Each write is one transaction; one that makes deliveries due sends their
// webhooks.deliver jobs in it (enqueue), and a worker does the sending.
import type pg from 'pg';
import { getOrganization } from '../access/organizations.js';
import { inTransaction } from '../database/transaction.js';
import { ApiError } from '../errors/api-error.js';
import { newId } from '../ids.js';
import { addressRefusal, DestinationRefused, resolveDestination, type Destination, type DestinationPolicy } from './destination.js';
import { newSigningSecret, seal } from './secret-box.js';
import type { EnqueueDeliveries } from './deliver.js';

export const ALL_EVENTS = '*';
export const TEST_EVENT = 'webhook.test';
export const ENDPOINT_RESOURCE = 'webhook_endpoint';

export interface EndpointSummary {
  id: string;
  organizationId: string;
  url: string;
  events: string[];
  enabled: boolean;
  disabledReason: string | null;
  disabledAt: string | null;
  consecutiveFailures: number;
  /** Until when the previous secret still signs (during a rotation), else null. */
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface DeliverySummary {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  lastResponseCode: number | null;
  lastDurationMs: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
  updatedAt: string;
}

interface EndpointRow {
  organization_id: string; id: string; url: string; events: string[]; enabled: boolean; disabled_reason: string | null; disabled_at: Date | null;
  consecutive_failures: number; previous_secret_expires_at: Date | null; created_at: Date; updated_at: Date;
}

const ENDPOINT_COLUMNS = 'organization_id, id, url, events, enabled, disabled_reason, disabled_at, consecutive_failures, previous_secret_expires_at, created_at, updated_at';

/** An endpoint as shown to people and sent as the object of webhook.test: everything but its secrets. */
export function toEndpointSummary(row: EndpointRow, now = new Date()): EndpointSummary {
  const overlap = row.previous_secret_expires_at && row.previous_secret_expires_at > now ? row.previous_secret_expires_at.toISOString() : null;
  return {
    id: row.id, organizationId: row.organization_id, url: row.url, events: row.events, enabled: row.enabled,
    disabledReason: row.disabled_reason, disabledAt: row.disabled_at?.toISOString() ?? null, consecutiveFailures: row.consecutive_failures,
    previousSecretExpiresAt: overlap, createdAt: row.created_at.toISOString(), updatedAt: row.updated_at.toISOString(),
  };
}

export interface EndpointSettings {
  policy: DestinationPolicy;
  secretKey: Buffer;
  /** The event types an endpoint may ask for (those the registry can build). */
  eventTypes: readonly string[];
}

/** Checks the URL (scheme, resolved addresses) and the events, then stores the endpoint with a sealed new secret. */
export async function addEndpoint(pool: pg.Pool, settings: EndpointSettings, input: { organizationId: string; url: string; events: string[] }): Promise<{ id: string; secret: string }> {
  const events = [...new Set(input.events)];
  if (events.length === 0) throw new ApiError('invalid_field', 'Give at least one event type, or * for all.');
  const unknown = events.filter((type) => type !== ALL_EVENTS && !settings.eventTypes.includes(type));
  if (unknown.length > 0) throw new ApiError('invalid_field', `Unknown event type ${unknown.join(', ')}; the types are ${settings.eventTypes.join(', ')} (or * for all).`);
  await getOrganization(pool, input.organizationId);
  const destination = await checkedDestination(input.url, settings.policy);
  const id = newId('we');
  const secret = newSigningSecret();
  await pool.query(
    'INSERT INTO webhook_endpoints (organization_id, id, url, events, secret_ciphertext) VALUES ($1, $2, $3, $4, $5)',
    [input.organizationId, id, destination.url.toString(), events.includes(ALL_EVENTS) ? [ALL_EVENTS] : events, seal(secret, settings.secretKey)],
  );
  return { id, secret };
}

/** The setting that lets webhooks go to loopback addresses over plain http; the refusal names it. */
export const LOOPBACK_SETTING = 'WEBHOOK_ALLOW_LOOPBACK';

/**
 * resolveDestination, with a refusal that only loopback stood in the way of completed by how to allow it: a
 * developer trying a receiver on this machine otherwise cannot tell that a setting exists, nor that the worker
 * (which checks again at every send) needs it as well as the CLI.
 */
async function checkedDestination(url: string, policy: DestinationPolicy): Promise<Destination> {
  try {
    return await resolveDestination(url, policy);
  } catch (error) {
    throw error instanceof DestinationRefused ? await withLoopbackHint(error, url, policy) : error;
  }
}

/**
 * The refusal of `url`, completed by how to allow it when loopback alone stood in the way (the delivery attempt can
 * use it too, for the worker's own refusal at send time).
 */
export async function withLoopbackHint(refusal: DestinationRefused, url: string, policy: DestinationPolicy): Promise<DestinationRefused> {
  if (policy.allowLoopback) return refusal;
  const local = await resolveDestination(url, { ...policy, allowLoopback: true }).catch(() => null);
  // Allowing loopback also allows plain http to any host; the hint is only for a destination on loopback.
  const onLoopback = local !== null && (local.url.protocol === 'https:' || addressRefusal(local.address, policy) !== null);
  if (!onLoopback) return refusal;
  return new DestinationRefused(`${refusal.message}. For a receiver on this machine (tests, local trials), set ${LOOPBACK_SETTING}=true `
    + 'in the environment or the .env file that both the CLI and the worker (npm start) read; production refuses it');
}

export async function listEndpoints(db: pg.Pool, organizationId: string): Promise<EndpointSummary[]> {
  const { rows } = await db.query<EndpointRow>(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE organization_id = $1 ORDER BY created_at, id`, [organizationId]);
  return rows.map((row) => toEndpointSummary(row));
}

/** An endpoint by id alone (operator commands read across organisations). */
export async function getEndpoint(db: pg.Pool | pg.PoolClient, id: string, forUpdate = false): Promise<EndpointSummary> {
  const { rows } = await db.query<EndpointRow>(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1${forUpdate ? ' FOR UPDATE' : ''}`, [id]);
  if (!rows[0]) throw new ApiError('not_found', `No webhook endpoint ${id}.`);
  return toEndpointSummary(rows[0]);
}

/** The endpoint of one organisation as webhook.test carries it; null when it is gone. */
export async function readEndpointObject(db: pg.Pool, organizationId: string, id: string): Promise<EndpointSummary | null> {
  const { rows } = await db.query<EndpointRow>(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE organization_id = $1 AND id = $2`, [organizationId, id]);
  return rows[0] ? toEndpointSummary(rows[0]) : null;
}

export async function disableEndpoint(pool: pg.Pool, id: string, reason = 'disabled by an administrator'): Promise<EndpointSummary> {
  const { rowCount } = await pool.query(
    `UPDATE webhook_endpoints SET enabled = false, disabled_reason = $2, disabled_at = now(), updated_at = now() WHERE id = $1 AND enabled`, [id, reason]);
  const endpoint = await getEndpoint(pool, id);
  if (rowCount === 0 && endpoint.enabled) throw new Error(`webhook endpoint ${id} could not be disabled`);
  return endpoint;
}

/**
 * Turns an endpoint back on and makes its failed deliveries due now, with a fresh retry schedule. Its pending
 * deliveries get a job again (the jobs that ran while it was off did nothing); a duplicate of a job still queued
 * does nothing either.
 */
export async function enableEndpoint(pool: pg.Pool, enqueue: EnqueueDeliveries, id: string): Promise<{ endpoint: EndpointSummary; resent: number }> {
  return inTransaction(pool, async (tx) => {
    const endpoint = await getEndpoint(tx, id, true);
    await tx.query(
      `UPDATE webhook_endpoints SET enabled = true, disabled_reason = NULL, disabled_at = NULL, consecutive_failures = 0, updated_at = now()
        WHERE organization_id = $1 AND id = $2`, [endpoint.organizationId, id]);
    const { rowCount } = await tx.query(
      `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = now(), updated_at = now()
        WHERE organization_id = $1 AND endpoint_id = $2 AND status = 'failed'`, [endpoint.organizationId, id]);
    const { rows: pending } = await tx.query<{ id: string; attempts: number; next_attempt_at: Date | null }>(
      `SELECT id, attempts, next_attempt_at FROM webhook_deliveries WHERE organization_id = $1 AND endpoint_id = $2 AND status = 'pending'`, [endpoint.organizationId, id]);
    await enqueue(tx, pending.map((d) => ({
      organizationId: endpoint.organizationId, deliveryId: d.id, endpointId: id, attempts: d.attempts, ...(d.next_attempt_at ? { startAfter: d.next_attempt_at } : {}),
    })));
    return { endpoint: await getEndpoint(tx, id), resent: rowCount ?? 0 };
  });
}

/** Writes a webhook.test event for this endpoint only, and its delivery, due now. */
export async function testEndpoint(pool: pg.Pool, enqueue: EnqueueDeliveries, id: string): Promise<{ eventId: string; deliveryId: string }> {
  return inTransaction(pool, async (tx) => {
    const endpoint = await getEndpoint(tx, id, true);
    if (!endpoint.enabled) throw new ApiError('invalid_state', `Webhook endpoint ${id} is disabled; enable it first.`);
    const eventId = newId('evt');
    const deliveryId = newId('whd');
    // dispatched_at is set at once: the test goes to this endpoint alone, never through the fan-out.
    await tx.query(
      `INSERT INTO events (organization_id, id, type, resource, record_id, dispatched_at) VALUES ($1, $2, $3, $4, $5, now())`,
      [endpoint.organizationId, eventId, TEST_EVENT, ENDPOINT_RESOURCE, id]);
    await tx.query(
      `INSERT INTO webhook_deliveries (organization_id, id, endpoint_id, event_id, event_type, status, next_attempt_at) VALUES ($1, $2, $3, $4, $5, 'pending', now())`,
      [endpoint.organizationId, deliveryId, id, eventId, TEST_EVENT]);
    await enqueue(tx, [{ organizationId: endpoint.organizationId, deliveryId, endpointId: id, attempts: 0 }]);
    return { eventId, deliveryId };
  });
}

interface DeliveryRow {
  id: string; endpoint_id: string; event_id: string; event_type: string; status: DeliverySummary['status']; attempts: number;
  last_response_code: number | null; last_duration_ms: number | null; last_error: string | null; next_attempt_at: Date | null; created_at: Date; updated_at: Date;
}

function toDeliverySummary(row: DeliveryRow): DeliverySummary {
  return {
    id: row.id, endpointId: row.endpoint_id, eventId: row.event_id, eventType: row.event_type, status: row.status, attempts: row.attempts,
    lastResponseCode: row.last_response_code, lastDurationMs: row.last_duration_ms, lastError: row.last_error,
    // A pending delivery being sent right now shows the end of its job's lease: when it is tried again if this attempt is lost.
    nextAttemptAt: row.status === 'pending' ? row.next_attempt_at?.toISOString() ?? null : null,
    createdAt: row.created_at.toISOString(), updatedAt: row.updated_at.toISOString(),
  };
}

/** The endpoint's delivery log, newest first. */
export async function listDeliveries(pool: pg.Pool, endpointId: string, limit = 100): Promise<DeliverySummary[]> {
  const endpoint = await getEndpoint(pool, endpointId);
  const { rows } = await pool.query<DeliveryRow>(
    `SELECT * FROM webhook_deliveries WHERE organization_id = $1 AND endpoint_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3`,
    [endpoint.organizationId, endpointId, limit]);
  return rows.map(toDeliverySummary);
}

/** Sends a delivery again (same event id), due now with a fresh retry schedule. */
export async function resendDelivery(pool: pg.Pool, enqueue: EnqueueDeliveries, deliveryId: string): Promise<DeliverySummary> {
  return inTransaction(pool, async (tx) => {
    const { rows } = await tx.query<DeliveryRow & { organization_id: string }>(
      `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = now(), updated_at = now() WHERE id = $1 RETURNING *`, [deliveryId]);
    const row = rows[0];
    if (!row) throw new ApiError('not_found', `No webhook delivery ${deliveryId}.`);
    await enqueue(tx, [{ organizationId: row.organization_id, deliveryId: row.id, endpointId: row.endpoint_id, attempts: 0 }]);
    return toDeliverySummary(row);
  });
}

/** A new secret signs from now on; the old one also signs until the overlap ends (0 hours: it stops now). */
export async function rotateSecret(pool: pg.Pool, secretKey: Buffer, id: string, overlapHours: number): Promise<{ id: string; secret: string; previousSecretExpiresAt: string | null }> {
  return inTransaction(pool, async (tx) => {
    const endpoint = await getEndpoint(tx, id, true);
    const secret = newSigningSecret();
    const { rows } = await tx.query<{ previous_secret_expires_at: Date | null }>(
      `UPDATE webhook_endpoints
          SET previous_secret_ciphertext = CASE WHEN $3::float8 > 0 THEN secret_ciphertext END,
              previous_secret_expires_at = CASE WHEN $3::float8 > 0 THEN now() + make_interval(secs => $3::float8 * 3600) END,
              secret_ciphertext = $4, updated_at = now()
        WHERE organization_id = $1 AND id = $2 RETURNING previous_secret_expires_at`,
      [endpoint.organizationId, id, overlapHours, seal(secret, secretKey)]);
    return { id, secret, previousSecretExpiresAt: rows[0]!.previous_secret_expires_at?.toISOString() ?? null };
  });
}
