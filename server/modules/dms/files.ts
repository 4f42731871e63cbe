// DMS XML files (POST /dms/{system}/files): a file is stored and registered as a batch in the request's transaction
// (nothing answered is lost); the same bytes again on the same connection answer that earlier batch. A worker then
// parses it (parseNextFile, from the DMS dispatch loop) in one transaction: every document of it goes through
// ingestBatch, exactly the path of a JSON push, or, when the file cannot be read, none does and the batch says why
// and where. The file's bytes are dropped once parsed: its documents hold what it said.
import { createHash } from 'node:crypto';
import type { Db, Tx } from '../../platform/database/transaction.js';
import { inTransaction } from '../../platform/database/transaction.js';
import { newId } from '../../platform/ids.js';
import { findConnectionById, type DmsConnectionRow } from './connections.js';
import { noteFlagFiles } from './actions.js';
import { ingestBatch } from './ingest.js';
import { readDmsFile, XmlFileError } from './xml/read.js';
import type { components } from '../../../generated/api-types.js';

export type DmsFileBatch = components['schemas']['DmsFileBatch'];
export const MAX_FILE_BYTES = 5 * 1024 * 1024;

/** Registers a file as a batch, or answers the batch of the same bytes received before (created false). */
export async function receiveFile(
  tx: Tx,
  connection: DmsConnectionRow,
  file: { bytes: Buffer; name: string | null },
): Promise<{ batchId: string; created: boolean }> {
  const sha256 = createHash('sha256').update(file.bytes).digest('hex');
  const id = newId('dmf'); // a file's batch: its own prefix, told apart from a push's (dmb_) at a glance
  const inserted = await tx
    .insertInto('dms_batches')
    .values({
      organization_id: connection.organization_id,
      id,
      connection_id: connection.id,
      source: 'xml_file',
      document_count: 0,
      synchronous: false,
      file_status: 'received',
      file_sha256: sha256,
      file_name: file.name,
      file_bytes: file.bytes.length,
      file_content: file.bytes,
    })
    .onConflict((conflict) => conflict.columns(['organization_id', 'connection_id', 'file_sha256']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (inserted) return { batchId: id, created: true };
  const earlier = await tx
    .selectFrom('dms_batches')
    .select('id')
    .where('organization_id', '=', connection.organization_id)
    .where('connection_id', '=', connection.id)
    .where('file_sha256', '=', sha256)
    .executeTakeFirstOrThrow();
  return { batchId: earlier.id, created: false };
}

/**
 * Parses the next file waiting (its row locked, so two workers never parse one file) and stores its documents
 * through ingestBatch, or its error; returns false when none waits. Organisations take turns: the next file is the
 * oldest of the organisation whose last file was parsed longest ago (or never), so one organisation's ten files do
 * not hold another's one behind them.
 */
export async function parseNextFile(db: Db): Promise<boolean> {
  return inTransaction(db, async (tx) => {
    const batch = await tx
      .selectFrom('dms_batches as b')
      .select(['b.organization_id', 'b.id', 'b.connection_id', 'b.file_content'])
      .where('b.source', '=', 'xml_file')
      .where('b.file_status', '=', 'received')
      // The organisation served longest ago first (none yet: first of all), then the oldest file.
      .orderBy(
        (eb) =>
          eb
            .selectFrom('dms_batches as x')
            .select((x) => x.fn.max('x.file_parsed_at').as('served'))
            .whereRef('x.organization_id', '=', 'b.organization_id')
            .where('x.source', '=', 'xml_file'),
        (ob) => ob.asc().nullsFirst(),
      )
      .orderBy('b.received_at')
      .limit(1)
      .forUpdate()
      .skipLocked()
      .executeTakeFirst();
    if (!batch) return false;
    let documents: unknown[];
    try {
      documents = readDmsFile(batch.file_content!);
    } catch (error) {
      if (!(error instanceof XmlFileError)) throw error;
      await tx
        .updateTable('dms_batches')
        .set((eb) => ({
          file_status: 'failed',
          file_error: error.message,
          file_error_line: error.line,
          file_error_column: error.column,
          file_parsed_at: eb.fn<Date>('now'),
          file_content: null,
        }))
        .where('organization_id', '=', batch.organization_id)
        .where('id', '=', batch.id)
        .execute();
      return true;
    }
    const connection = (await findConnectionById(tx, batch.organization_id, batch.connection_id))!;
    await ingestBatch(tx, connection, documents, { batchId: batch.id });
    await tx
      .updateTable('dms_batches')
      .set((eb) => ({
        file_status: 'parsed',
        document_count: documents.length,
        file_parsed_at: eb.fn<Date>('now'),
        file_content: null,
      }))
      .where('organization_id', '=', batch.organization_id)
      .where('id', '=', batch.id)
      .execute();
    await noteFlagFiles(tx, batch.organization_id, [batch.id]);
    return true;
  });
}

/** A file's batch as the API shows it; null for none, another connection's, or a JSON push. */
export async function findFileBatch(
  db: Db | Tx,
  connection: DmsConnectionRow,
  batchId: string,
): Promise<DmsFileBatch | null> {
  const row = await db
    .selectFrom('dms_batches')
    .select([
      'id',
      'file_status',
      'file_sha256',
      'file_name',
      'file_bytes',
      'received_at',
      'file_parsed_at',
      'file_error',
      'file_error_line',
      'file_error_column',
      'document_count',
    ])
    .where('organization_id', '=', connection.organization_id)
    .where('connection_id', '=', connection.id)
    .where('id', '=', batchId)
    .where('source', '=', 'xml_file')
    .executeTakeFirst();
  if (!row) return null;
  const states = await db
    .selectFrom('dms_documents')
    .select(['state', (eb) => eb.fn.countAll<string>().as('n')])
    .where('organization_id', '=', connection.organization_id)
    .where('batch_id', '=', batchId)
    .groupBy('state')
    .execute();
  const count = (state: string) => Number(states.find((s) => s.state === state)?.n ?? 0);
  return {
    batchId: row.id,
    system: connection.system,
    fileName: row.file_name,
    status: row.file_status as DmsFileBatch['status'],
    sha256: row.file_sha256!,
    bytes: row.file_bytes!,
    receivedAt: row.received_at.toISOString(),
    parsedAt: row.file_parsed_at?.toISOString() ?? null,
    error:
      row.file_error === null
        ? null
        : { message: row.file_error, line: row.file_error_line ?? 0, column: row.file_error_column ?? 0 },
    documents: row.document_count,
    counts: {
      received: count('received'),
      posted: count('posted'),
      rejected: count('rejected'),
      superseded: count('superseded'),
    },
  };
}
