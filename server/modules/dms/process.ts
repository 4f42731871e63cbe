// Posting DMS documents: each handler maps its document onto the same posting functions the REST API calls (one
// posting path), and the outcome becomes its flag. A document is posted under its row's lock and only while it is
// `received`, so it is posted exactly once however many jobs or processes pick it up, and a crash rolls back both the
// posting and the flag together. Up to 50 documents share a transaction, each under its own savepoint (a batch is
// never all or nothing: a refusal undoes what its document wrote and keeps the flag's change); a van day's CS
// invoices are posted as one set under one savepoint (createInvoices: see docs/decisions/0022-posting-sets.md).
//
// Versions: a new version of a posted document is applied by its handler against the earlier one (a cancel voids,
// a bounced cheque reverses), and once it succeeds the earlier version is `superseded`. While the earlier posting's
// accounting posting is pending the new version waits with the spec's note; the reversal rules themselves (held by
// the accounting system -> R09 naming what to void by hand; fiscal -> R09) come from the document modules.
import { sql } from 'kysely';
import type { DmsConnectionActor } from '../../platform/access/actor.js';
import { actingOrganization, getOrganization } from '../../platform/access/organizations.js';
import { inTransaction, type Db, type Tx } from '../../platform/database/transaction.js';
import { MASTER_DATA_TYPES, type DmsDocumentJson } from './canonical.js';
import { connectionActor, findConnectionById, type DmsConnectionRow } from './connections.js';
import { fileBatchesOf, noteFlagFiles } from './actions.js';
import { setFlags, setPostedFlags, type FlagChange } from './flags.js';
import { handlerOf } from './handlers/registry.js';
import { forgetVanDays } from './handlers/van-day.js';
import { requeueFailedPostings } from '../postings/operations.js';
import { asOutcome } from './refusals.js';
import type { Applied, DmsContext, DmsRunner, LoadedDocument, PreviousVersion } from './handlers/types.js';

export type { DmsRunner };
import {
  ACCOUNTING_NOTE,
  DmsRejection,
  DmsWait,
  noMapperNote,
  PREVIOUS_POSTING_NOTE,
  RETRY_WINDOW_HOURS,
  retryDelaySeconds,
  waitKeys,
} from './reasons.js';

/** What a DMS status that cancels a document is called. */
const CANCELLING = new Set(['cancelled']);

const DOCUMENT_COLUMNS = [
  'organization_id',
  'id',
  'connection_id',
  'natural_key',
  'version',
  'document_type',
  'document_number',
  'document_date',
  'dms_status',
  'content',
  'state',
  'received_at',
  'retry_until',
  'attempts',
  'note',
  'waiting_for',
  'mikono_table',
  'mikono_id',
  'accounting_type',
  'accounting_id',
] as const;

/** The context a connection's documents are posted in: its actor, and whether fiscalisation applies to them. */
export async function contextOf(db: Db | Tx, connection: DmsConnectionRow): Promise<DmsContext> {
  const organization = actingOrganization(await getOrganization(db as Db, connection.organization_id));
  const systems = (
    await db
      .selectFrom('connector_connections')
      .select('system')
      .where('organization_id', '=', connection.organization_id)
      .where('enabled', '=', true)
      .execute()
  ).map((row) => row.system);
  const actor: DmsConnectionActor = connectionActor(organization, connection.id);
  return {
    actor,
    connection,
    fiscalApplies: connection.fiscalise && systems.includes('fiscal'),
    accountingConnected: systems.includes('accounting'),
  };
}

async function load(db: Db | Tx, organizationId: string, id: string, lock: boolean): Promise<LoadedDocument | null> {
  return (await loadMany(db, organizationId, [id], lock))[0] ?? null;
}

