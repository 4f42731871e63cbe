// Receiving a call's documents: every document checked on arrival and given its first flag, the whole batch stored
// in the caller's transaction before the answer (nothing answered is ever lost), versions decided by natural key.
// Posting follows: documents due now are picked up by the dispatcher (jobs.ts), or, on a synchronous connection,
// posted here before the answer, each under its own savepoint (process.ts).
import { sql } from 'kysely';
import type { Tx } from '../../platform/database/transaction.js';
import { newId } from '../../platform/ids.js';
import {
  checkOnArrival,
  contentHashOf,
  headerOf,
  MASTER_DATA_TYPES,
  naturalKeyOf,
  statusOf,
  type DmsDocumentJson,
} from './canonical.js';
import type { DmsConnectionRow } from './connections.js';
import { DMS_DOCUMENT, DMS_DOCUMENT_FLAGGED, findFlags, type FlagRow } from './flags.js';
import { recordEvents } from '../../platform/events/outbox.js';
import { DmsRejection } from './reasons.js';

/** A version of a key as stored. */
interface Version {
  id: string;
  version: number;
  contentHash: string;
  dmsStatus: string;
}

export interface IngestedBatch {
  batchId: string;
  /** One flag row per document, in the order sent (a document seen before answers its existing flag). */
  flags: FlagRow[];
  /** The documents stored as received now, in the order sent: what posting has to do. */
  received: string[];
}

/** A document as checked on arrival: its canonical form, natural key and content hash, or the refusal. */
interface Checked {
  raw: unknown;
  document: DmsDocumentJson | null;
  key: string | null;
  hash: string;
  refusal: DmsRejection | null;
}

type DocumentRow = Parameters<typeof insertRows>[1][number];

/** The rows to store and the answer: each document's flag id in the order sent, and the ids received now. */
interface IngestPlan {
  rows: DocumentRow[];
  answer: string[];
  received: string[];
}

/**
 * Stores the documents of one call and gives each its first flag. The steps: check each on arrival, load the keys'
 * versions under their locks, plan each document's row (a version, the same content again, or a refusal), write.
 */
export async function ingestBatch(
  tx: Tx,
  connection: DmsConnectionRow,
  documents: readonly unknown[],
  file: { batchId: string } | null = null,
): Promise<IngestedBatch> {
  const organizationId = connection.organization_id;
  // A file's batch exists already (registered when the file came); a push's is made here.
  const batchId = file?.batchId ?? newId('dmb');
  const now = new Date();
  const checked = documents.map((raw) => checkArrival(raw, connection.distributor_code));
  const chains = await lockVersions(tx, organizationId, checked);
  const { rows, answer, received } = planRows(connection, { batchId, now }, checked, chains);
  if (!file)
    await tx
      .insertInto('dms_batches')
      .values({
        organization_id: organizationId,
        id: batchId,
        connection_id: connection.id,
        source: 'json',
        document_count: documents.length,
        synchronous: connection.synchronous,
        received_at: now,
      })
      .execute();
  await insertRows(tx, rows);
  await recordEvents(
    tx,
    organizationId,
    DMS_DOCUMENT_FLAGGED,
    DMS_DOCUMENT,
    rows.map((row) => row.id),
  );
  return { batchId, flags: await findFlags(tx, organizationId, answer), received };
}

/** The checks on arrival, each document on its own. */
function checkArrival(raw: unknown, distributorCode: string): Checked {
  try {
    const document = checkOnArrival(raw, distributorCode);
    return { raw, document, key: naturalKeyOf(document), hash: contentHashOf(document), refusal: null };
  } catch (error) {
    if (!(error instanceof DmsRejection)) throw error;
    return { raw, document: null, key: null, hash: contentHashOf(raw ?? null), refusal: error };
  }
}

/**
 * The keys' versions, under a lock per key (in key order, so two calls never wait on each other in a circle): two
 * calls with the same key take their turns, and the second sees the first's version.
 */
