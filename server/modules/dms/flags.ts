// The flag of a DMS document: its row in dms_documents as the spec's DmsFlag (field names exactly as the spec:
// `mikonoRef`, `quickbooksRef`), the pull feed of a connection's flags (oldest change first), and the one writer of
// a flag's change, which also writes its `dms.document.flagged` event (outbox) in the same transaction.
import { sql, type Selectable } from 'kysely';
import type { components } from '../../../generated/api-types.js';
import type { DmsDocument as DmsDocumentTable } from '../../../generated/kysely/types.js';
import type { Db, Tx } from '../../platform/database/transaction.js';
import { recordEvents } from '../../platform/events/outbox.js';
import { readPage, type ListQuery, type ListRequest, type Page } from '../../platform/lists/page.js';
import { equals } from '../../platform/resources/filters.js';
import type { ReasonCode } from './reasons.js';

export type DmsFlag = components['schemas']['DmsFlag'];
export const DMS_DOCUMENT = 'dms_document';
export const DMS_DOCUMENT_FLAGGED = 'dms.document.flagged';

export const FLAG_COLUMNS = [
  'organization_id',
  'id',
  'connection_id',
  'distributor_code',
  'document_type',
  'document_number',
  'state',
  'note',
  'reason_code',
  'reason_text',
  'mikono_table',
  'mikono_id',
  'quickbooks_ref',
  'posted_at',
  'received_at',
  'updated_at',
] as const;
export type FlagRow = Pick<Selectable<DmsDocumentTable>, (typeof FLAG_COLUMNS)[number]>;