/** The documents of `ids` (those that exist and, locking, that no other job holds), in the order given. */
async function loadMany(
  db: Db | Tx,
  organizationId: string,
  ids: readonly string[],
  lock: boolean,
): Promise<LoadedDocument[]> {
  if (ids.length === 0) return [];
  let query = db
    .selectFrom('dms_documents')
    .select(DOCUMENT_COLUMNS)
    .where('organization_id', '=', organizationId)
    .where('id', 'in', [...ids]);
  if (lock) query = query.orderBy('id').forUpdate().skipLocked();
  const byId = new Map((await query.execute()).map((row) => [row.id, row]));
  const loaded: LoadedDocument[] = [];
  for (const id of ids) {
    const row = byId.get(id);
    if (!row) continue;
    let previous: PreviousVersion | null = null;
    if (row.natural_key !== null && row.version! > 1) {
      // The latest earlier version that is not superseded: the one this version replaces.
      let earlier = db
        .selectFrom('dms_documents')
        .select([
          'id',
          'state',
          'dms_status',
          'mikono_table',
          'mikono_id',
          'accounting_type',
          'accounting_id',
          'content',
          'document_number',
        ])
        .where('organization_id', '=', organizationId)
        .where('natural_key', '=', row.natural_key)
        .where('version', '<', row.version!)
        .where('state', '<>', 'superseded')
        .orderBy('version', 'desc')
        .limit(1);
      if (lock) earlier = earlier.forUpdate();
      const found = await earlier.executeTakeFirst();
      if (found) {
        previous = {
          id: found.id,
          state: found.state as PreviousVersion['state'],
          applied: found.mikono_id !== null,
          dmsStatus: found.dms_status ?? '',
          mikonoTable: found.mikono_table,
          mikonoId: found.mikono_id,
          accounting:
            found.accounting_type && found.accounting_id
              ? { type: found.accounting_type, id: found.accounting_id }
              : null,
          document: found.content as unknown as DmsDocumentJson,
        };
      }
    }
    loaded.push({
      id: row.id,
      organizationId: row.organization_id,
      connectionId: row.connection_id,
      type: row.document_type,
      number: row.document_number,
      date: row.document_date ?? '',
      status: row.dms_status ?? '',
      document: row.content as unknown as DmsDocumentJson,
      receivedAt: row.received_at,
      retryUntil: row.retry_until,
      attempts: row.attempts,
      previous,
      state: row.state,
      note: row.note,
      waitingFor: row.waiting_for,
      applied:
        row.mikono_table !== null && row.mikono_id !== null
          ? {
              table: row.mikono_table,
              id: row.mikono_id,
              accounting:
                row.accounting_type && row.accounting_id ? { type: row.accounting_type, id: row.accounting_id } : null,
            }
          : null,
    });
  }
  return loaded;
}

/** Whether posting the document asks the accounting system something first (a reversal of a posting it may hold). */
function needsPreparation(document: LoadedDocument): boolean {
  const handler = handlerOf(document.type);
  if (!handler?.prepare || document.applied) return false;
  return document.previous?.applied === true || handler.preparesFresh === true;
}

/** How many documents share one transaction (each under its own savepoint): one commit for many documents. */
export const DOCUMENTS_PER_TRANSACTION = 50;

/**
 * Posts the due documents given (a job's share of them), in order; returns how many changed flag. A document another
 * job holds, or that is no longer `received`, is skipped. Documents that ask the accounting system something first
 * (a reversal) are posted one by one, the question outside any transaction; the others share a transaction, each
 * under its savepoint, or a set's (a commit, and its flush to disk, per 50 documents rather than per document). When such a
 * transaction fails as a whole (a bug, a lost connection), its documents are posted one by one instead, and one that
 * fails alone stays received and is tried again later.
 */
