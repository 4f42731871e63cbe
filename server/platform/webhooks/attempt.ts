// One attempt of one claimed delivery: read the event and the endpoint, build the envelope (the record as it is
// now), check the destination again and connect to the address checked, sign with every live secret, POST.
import { jobActor } from '../access/actor.js';
import type { Db } from '../database/transaction.js';
import { DestinationRefused, resolveDestination, type DestinationPolicy } from './destination.js';
import { envelopeBody } from './envelope.js';
import { webhookObject, type WebhookObjectRegistry } from './objects.js';
import { open } from './secret-box.js';
import { postJson, type SendOutcome } from './send.js';
import { SIGNATURE_HEADER, signatureHeader } from './signature.js';
import { DELIVERY_QUEUE, type ClaimedDelivery } from './types.js';

export interface AttemptSettings {
  objects: WebhookObjectRegistry;
  policy: DestinationPolicy;
  secretKey: Buffer;
  timeoutMs: number;
  objectLimitBytes: number;
}

export async function attemptDelivery(db: Db, settings: AttemptSettings, claim: ClaimedDelivery): Promise<SendOutcome> {
  const failed = (error: string): SendOutcome => ({ ok: false, status: null, durationMs: 0, error });
  const row = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as ep', (join) =>
      join.onRef('ep.organization_id', '=', 'd.organization_id').onRef('ep.id', '=', 'd.endpoint_id'),
    )
    .innerJoin('organizations as o', 'o.id', 'd.organization_id')
    .leftJoin('events as e', (join) =>
      join.onRef('e.organization_id', '=', 'd.organization_id').onRef('e.id', '=', 'd.event_id'),
    )
    .select([
      'd.event_id',
      'd.event_type',
      'e.record_id',
      'e.created_at as event_created_at',
      'ep.url',
      'ep.secret_ciphertext',
      'ep.previous_secret_ciphertext',
      'ep.previous_secret_expires_at',
      'o.name as organization_name',
      'o.base_currency',
      'o.delivery_module_enabled',
      'o.field_sales_module_enabled',
    ])
    .where('d.organization_id', '=', claim.organizationId)
    .where('d.id', '=', claim.id)
    .executeTakeFirst();
  if (!row) return failed('the delivery or its endpoint is gone');
  if (row.record_id === null || row.event_created_at === null) return failed('the event is gone');
  const source = settings.objects[row.event_type];
  if (!source) return failed(`no object source for ${row.event_type}`);

  const now = new Date();
  let body: string;
  try {
    // The object is read as the delivery job, with no scopes: never a personal (customers:pii) field.
    const actor = jobActor(
      {
        id: claim.organizationId,
        name: row.organization_name,
        baseCurrency: row.base_currency,
        deliveryModuleEnabled: row.delivery_module_enabled,
        fieldSalesModuleEnabled: row.field_sales_module_enabled,
      },
      DELIVERY_QUEUE,
    );
    const object = await webhookObject(source, db, actor, row.record_id, now, settings.objectLimitBytes);
    body = envelopeBody(
      { organizationId: claim.organizationId, id: row.event_id, type: row.event_type, createdAt: row.event_created_at },
      object,
    );
  } catch {
    return failed('the object could not be read; retried later');
  }

  let destination: Awaited<ReturnType<typeof resolveDestination>>;
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
  return postJson(
    destination,
    body,
    { [SIGNATURE_HEADER]: signatureHeader(secrets, timestamp, body) },
    settings.timeoutMs,
  );
}
