// Events are written as outbox rows in the transaction of the change they describe; webhook delivery reads
// them later. A rolled-back change therefore never emits an event, and a committed one never loses it.
import type { Insertable } from 'kysely';
import type { Event } from '../../../generated/kysely/types.js';
import type { Tx } from '../database/transaction.js';
import { newId } from '../ids.js';

/**
 * `<resource>.<change>` (`customer.created`). Each module names the events it writes; those a webhook can carry are
 * declared with their object readers in the module's manifest, so the platform names no module's events.
 */
export type EventType = `${string}.${string}`;

export async function recordEvent(
  tx: Tx,
  organizationId: string,
  type: EventType,
  resource: string,
  recordId: string,
): Promise<void> {
  await recordEvents(tx, organizationId, type, resource, [recordId]);
}

/** One event of the same type for each record, in one statement. */
export async function recordEvents(
  tx: Tx,
  organizationId: string,
  type: EventType,
  resource: string,
  recordIds: readonly string[],
): Promise<void> {
  if (recordIds.length === 0) return;
  // One multi-row VALUES statement, however many records.
  await tx
    .insertInto('events')
    .values(recordIds.map((recordId) => eventRow(organizationId, type, resource, recordId)))
    .execute();
}

/**
 * The outbox row of one event, for a statement that writes it together with the change it describes (a
 * data-modifying CTE beside the record's insert or update: one round trip instead of two, same transaction).
 */
export function eventRow(
  organizationId: string,
  type: EventType,
  resource: string,
  recordId: string,
): Insertable<Event> {
  return { organization_id: organizationId, id: newId('evt'), type, resource, record_id: recordId };
}
