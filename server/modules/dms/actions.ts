// What the service does towards a DMS, each with its status kept current (dms_actions): a file batch's flag file
// (pending while any of its documents is still `received`, written once every flag is final, so the DMS knows when
// to fetch it), each flag callback to the connection's URL (retrying, delivered, failed), and each re-process an
// operator asks for (done). Every change of status is a dms.action.status_changed event carrying the action, and
// `admin dms actions` lists them, newest change first.
import type { Db, Tx } from '../../platform/database/transaction.js';
import { recordEvent } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';

export const DMS_ACTION = 'dms_action';
export const DMS_ACTION_STATUS_CHANGED = 'dms.action.status_changed';

export type ActionKind = 'flag_file' | 'callback' | 'reprocess';

/** An action as the event and the CLI show it. */
export interface DmsActionObject {
  id: string;
  connectionId: string;
  kind: ActionKind;
  /** The file's batch (flag_file), the webhook delivery (callback), the document (reprocess). */
  subjectId: string;
  status: string;
  detail: string | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * The action on `subjectId` is now `status` with `detail` (created when it is the first). A change of status is a
 * dms.action.status_changed event; a new detail alone (a callback's next attempt) is kept without one.
 */
export async function setAction(
  tx: Tx,
  organizationId: string,
  action: { connectionId: string; kind: ActionKind; subjectId: string; status: string; detail: string | null },
): Promise<void> {
  const inserted = await tx
    .insertInto('dms_actions')
    .values({
      organization_id: organizationId,
      id: newId('dma'),
      connection_id: action.connectionId,
      kind: action.kind,
      subject_id: action.subjectId,
      status: action.status,
      detail: action.detail,
    })
    .onConflict((conflict) => conflict.columns(['organization_id', 'kind', 'subject_id']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (inserted) {
    await recordEvent(tx, organizationId, DMS_ACTION_STATUS_CHANGED, DMS_ACTION, inserted.id);
    return;
  }
  const existing = await tx
    .selectFrom('dms_actions')
    .select(['id', 'status', 'detail'])
    .where('organization_id', '=', organizationId)
    .where('kind', '=', action.kind)
    .where('subject_id', '=', action.subjectId)
    .forUpdate()
    .executeTakeFirstOrThrow();
  if (existing.status === action.status && existing.detail === action.detail) return;
  await tx
    .updateTable('dms_actions')
    .set((eb) => ({ status: action.status, detail: action.detail, updated_at: eb.fn<Date>('now') }))
    .where('organization_id', '=', organizationId)
    .where('id', '=', existing.id)
    .execute();
  if (existing.status !== action.status)
    await recordEvent(tx, organizationId, DMS_ACTION_STATUS_CHANGED, DMS_ACTION, existing.id);
}

/** The flag files of the file batches among `batchIds`: written once none of their documents is `received`. */
export async function noteFlagFiles(tx: Tx, organizationId: string, batchIds: readonly string[]): Promise<void> {
  if (batchIds.length === 0) return;
  const batches = await tx
    .selectFrom('dms_batches as b')
    .leftJoin('dms_documents as d', (join) =>
      join.onRef('d.organization_id', '=', 'b.organization_id').onRef('d.batch_id', '=', 'b.id'),
    )
    .select([
      'b.id',
      'b.connection_id',
      (eb) => eb.fn.count<string>('d.id').as('documents'),
      (eb) => eb.fn.count<string>(eb.case().when('d.state', '=', 'received').then(1).end()).as('received'),
    ])
    .where('b.organization_id', '=', organizationId)
    .where('b.id', 'in', [...batchIds])
    .where('b.source', '=', 'xml_file')
    .where('b.file_status', '=', 'parsed')
    .groupBy(['b.id', 'b.connection_id'])
    .execute();
  for (const batch of batches) {
    const received = Number(batch.received);
    const documents = Number(batch.documents);
    await setAction(tx, organizationId, {
      connectionId: batch.connection_id,
      kind: 'flag_file',
      subjectId: batch.id,
      status: received === 0 ? 'written' : 'pending',
      detail:
        received === 0
          ? `Every one of the ${documents} flags is final: GET /dms/{system}/files/${batch.id}/flags.`
          : `${received} of ${documents} documents still received.`,
    });
  }
}

/** The file batches of these documents (to note their flag files after posting them). */
export async function fileBatchesOf(
  db: Db | Tx,
  organizationId: string,
  documentIds: readonly string[],
): Promise<string[]> {
  if (documentIds.length === 0) return [];
  const rows = await db
    .selectFrom('dms_documents')
    .select('batch_id')
    .distinct()
    .where('organization_id', '=', organizationId)
    .where('id', 'in', [...documentIds])
    .where('batch_id', 'like', 'dmf\\_%')
    .execute();
  return rows.map((row) => row.batch_id);
}

/**
 * A webhook delivery's outcome, when its endpoint is a DMS connection's callback: the callback action. The webhook
 * platform calls this in the outcome's transaction (composition/jobs.ts wires it).
 */
export async function noteCallback(
  tx: Tx,
  delivery: { organizationId: string; id: string; endpointId: string; attempt: number },
  status: 'succeeded' | 'pending' | 'failed',
): Promise<void> {
  const connection = await tx
    .selectFrom('dms_connections')
    .select('id')
    .where('organization_id', '=', delivery.organizationId)
    .where('webhook_endpoint_id', '=', delivery.endpointId)
    .executeTakeFirst();
  if (!connection) return;
  const last = await tx
    .selectFrom('webhook_deliveries')
    .select(['last_response_code', 'last_error'])
    .where('organization_id', '=', delivery.organizationId)
    .where('id', '=', delivery.id)
    .executeTakeFirst();
  const answer = last?.last_error ?? (last?.last_response_code ? `HTTP ${last.last_response_code}` : null);
  await setAction(tx, delivery.organizationId, {
    connectionId: connection.id,
    kind: 'callback',
    subjectId: delivery.id,
    status: status === 'succeeded' ? 'delivered' : status === 'pending' ? 'retrying' : 'failed',
    detail: `Attempt ${delivery.attempt}${answer ? `: ${answer}` : ''}.`,
  });
}

/** The organisation's actions, newest change first. */
export async function listActions(db: Db, organizationId: string, limit = 50): Promise<DmsActionObject[]> {
  const rows = await db
    .selectFrom('dms_actions')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .orderBy('updated_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map(toActionObject);
}

export async function findAction(db: Db, organizationId: string, id: string): Promise<DmsActionObject | null> {
  const row = await db
    .selectFrom('dms_actions')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toActionObject(row) : null;
}

function toActionObject(row: {
  id: string;
  connection_id: string;
  kind: string;
  subject_id: string;
  status: string;
  detail: string | null;
  created_at: Date;
  updated_at: Date;
}): DmsActionObject {
  return {
    id: row.id,
    connectionId: row.connection_id,
    kind: row.kind as ActionKind,
    subjectId: row.subject_id,
    status: row.status,
    detail: row.detail,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
