// One attempt of one claimed delivery: read the event and the endpoint, build the envelope (the record as it is
// now), check the destination again and connect to the address checked, sign with every live secret, POST.
import type pg from 'pg';
import { DestinationRefused, resolveDestination, type DestinationPolicy } from './destination.js';
import { envelopeBody } from './envelope.js';
import { webhookObject, type WebhookObjectRegistry } from './objects.js';
import { open } from './secret-box.js';
import { postJson, type SendOutcome } from './send.js';
import { SIGNATURE_HEADER, signatureHeader } from './signature.js';
import type { ClaimedDelivery } from './deliver.js';

export interface AttemptSettings {
  objects: WebhookObjectRegistry;
  policy: DestinationPolicy;
  secretKey: Buffer;
  timeoutMs: number;
  objectLimitBytes: number;
}

interface AttemptRow {
  event_id: string; event_type: string; record_id: string | null; event_created_at: Date | null;
  url: string; secret_ciphertext: string; previous_secret_ciphertext: string | null; previous_secret_expires_at: Date | null;
}

export async function attemptDelivery(pool: pg.Pool, settings: AttemptSettings, claim: ClaimedDelivery): Promise<SendOutcome> {
  const failed = (error: string): SendOutcome => ({ ok: false, status: null, durationMs: 0, error });
  const { rows } = await pool.query<AttemptRow>(
    `SELECT d.event_id, d.event_type, e.record_id, e.created_at AS event_created_at,
            ep.url, ep.secret_ciphertext, ep.previous_secret_ciphertext, ep.previous_secret_expires_at
       FROM webhook_deliveries d
       JOIN webhook_endpoints ep ON ep.organization_id = d.organization_id AND ep.id = d.endpoint_id
       LEFT JOIN events e ON e.organization_id = d.organization_id AND e.id = d.event_id
      WHERE d.organization_id = $1 AND d.id = $2`, [claim.organizationId, claim.id]);
  const row = rows[0];
  if (!row) return failed('the delivery or its endpoint is gone');
  if (row.record_id === null || row.event_created_at === null) return failed('the event is gone');
  const source = settings.objects[row.event_type];
  if (!source) return failed(`no object source for ${row.event_type}`);

  const now = new Date();
  let body: string;
  try {
    const object = await webhookObject(source, pool, claim.organizationId, row.record_id, now, settings.objectLimitBytes);
    body = envelopeBody({ organizationId: claim.organizationId, id: row.event_id, type: row.event_type, createdAt: row.event_created_at }, object);
  } catch {
    return failed('the object could not be read; retried later');
  }

  let destination;
  try {
    destination = await resolveDestination(row.url, settings.policy);
  } catch (error) {
    if (error instanceof DestinationRefused) return failed(`destination refused: ${error.message}`);
    throw error;
  }

  const secrets = [open(row.secret_ciphertext, settings.secretKey)];
  if (row.previous_secret_ciphertext && row.previous_secret_expires_at && row.previous_secret_expires_at > now) {
    secrets.push(open(row.previous_secret_ciphertext, settings.secretKey));
  }
  const timestamp = Math.floor(Date.now() / 1000);
  return postJson(destination, body, { [SIGNATURE_HEADER]: signatureHeader(secrets, timestamp, body) }, settings.timeoutMs);
}