export async function processDocuments(
  runner: DmsRunner,
  organizationId: string,
  ids: readonly string[],
): Promise<number> {
  const rows =
    ids.length === 0
      ? []
      : await runner.db
          .selectFrom('dms_documents')
          .select(['id', 'state', 'document_type', 'version', 'connection_id', 'mikono_id'])
          .where('organization_id', '=', organizationId)
          .where('id', 'in', [...ids])
          .execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  const due = ids.map((id) => byId.get(id)).filter((row) => row?.state === 'received') as typeof rows;
  const contexts = new Map<string, DmsContext | null>();
  const contextFor = async (connectionId: string) => {
    if (!contexts.has(connectionId)) {
      const connection = await findConnectionById(runner.db, organizationId, connectionId);
      contexts.set(connectionId, connection ? await contextOf(runner.db, connection) : null);
    }
    return contexts.get(connectionId)!;
  };
  let changed = 0;
  let group: string[] = [];
  const flush = async () => {
    if (group.length === 0) return;
    const members = group;
    group = [];
    try {
      changed += await inTransaction(runner.db, async (tx) => {
        // Those another job holds, or that are done, are left out.
        const documents = (await loadMany(tx, organizationId, members, true)).filter(
          (document) => document.state === 'received',
        );
        await postDocuments(tx, contextFor, documents);
        return documents.length;
      });
    } catch (error) {
      runner.logger.warn(
        { err: error, documents: members.length },
        'a DMS posting transaction failed; posting its documents one by one',
      );
      for (const id of members) changed += await processOne(runner, organizationId, id, contextFor);
    }
  };
  for (const row of due) {
    const context = await contextFor(row.connection_id);
    if (!context) continue;
    const handler = handlerOf(row.document_type);
    // A document applied before (held for its accounting posting, re-processed) asks nothing: it is not applied again.
    const mayPrepare =
      handler?.prepare !== undefined &&
      row.mikono_id === null &&
      (handler.preparesFresh === true || (row.version ?? 1) > 1);
    if (!mayPrepare) {
      group.push(row.id);
      if (group.length >= DOCUMENTS_PER_TRANSACTION) await flush();
      continue;
    }
    await flush(); // in order: the documents before it first
    changed += await processOne(runner, organizationId, row.id, contextFor);
  }
  await flush();
  // The flag files of the files these documents came in: written once every flag of the file is final.
  const files = await fileBatchesOf(
    runner.db,
    organizationId,
    due.map((row) => row.id),
  );
  if (files.length > 0) await inTransaction(runner.db, (tx) => noteFlagFiles(tx, organizationId, files));
  return changed;
}

/** One document in its own transaction, after its question to the accounting system (outside any transaction). */
async function processOne(
  runner: DmsRunner,
  organizationId: string,
  id: string,
  contextFor: (connectionId: string) => Promise<DmsContext | null>,
): Promise<number> {
  const peek = await load(runner.db, organizationId, id, false);
  if (peek?.state !== 'received') return 0;
  const context = await contextFor(peek.connectionId);
  if (!context) return 0;
  let refusal: DmsRejection | null = null;
  try {
    if (needsPreparation(peek)) {
      try {
        await handlerOf(peek.type)!.prepare!(runner, context, peek);
      } catch (error) {
        const outcome = asOutcome(error);
        if (!(outcome instanceof DmsRejection)) throw error;
        refusal = outcome;
      }
    }
    return await inTransaction(runner.db, async (tx) => {
      const document = await load(tx, organizationId, id, true);
      if (document?.state !== 'received') return 0; // another job holds it, or it is done
      await postInTransaction(tx, context, document, refusal);
      return 1;
    });
  } catch (error) {
    // A bug, a lost connection, an accounting system that could not be asked: the document stays received and is
    // tried again later; the error is logged.
    runner.logger.error({ err: error, document: id }, 'DMS document posting failed');
    await runner.db
      .updateTable('dms_documents')
      .set((eb) => ({
        attempts: eb('attempts', '+', 1),
        // Tried again later by the database's clock.
        next_attempt_at: sql<Date>`now() + make_interval(secs => ${retryDelaySeconds(peek.attempts + 1)})`,
      }))
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .where('state', '=', 'received')
      .execute();
    return 0;
  }
}

/**
 * Posts one locked `received` document in the caller's transaction and writes its flag (the synchronous mode calls
 * this inside the batch's own transaction). Returns the flag's new state.
 */