export function toFlag(row: FlagRow): DmsFlag {
  const flag: DmsFlag = {
    documentId: row.id,
    distributorCode: row.distributor_code,
    documentType: row.document_type,
    documentNumber: row.document_number,
    state: row.state as DmsFlag['state'],
    receivedAt: row.received_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
  if (row.state === 'received' && row.note !== null) flag.note = row.note;
  if (row.state === 'posted') {
    flag.mikonoRef = { table: row.mikono_table!, id: row.mikono_id! };
    flag.quickbooksRef = row.quickbooks_ref;
    flag.postedAt = row.posted_at!.toISOString();
  }
  if (row.state === 'rejected') {
    flag.reasonCode = row.reason_code as ReasonCode;
    flag.reasonText = row.reason_text!;
  }
  return flag;
}

/** A flag's change: the columns it sets (the rest keep their values). */
export type FlagChange =
  | {
      state: 'received';
      note: string | null;
      waitingFor: string | null;
      nextAttemptAt: Date | null;
      retryUntil?: Date | null;
    }
  | {
      state: 'posted';
      mikonoTable: string;
      mikonoId: string;
      quickbooksRef: string | null;
      accounting: { type: string; id: string } | null;
    }
  | { state: 'rejected'; reasonCode: ReasonCode; reasonText: string }
  | { state: 'superseded' };

/** Writes the change of the documents' flags and their dms.document.flagged events. */
export async function setFlags(
  tx: Tx,
  organizationId: string,
  ids: readonly string[],
  change: FlagChange,
): Promise<void> {
  if (ids.length === 0) return;
  if (change.state === 'posted') {
    await setPostedFlags(
      tx,
      organizationId,
      ids.map((id) => ({
        id,
        mikonoTable: change.mikonoTable,
        mikonoId: change.mikonoId,
        quickbooksRef: change.quickbooksRef,
        accounting: change.accounting,
      })),
    );
    return;
  }
  const common = {
    state: change.state,
    updated_at: new Date(),
    waiting_for: null as string | null,
    next_attempt_at: null as Date | null,
  };
  const set =
    change.state === 'received'
      ? {
          ...common,
          reason_code: null,
          reason_text: null,
          note: change.note,
          waiting_for: change.waitingFor,
          next_attempt_at: change.nextAttemptAt,
          // Stryker disable next-line ConditionalExpression: equivalent; spreading { retry_until } always sets it to undefined when no window is given, and Kysely leaves an undefined column out of the UPDATE.
          ...(change.retryUntil !== undefined ? { retry_until: change.retryUntil } : {}),
        }
      : // Stryker disable next-line ConditionalExpression: equivalent; a superseded change taken as a rejection sets reason_code and reason_text to undefined, which Kysely leaves out of the UPDATE.
        change.state === 'rejected'
        ? { ...common, note: null, reason_code: change.reasonCode, reason_text: change.reasonText }
        : { ...common, note: null };
  await tx
    .updateTable('dms_documents')
    .set(set)
    .where('organization_id', '=', organizationId)
    .where('id', 'in', [...ids])
    .execute();
  await recordEvents(tx, organizationId, DMS_DOCUMENT_FLAGGED, DMS_DOCUMENT, ids);
}

/** A document posted: the record it posted to, and the document whose accounting posting its flag follows. */
export interface PostedFlag {
  id: string;
  mikonoTable: string;
  mikonoId: string;
  quickbooksRef: string | null;
  accounting: { type: string; id: string } | null;
  /**
   * Applied, but its accounting posting is pending: the flag stays `received` with this note and waits for that
   * posting (accounting.ts settles it), never tried again by the dispatcher (no next attempt).
   */
  held?: { note: string; waitingFor: string } | null;
}

/**
 * setFlags' `posted` change for several documents, each with its own record (a set of invoices posted together):
 * one UPDATE for them all, and their dms.document.flagged events in one statement.
 */
export async function setPostedFlags(tx: Tx, organizationId: string, posted: readonly PostedFlag[]): Promise<void> {
  if (posted.length === 0) return;
  const rows = posted.map((flag) => ({
    id: flag.id,
    mikono_table: flag.mikonoTable,
    mikono_id: flag.mikonoId,
    quickbooks_ref: flag.quickbooksRef,
    accounting_type: flag.accounting?.type ?? null,
    accounting_id: flag.accounting?.id ?? null,
    note: flag.held?.note ?? null,
    waiting_for: flag.held?.waitingFor ?? null,
  }));
  const now = new Date();
  // A set of rows from one JSON parameter has no builder form (jsonb_to_recordset); every value is bound. A held row
  // (a note) stays `received` with the record it applied, in the same statement.
  await sql`
    UPDATE dms_documents AS d SET state = CASE WHEN x.note IS NULL THEN 'posted' ELSE 'received' END, updated_at = ${now},
           posted_at = CASE WHEN x.note IS NULL THEN ${now}::timestamptz END, waiting_for = x.waiting_for, next_attempt_at = NULL,
           note = x.note, reason_code = NULL, reason_text = NULL, mikono_table = x.mikono_table, mikono_id = x.mikono_id,
           quickbooks_ref = x.quickbooks_ref, accounting_type = x.accounting_type, accounting_id = x.accounting_id
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        AS x(id text, mikono_table text, mikono_id text, quickbooks_ref text, accounting_type text, accounting_id text, note text, waiting_for text)
     WHERE d.organization_id = ${organizationId} AND d.id = x.id`.execute(tx);
  await recordEvents(
    tx,
    organizationId,
    DMS_DOCUMENT_FLAGGED,
    DMS_DOCUMENT,
    posted.map((flag) => flag.id),
  );
}

export async function findFlags(db: Db | Tx, organizationId: string, ids: readonly string[]): Promise<FlagRow[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('dms_documents')
    .select(FLAG_COLUMNS)
    .where('organization_id', '=', organizationId)
    .where('id', 'in', [...ids])
    .execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => byId.get(id)!);
}

export async function findFlag(db: Db | Tx, organizationId: string, id: string): Promise<FlagRow | null> {
  return (
    (await db
      .selectFrom('dms_documents')
      .select(FLAG_COLUMNS)
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst()) ?? null
  );
}

/** The flags pull: the connection's flags changed at or after `since`, oldest change first (the change feed of every list). */
export async function listFlags(
  db: Db,
  organizationId: string,
  connectionId: string,
  request: ListRequest,
  filters: { since?: string; state?: string },
): Promise<Page<FlagRow>> {
  const query = db
    .selectFrom('dms_documents as t')
    .select(FLAG_COLUMNS.map((c) => `t.${c}` as const))
    .where('t.organization_id', '=', organizationId)
    .where('t.connection_id', '=', connectionId);
  return readPage(
    `dms_flags:${connectionId}`,
    query as unknown as ListQuery<FlagRow>,
    organizationId,
    { ...request, updatedSince: filters.since ?? '1970-01-01T00:00:00.000Z' },
    { state: equals('dms_documents', 'state', filters.state) },
  );
}
