// Webhook endpoints as an administrator manages them (the operator CLI): add, list, disable, enable, test,
// rotate the secret; and the delivery log with its resend action. Secrets are sealed at rest, returned only by
// add and rotate, and never by list. Each write is one transaction; one that makes deliveries due sends their
// webhooks.deliver jobs in it (enqueue), and a worker does the sending.
import { sql, type Selectable } from 'kysely';
import type { WebhookDelivery, WebhookEndpoint } from '../../../generated/kysely/types.js';
import { getOrganization } from '../access/organizations.js';
import { inTransaction, type Db } from '../database/transaction.js';
import { ApiError } from '../errors/api-error.js';
import { newId } from '../ids.js';
import {
  addressRefusal,
  DestinationRefused,
  resolveDestination,
  type Destination,
  type DestinationPolicy,
} from './destination.js';
import { newSigningSecret, seal } from './secret-box.js';
import type { EnqueueDeliveries } from './types.js';

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

/** Every column but the secrets. */
const ENDPOINT_COLUMNS = [
  'organization_id',
  'id',
  'url',
  'events',
  'enabled',
  'disabled_reason',
  'disabled_at',
  'consecutive_failures',
  'previous_secret_expires_at',
  'created_at',
  'updated_at',
] as const;
type EndpointRow = Pick<Selectable<WebhookEndpoint>, (typeof ENDPOINT_COLUMNS)[number]>;