export async function postInTransaction(
  tx: Tx,
  context: DmsContext,
  document: LoadedDocument,
  refusal: DmsRejection | null = null,
): Promise<FlagChange['state']> {
  const org = document.organizationId;
  const handler = handlerOf(document.type);
  if (!handler) {
    await setFlags(tx, org, [document.id], {
      state: 'received',
      note: noMapperNote(document.type),
      waitingFor: null,
      nextAttemptAt: null,
    });
    return 'received';
  }
  if (refusal) return reject(tx, document, refusal);
  // Applied before: never again (its record and external code are there); only its flag follows the accounting posting.
  if (document.applied) return settleApplied(tx, document, document.applied);

  const previous = document.previous;
  // An earlier version that never applied and a cancel of it: nothing to reverse; the earlier one will never post.
  if (previous && !previous.applied && CANCELLING.has(document.status) && !MASTER_DATA_TYPES.has(document.type)) {
    await setFlags(tx, org, [previous.id], { state: 'superseded' });
    await setFlags(tx, org, [document.id], {
      state: 'posted',
      mikonoTable: 'dms_documents',
      mikonoId: previous.id,
      quickbooksRef: null,
      accounting: null,
    });
    return 'posted';
  }
  // A new version of an applied document waits while the earlier posting's accounting posting is pending.
  if (
    previous?.applied &&
    previous.accounting &&
    !MASTER_DATA_TYPES.has(document.type) &&
    (await accountingPosting(tx, org, previous.accounting))?.status === 'pending'
  ) {
    return wait(
      tx,
      document,
      new DmsWait(
        PREVIOUS_POSTING_NOTE,
        waitKeys.posting(previous.accounting.type, previous.accounting.id),
        'previous',
      ),
    );
  }

  // The savepoint: a refusal undoes what the handler wrote and keeps this transaction for the flag.
  await sql`savepoint dms_document`.execute(tx);
  let applied: Applied;
  try {
    applied = await handler.apply(tx, context, { ...document, previous: previous?.applied ? previous : null });
    // Savepoints have no builder form (here and below).
    await sql`release savepoint dms_document`.execute(tx);
  } catch (error) {
    // Back to before the handler: nothing it wrote stays, nor what the transaction remembered of it.
    await sql`rollback to savepoint dms_document`.execute(tx);
    forgetVanDays(tx);
    return refuse(tx, document, error);
  }
  await markPosted(tx, context, [{ document, applied }]);
  return 'posted';
}

/**
 * Posts loaded `received` documents in order, in the caller's transaction (their rows locked): a run of first
 * versions whose handler posts sets and that share its setKey (a van day's CS invoices) as one set, the others one
 * by one.
 */
async function postDocuments(
  tx: Tx,
  contextFor: (connectionId: string) => Promise<DmsContext | null>,
  documents: readonly LoadedDocument[],
): Promise<void> {
  let run: LoadedDocument[] = [];
  let runKey: string | null = null;
  const postRun = async () => {
    if (run.length > 0) await postSet(tx, (await contextFor(run[0]!.connectionId))!, run);
    run = [];
    runKey = null;
  };
  for (const document of documents) {
    const handler = handlerOf(document.type);
    const key =
      handler?.applyMany && handler.setKey && document.previous === null
        ? `${document.type}|${handler.setKey(document)}`
        : null;
    if (key !== null && key === runKey) {
      run.push(document);
      continue;
    }
    await postRun();
    if (key !== null) {
      run = [document];
      runKey = key;
      continue;
    }
    const context = await contextFor(document.connectionId);
    if (context) await postInTransaction(tx, context, document);
  }
  await postRun();
}

/**
 * A set of first versions posted together by their handler's applyMany, under one savepoint: each outcome becomes its
 * document's flag as postInTransaction would make it. When none posted, what the set wrote (a van day's trip) is
 * undone as a refused document's is; when the set fails as a whole, its documents are posted one by one.
 */
async function postSet(tx: Tx, context: DmsContext, documents: readonly LoadedDocument[]): Promise<void> {
  if (documents.length === 1) {
    await postInTransaction(tx, context, documents[0]!);
    return;
  }
  const handler = handlerOf(documents[0]!.type)!;
  // Savepoints have no builder form (here and below).
  await sql`savepoint dms_set`.execute(tx);
  let outcomes: (Applied | Error)[];
  try {
    outcomes = await handler.applyMany!(tx, context, documents);
  } catch {
    // The set failed as a whole (a code another record holds, a bug): each document alone finds the one at fault.
    await sql`rollback to savepoint dms_set`.execute(tx);
    forgetVanDays(tx);
    for (const document of documents) await postInTransaction(tx, context, document);
    return;
  }
  const posted = documents.flatMap((document, i) =>
    outcomes[i] instanceof Error ? [] : [{ document, applied: outcomes[i] as Applied }],
  );
  // Kept when one posted; else undone whole (a savepoint has no builder form).
  if (posted.length > 0) {
    await sql`release savepoint dms_set`.execute(tx);
  } else {
    // Nothing posted: the day's trip the set opened goes too.
    await sql`rollback to savepoint dms_set`.execute(tx);
    forgetVanDays(tx);
  }
  for (const [i, document] of documents.entries()) {
    const outcome = outcomes[i];
    if (outcome instanceof Error) await refuse(tx, document, outcome);
  }
  await markPosted(tx, context, posted);
}