async function lockVersions(
  tx: Tx,
  organizationId: string,
  checked: readonly Checked[],
): Promise<Map<string, Version[]>> {
  const keys = [...new Set(checked.flatMap((c) => (c.key ? [c.key] : [])))].sort();
  const chains = new Map<string, Version[]>();
  if (keys.length === 0) return chains;
  // One statement takes every key's transaction-scoped advisory lock, in key order.
  await sql`select pg_advisory_xact_lock(hashtextextended(${organizationId} || '|' || k, 0)) from unnest(${keys}::text[]) as k order by k`.execute(
    tx,
  );
  const stored = await tx
    .selectFrom('dms_documents')
    .select(['id', 'natural_key', 'version', 'content_hash', 'dms_status'])
    .where('organization_id', '=', organizationId)
    .where('natural_key', 'in', keys)
    .orderBy('version')
    .execute();
  for (const row of stored) {
    const chain = chains.get(row.natural_key!) ?? [];
    chain.push({ id: row.id, version: row.version!, contentHash: row.content_hash, dmsStatus: row.dms_status ?? '' });
    chains.set(row.natural_key!, chain);
  }
  return chains;
}

/** Each document's row, in the order sent: refused on arrival, the same content again (its flag, nothing new), the same status with other content (R05), or a new version received. */
function planRows(
  connection: DmsConnectionRow,
  batch: { batchId: string; now: Date },
  checked: readonly Checked[],
  chains: Map<string, Version[]>,
): IngestPlan {
  const { batchId, now } = batch;
  const plan: IngestPlan = { rows: [], answer: [], received: [] };
  checked.forEach((c, position) => {
    const id = newId('dmd');
    const header = c.document ? headerOf(c.document) : headerOf(c.raw);
    const base = {
      organization_id: connection.organization_id,
      id,
      connection_id: connection.id,
      batch_id: batchId,
      position,
      document_type: header.documentType,
      document_number: header.documentNumber,
      document_date: header.documentDate,
      distributor_code: header.distributorCode || connection.distributor_code,
      salesman_code: header.salesmanCode,
      content: JSON.stringify(c.raw ?? null),
      content_hash: c.hash,
      received_at: now,
      updated_at: now,
    };
    if (c.refusal) {
      plan.rows.push({
        ...base,
        natural_key: null,
        version: null,
        dms_status: header.status,
        state: 'rejected',
        reason_code: c.refusal.code,
        reason_text: c.refusal.text,
        next_attempt_at: null,
      });
      plan.answer.push(id);
      return;
    }
    const document = c.document!;
    const status = statusOf(document);
    const chain = chains.get(c.key!) ?? [];
    const same = chain.find((version) => version.contentHash === c.hash);
    if (same) {
      plan.answer.push(same.id);
      return;
    }
    const latest = chain.at(-1);
    if (latest && latest.dmsStatus === status && !MASTER_DATA_TYPES.has(document.documentType)) {
      plan.rows.push({
        ...base,
        natural_key: null,
        version: null,
        dms_status: status,
        state: 'rejected',
        reason_code: 'R05',
        next_attempt_at: null,
        reason_text: `${document.documentType} ${document.documentNumber} was received before with different content and the same status ${status}. Nothing was posted, and this cannot be re-processed: send a status change or a new number.`,
      });
      plan.answer.push(id);
      return;
    }
    const version = (latest?.version ?? 0) + 1;
    chain.push({ id, version, contentHash: c.hash, dmsStatus: status });
    chains.set(c.key!, chain);
    plan.rows.push({
      ...base,
      natural_key: c.key,
      version,
      dms_status: status,
      state: 'received',
      reason_code: null,
      reason_text: null,
      next_attempt_at: now,
    });
    plan.answer.push(id);
    plan.received.push(id);
  });
  return plan;
}

async function insertRows(
  tx: Tx,
  rows: {
    organization_id: string;
    id: string;
    connection_id: string;
    batch_id: string;
    position: number;
    natural_key: string | null;
    version: number | null;
    document_type: string;
    document_number: string;
    document_date: string | null;
    distributor_code: string;
    salesman_code: string | null;
    dms_status: string | null;
    content: string;
    content_hash: string;
    state: string;
    reason_code: string | null;
    reason_text: string | null;
    next_attempt_at: Date | null;
    received_at: Date;
    updated_at: Date;
  }[],
): Promise<void> {
  // In slices: one multi-row statement per 250 documents keeps each under the protocol's parameter limit.
  for (let i = 0; i < rows.length; i += 250)
    await tx
      .insertInto('dms_documents')
      .values(rows.slice(i, i + 250))
      .execute();
}