/** An endpoint as shown to people and sent as the object of webhook.test: everything but its secrets. */
export function toEndpointSummary(row: EndpointRow, now = new Date()): EndpointSummary {
  const overlap =
    row.previous_secret_expires_at && row.previous_secret_expires_at > now
      ? row.previous_secret_expires_at.toISOString()
      : null;
  return {
    id: row.id,
    organizationId: row.organization_id,
    url: row.url,
    events: row.events,
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    disabledAt: row.disabled_at?.toISOString() ?? null,
    consecutiveFailures: row.consecutive_failures,
    previousSecretExpiresAt: overlap,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export interface EndpointSettings {
  policy: DestinationPolicy;
  secretKey: Buffer;
  /** The event types an endpoint may ask for (those the registry can build). */
  eventTypes: readonly string[];
}

/** Checks the URL (scheme, resolved addresses) and the events, then stores the endpoint with a sealed new secret. */
export async function addEndpoint(
  db: Db,
  settings: EndpointSettings,
  input: { organizationId: string; url: string; events: string[] },
): Promise<{ id: string; secret: string }> {
  const events = [...new Set(input.events)];
  if (events.length === 0) throw new ApiError('invalid_field', 'Give at least one event type, or * for all.');
  const unknown = events.filter((type) => type !== ALL_EVENTS && !settings.eventTypes.includes(type));
  if (unknown.length > 0)
    throw new ApiError(
      'invalid_field',
      `Unknown event type ${unknown.join(', ')}; the types are ${settings.eventTypes.join(', ')} (or * for all).`,
    );
  await getOrganization(db, input.organizationId);
  const destination = await checkedDestination(input.url, settings.policy);
  const id = newId('we');
  const secret = newSigningSecret();
  await db
    .insertInto('webhook_endpoints')
    .values({
      organization_id: input.organizationId,
      id,
      url: destination.url.toString(),
      events: events.includes(ALL_EVENTS) ? [ALL_EVENTS] : events,
      secret_ciphertext: seal(secret, settings.secretKey),
    })
    .execute();
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
export async function withLoopbackHint(
  refusal: DestinationRefused,
  url: string,
  policy: DestinationPolicy,
): Promise<DestinationRefused> {
  if (policy.allowLoopback) return refusal;
  const local = await resolveDestination(url, { ...policy, allowLoopback: true }).catch(() => null);
  // Allowing loopback also allows plain http to any host; the hint is only for a destination on loopback.
  const onLoopback =
    local !== null && (local.url.protocol === 'https:' || addressRefusal(local.address, policy) !== null);
  if (!onLoopback) return refusal;
  return new DestinationRefused(
    `${refusal.message}. For a receiver on this machine (tests, local trials), set ${LOOPBACK_SETTING}=true ` +
      'in the environment or the .env file that both the CLI and the worker (npm start) read; production refuses it',
  );
}

export async function listEndpoints(db: Db, organizationId: string): Promise<EndpointSummary[]> {
  const rows = await db
    .selectFrom('webhook_endpoints')
    .select(ENDPOINT_COLUMNS)
    .where('organization_id', '=', organizationId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => toEndpointSummary(row));
}

/** An endpoint by id alone (operator commands read across organisations). */
export async function getEndpoint(db: Db, id: string, forUpdate = false): Promise<EndpointSummary> {
  const query = db.selectFrom('webhook_endpoints').select(ENDPOINT_COLUMNS).where('id', '=', id);
  const row = await (forUpdate ? query.forUpdate() : query).executeTakeFirst();
  if (!row) throw new ApiError('not_found', `No webhook endpoint ${id}.`);
  return toEndpointSummary(row);
}

/** The endpoint of one organisation as webhook.test carries it; null when it is gone. */
export async function readEndpointObject(db: Db, organizationId: string, id: string): Promise<EndpointSummary | null> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select(ENDPOINT_COLUMNS)
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toEndpointSummary(row) : null;
}

export async function disableEndpoint(
  db: Db,
  id: string,
  reason = 'disabled by an administrator',
): Promise<EndpointSummary> {
  const { numUpdatedRows } = await db
    .updateTable('webhook_endpoints')
    .set((eb) => ({ enabled: false, disabled_reason: reason, disabled_at: eb.fn('now'), updated_at: eb.fn('now') }))
    .where('id', '=', id)
    .where('enabled', '=', true)
    .executeTakeFirst();
  const endpoint = await getEndpoint(db, id);
  if (numUpdatedRows === 0n && endpoint.enabled) throw new Error(`webhook endpoint ${id} could not be disabled`);
  return endpoint;
}

/**
 * Turns an endpoint back on and makes its failed deliveries due now, with a fresh retry schedule. Its pending
 * deliveries get a job again (the jobs that ran while it was off did nothing); a duplicate of a job still queued
 * does nothing either.
 */
export async function enableEndpoint(
  db: Db,
  enqueue: EnqueueDeliveries,
  id: string,
): Promise<{ endpoint: EndpointSummary; resent: number }> {
  return inTransaction(db, async (tx) => {
    const endpoint = await getEndpoint(tx, id, true);
    await tx
      .updateTable('webhook_endpoints')
      .set((eb) => ({
        enabled: true,
        disabled_reason: null,
        disabled_at: null,
        consecutive_failures: 0,
        updated_at: eb.fn('now'),
      }))
      .where('organization_id', '=', endpoint.organizationId)
      .where('id', '=', id)
      .execute();
    const { numUpdatedRows } = await tx
      .updateTable('webhook_deliveries')
      .set((eb) => ({ status: 'pending', attempts: 0, next_attempt_at: eb.fn('now'), updated_at: eb.fn('now') }))
      .where('organization_id', '=', endpoint.organizationId)
      .where('endpoint_id', '=', id)
      .where('status', '=', 'failed')
      .executeTakeFirst();
    const pending = await tx
      .selectFrom('webhook_deliveries')
      .select(['id', 'attempts', 'next_attempt_at'])
      .where('organization_id', '=', endpoint.organizationId)
      .where('endpoint_id', '=', id)
      .where('status', '=', 'pending')
      .execute();
    await enqueue(
      tx,
      pending.map((d) => ({
        organizationId: endpoint.organizationId,
        deliveryId: d.id,
        endpointId: id,
        attempts: d.attempts,
        ...(d.next_attempt_at ? { startAfter: d.next_attempt_at } : {}),
      })),
    );
    return { endpoint: await getEndpoint(tx, id), resent: Number(numUpdatedRows) };
  });
}

/** Writes a webhook.test event for this endpoint only, and its delivery, due now. */
export async function testEndpoint(
  db: Db,
  enqueue: EnqueueDeliveries,
  id: string,
): Promise<{ eventId: string; deliveryId: string }> {
  return inTransaction(db, async (tx) => {
    const endpoint = await getEndpoint(tx, id, true);
    if (!endpoint.enabled) throw new ApiError('invalid_state', `Webhook endpoint ${id} is disabled; enable it first.`);
    const eventId = newId('evt');
    const deliveryId = newId('whd');
    // dispatched_at is set at once: the test goes to this endpoint alone, never through the fan-out.
    await tx
      .insertInto('events')
      .values((eb) => ({
        organization_id: endpoint.organizationId,
        id: eventId,
        type: TEST_EVENT,
        resource: ENDPOINT_RESOURCE,
        record_id: id,
        dispatched_at: eb.fn('now'),
      }))
      .execute();
    await tx
      .insertInto('webhook_deliveries')
      .values((eb) => ({
        organization_id: endpoint.organizationId,
        id: deliveryId,
        endpoint_id: id,
        event_id: eventId,
        event_type: TEST_EVENT,
        status: 'pending',
        next_attempt_at: eb.fn('now'),
      }))
      .execute();
    await enqueue(tx, [{ organizationId: endpoint.organizationId, deliveryId, endpointId: id, attempts: 0 }]);
    return { eventId, deliveryId };
  });
}

type DeliveryRow = Selectable<WebhookDelivery>;

function toDeliverySummary(row: DeliveryRow): DeliverySummary {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status as DeliverySummary['status'],
    attempts: row.attempts,
    lastResponseCode: row.last_response_code,
    lastDurationMs: row.last_duration_ms,
    lastError: row.last_error,
    // A pending delivery being sent right now shows the end of its job's lease: when it is tried again if this attempt is lost.
    nextAttemptAt: row.status === 'pending' ? (row.next_attempt_at?.toISOString() ?? null) : null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** The endpoint's delivery log, newest first. */
export async function listDeliveries(db: Db, endpointId: string, limit = 100): Promise<DeliverySummary[]> {
  const endpoint = await getEndpoint(db, endpointId);
  const rows = await db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('organization_id', '=', endpoint.organizationId)
    .where('endpoint_id', '=', endpointId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map(toDeliverySummary);
}

/** One delivery of one organisation's endpoint; null when there is none (the console checks before it resends). */
export async function readDelivery(
  db: Db,
  organizationId: string,
  endpointId: string,
  deliveryId: string,
): Promise<DeliverySummary | null> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('endpoint_id', '=', endpointId)
    .where('id', '=', deliveryId)
    .executeTakeFirst();
  return row ? toDeliverySummary(row) : null;
}

/** Sends a delivery again (same event id), due now with a fresh retry schedule. */
export async function resendDelivery(db: Db, enqueue: EnqueueDeliveries, deliveryId: string): Promise<DeliverySummary> {
  return inTransaction(db, async (tx) => {
    const row = await tx
      .updateTable('webhook_deliveries')
      .set((eb) => ({ status: 'pending', attempts: 0, next_attempt_at: eb.fn('now'), updated_at: eb.fn('now') }))
      .where('id', '=', deliveryId)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new ApiError('not_found', `No webhook delivery ${deliveryId}.`);
    await enqueue(tx, [
      { organizationId: row.organization_id, deliveryId: row.id, endpointId: row.endpoint_id, attempts: 0 },
    ]);
    return toDeliverySummary(row);
  });
}

/** A new secret signs from now on; the old one also signs until the overlap ends (0 hours: it stops now). */
export async function rotateSecret(
  db: Db,
  secretKey: Buffer,
  id: string,
  overlapHours: number,
): Promise<{ id: string; secret: string; previousSecretExpiresAt: string | null }> {
  return inTransaction(db, async (tx) => {
    const endpoint = await getEndpoint(tx, id, true);
    const secret = newSigningSecret();
    const overlap = overlapHours > 0;
    const row = await tx
      .updateTable('webhook_endpoints')
      .set((eb) => ({
        previous_secret_ciphertext: overlap ? eb.ref('secret_ciphertext') : null,
        // The overlap's end from the database's clock: interval arithmetic has no builder form; the seconds are bound.
        previous_secret_expires_at: overlap
          ? sql<Date>`now() + make_interval(secs => ${overlapHours * 3600}::float8)`
          : null,
        secret_ciphertext: seal(secret, secretKey),
        updated_at: eb.fn('now'),
      }))
      .where('organization_id', '=', endpoint.organizationId)
      .where('id', '=', id)
      .returning('previous_secret_expires_at')
      .executeTakeFirstOrThrow();
    return { id, secret, previousSecretExpiresAt: row.previous_secret_expires_at?.toISOString() ?? null };
  });
}