/** A handler's refusal as the document's flag (refusals.ts's table): a wait (R08 in time) or a rejection; any other error is thrown on. */
async function refuse(tx: Tx, document: LoadedDocument, error: unknown): Promise<'received' | 'rejected'> {
  const outcome = asOutcome(error);
  if (outcome instanceof DmsWait) return wait(tx, document, outcome);
  if (outcome) return reject(tx, document, outcome);
  throw error;
}

/**
 * Documents the service applied: their flags, the earlier versions superseded, those waiting for them woken. A
 * document whose accounting posting is pending is held `received` with ACCOUNTING_NOTE (the spec's "posted,
 * including the accounting posting"): accounting.ts makes it `posted` with its quickbooksRef, or `rejected`, when that
 * posting settles. What waits for it in the service (a collection for its invoice, a route settlement for its
 * documents) is woken now: it was applied here.
 */
async function markPosted(
  tx: Tx,
  context: DmsContext,
  posted: readonly { document: LoadedDocument; applied: Applied }[],
): Promise<void> {
  if (posted.length === 0) return;
  const org = context.actor.organization.id;
  const previous = posted.flatMap(({ document }) => (document.previous ? [document.previous.id] : []));
  if (previous.length > 0) await setFlags(tx, org, previous, { state: 'superseded' });
  const accounting = context.accountingConnected
    ? posted.flatMap(({ applied }) => (applied.accounting ? [applied.accounting] : []))
    : [];
  const postings = await accountingPostings(tx, org, accounting);
  await setPostedFlags(
    tx,
    org,
    posted.map(({ document, applied }) => {
      const posting =
        applied.accounting && context.accountingConnected
          ? postings.get(`${applied.accounting.type}|${applied.accounting.id}`)
          : undefined;
      return {
        id: document.id,
        mikonoTable: applied.table,
        mikonoId: applied.id,
        quickbooksRef: posting?.status === 'posted' ? posting.external_ref : null,
        accounting: applied.accounting ?? null,
        held:
          posting?.status === 'pending'
            ? { note: ACCOUNTING_NOTE, waitingFor: waitKeys.posting(applied.accounting!.type, applied.accounting!.id) }
            : null,
      };
    }),
  );
  await wake(
    tx,
    org,
    posted.flatMap(({ document, applied }) => [...(applied.provides ?? []), waitKeys.document(document.number)]),
  );
}

/**
 * A document applied before and posted again (re-processed): nothing is applied twice; its flag follows its
 * accounting posting as it stands. Posted there: `posted` with the ref. Pending: held. Failed: re-processing is the
 * operator asking for it again, so the failed posting is queued again (as `admin postings retry` does) and the flag
 * held until it settles. No accounting posting: `posted`.
 */
async function settleApplied(
  tx: Tx,
  document: LoadedDocument,
  applied: NonNullable<LoadedDocument['applied']>,
): Promise<'received' | 'posted'> {
  const org = document.organizationId;
  const posting = applied.accounting ? await accountingPosting(tx, org, applied.accounting) : undefined;
  if (applied.accounting && (posting?.status === 'pending' || posting?.status === 'failed')) {
    if (posting.status === 'failed') await requeueFailedPostings(tx, org, applied.accounting.id, 'accounting');
    await setPostedFlags(tx, org, [
      {
        id: document.id,
        mikonoTable: applied.table,
        mikonoId: applied.id,
        quickbooksRef: null,
        accounting: applied.accounting,
        held: { note: ACCOUNTING_NOTE, waitingFor: waitKeys.posting(applied.accounting.type, applied.accounting.id) },
      },
    ]);
    return 'received';
  }
  await setPostedFlags(tx, org, [
    {
      id: document.id,
      mikonoTable: applied.table,
      mikonoId: applied.id,
      quickbooksRef: posting?.status === 'posted' ? posting.external_ref : null,
      accounting: applied.accounting,
      held: null,
    },
  ]);
  return 'posted';
}

/** The accounting postings (`post` rows) of the documents given, by `type|id`. */
async function accountingPostings(tx: Tx, organizationId: string, documents: readonly { type: string; id: string }[]) {
  if (documents.length === 0) return new Map<string, { status: string; external_ref: string | null }>();
  const rows = await tx
    .selectFrom('external_postings')
    .select(['document_type', 'document_id', 'status', 'external_ref'])
    .where('organization_id', '=', organizationId)
    .where('system', '=', 'accounting')
    .where('operation', '=', 'post')
    .where((eb) =>
      eb(
        eb.refTuple('document_type', 'document_id'),
        'in',
        documents.map((d) => eb.tuple(d.type, d.id)),
      ),
    )
    .execute();
  return new Map(rows.map((row) => [`${row.document_type}|${row.document_id}`, row]));
}

/** The accounting posting of a document (its `post` row), if the organisation posts it anywhere. */
async function accountingPosting(tx: Tx, organizationId: string, document: { type: string; id: string }) {
  return (await accountingPostings(tx, organizationId, [document])).get(`${document.type}|${document.id}`);
}

async function reject(tx: Tx, document: LoadedDocument, rejection: DmsRejection): Promise<'rejected'> {
  await setFlags(tx, document.organizationId, [document.id], {
    state: 'rejected',
    reasonCode: rejection.code,
    reasonText: rejection.text,
  });
  return 'rejected';
}

/**
 * A document that cannot post yet: `received` with the reason in its note, tried again when what it waits for
 * arrives and at growing intervals. After 48 hours a dependency is given up (R08, the same text); a version held
 * for its previous version's posting stays held (no more checks) until someone re-processes it.
 */
async function wait(tx: Tx, document: LoadedDocument, waiting: DmsWait): Promise<'received' | 'rejected'> {
  const until = document.retryUntil ?? new Date(document.receivedAt.getTime() + RETRY_WINDOW_HOURS * 3_600_000);
  const org = document.organizationId;
  const tried = (set: { next_attempt_at?: Date; retry_until?: Date } = {}) =>
    tx
      .updateTable('dms_documents')
      .set((eb) => ({ attempts: eb('attempts', '+', 1), ...set }))
      .where('organization_id', '=', org)
      .where('id', '=', document.id)
      .execute();
  if (Date.now() >= until.getTime()) {
    await tried();
    if (waiting.kind === 'dependency') return reject(tx, document, new DmsRejection('R08', waiting.note));
    await setFlags(tx, org, [document.id], {
      state: 'received',
      note: waiting.note,
      waitingFor: waiting.waitingFor,
      nextAttemptAt: null,
      retryUntil: until,
    });
    return 'received';
  }
  const next = new Date(Math.min(until.getTime(), Date.now() + retryDelaySeconds(document.attempts + 1) * 1000));
  if (document.state === 'received' && document.note === waiting.note && document.waitingFor === waiting.waitingFor) {
    // Still waiting for the same thing: the flag has not changed, so no flag event and no new updatedAt (the pull
    // does not list it again); only when it is tried next.
    await tried({ next_attempt_at: next, retry_until: until });
    return 'received';
  }
  await tried();
  await setFlags(tx, org, [document.id], {
    state: 'received',
    note: waiting.note,
    waitingFor: waiting.waitingFor,
    nextAttemptAt: next,
    retryUntil: until,
  });
  return 'received';
}

/**
 * Documents waiting for any of `keys` are due now (something they wait for has arrived). One past its 48 hours is
 * not: a version held for its previous version's posting stays held until someone re-processes it (the spec's rule).
 */
export async function wake(tx: Tx, organizationId: string, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await tx
    .updateTable('dms_documents')
    .set((eb) => ({ next_attempt_at: eb.fn<Date>('now') }))
    .where('organization_id', '=', organizationId)
    .where('state', '=', 'received')
    .where('waiting_for', 'in', [...keys])
    .where((eb) => eb.or([eb('retry_until', 'is', null), eb('retry_until', '>', eb.fn<Date>('now'))]))
    .execute();
}

/**
 * The synchronous mode: posts the batch's received documents in the batch's own transaction, in the order sent, each
 * under its savepoint. A document that must first ask the accounting system (a reversal) is left to the background
 * (an outbound call never runs inside a transaction); it stays `received` and is posted within seconds.
 */
export async function postReceived(tx: Tx, context: DmsContext, ids: readonly string[]): Promise<void> {
  const documents = (await loadMany(tx, context.connection.organization_id, ids, true)).filter(
    (document) => document.state === 'received' && !needsPreparation(document),
  );
  await postDocuments(tx, async () => context, documents);
}
