// One attempt of one posting (a row of external_postings): claim it in a short transaction, call the system outside
// any transaction, record what it answered in another. The call carries the posting's request id, so an attempt
// repeated after a crash, a timeout or a duplicate job books nothing twice in the system. What the answer means:
// - success: the posting is done; the document's block says posted (its ref) or fiscalised (its number and code);
// - temporary (outage, timeout, 5xx, rate limit): tried again after a growing wait (at least the system's own
//   Retry-After), up to MAX_ATTEMPTS, then failed;
// - period closed or rejected: failed at once, the block's reason says why in the system's own words.
// A failed posting never undoes the document in the service. A posting that waits for another document's (a receipt
// for its invoice's) is looked at again after WAIT_SECONDS, less often the longer it waits (waitSeconds), for 48
// hours, then fails. The document's subject and the listeners told when an accounting posting settles (the DMS flags)
// come from the composed registry (registry.ts).
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { inTransaction, type Db, type Tx } from '../../platform/database/transaction.js';
import type { SendMany } from '../../platform/jobs/jobs.js';
import { leaseCutoff } from '../../platform/jobs/processes.js';
import {
  accountingConnectorOf,
  fiscalConnectorOf,
  readConnection,
  SIMULATOR_BASE_URL,
  type ConnectorSettings,
} from '../../connectors/connections.js';
import type { AccountingRef, AccountingType, ConnectorFailure, ConnectorResult } from '../../connectors/types.js';
import { accountingPostingSettled, subjectOf } from './registry.js';
import type { FiscalAnswer, PostedRefs, PostingSubject } from './subject.js';

export const POSTING_QUEUE = 'postings.run';
export const MAX_ATTEMPTS = 8;
/** The wait before attempt n+1 after n temporary failures (seconds); the system's Retry-After wins when longer. */
export const RETRY_SECONDS = [2, 10, 30, 120, 600, 1800, 3600];
export const WAIT_SECONDS = 5;
/** The longest wait between two looks at a posting that waits for another document's (see waitSeconds). */
export const WAIT_MAX_SECONDS = 30;
/** A credit note application is asked about again this often until the fiscal system decides. */
export const APPLICATION_POLL_SECONDS = 2;
const WAIT_LIMIT_HOURS = 48;

export interface PostingJob {
  organizationId: string;
  postingId: string;
}

export interface PostingRunner {
  db: Db;
  settings: ConnectorSettings;
  processId: string;
  sendMany: SendMany;
  logger: Logger;
}

type Row = {
  organization_id: string;
  id: string;
  document_type: string;
  document_id: string;
  document_number: string;
  system: string;
  operation: string;
  status: string;
  request_id: string;
  attempts: number;
  external_type: string | null;
  external_ref: string | null;
  related_refs: string[] | null;
  created_at: Date;
};

type Call = () => Promise<ConnectorResult<AccountingRef | FiscalAnswer | undefined>>;

/** What one attempt came to (tests and the bench read it). */
export type AttemptOutcome = 'done' | 'busy' | 'waiting' | 'posted' | 'retrying' | 'failed' | 'submitted';

export async function runPosting(runner: PostingRunner, job: PostingJob): Promise<AttemptOutcome> {
  const claimed = await inTransaction(runner.db, (tx) => claim(runner, tx, job));
  if (typeof claimed === 'string') return claimed;
  let result: ConnectorResult<AccountingRef | FiscalAnswer | undefined>;
  try {
    result = await claimed.call();
  } catch (error) {
    // A bug or an unreadable answer: the claim is let go (so the job's retry can claim it) and pg-boss retries.
    await runner.db
      .updateTable('external_postings')
      .set({ claimed_by: null })
      .where('organization_id', '=', job.organizationId)
      .where('id', '=', job.postingId)
      .execute();
    throw error;
  }
  return inTransaction(runner.db, (tx) => record(runner, tx, claimed.row, result));
}

/** The posting's row under its lock: what to call, or why there is nothing to do now. */
async function claim(
  runner: PostingRunner,
  tx: Tx,
  job: PostingJob,
): Promise<AttemptOutcome | { row: Row; call: Call }> {
  const row = await tx
    .selectFrom('external_postings')
    .select([
      'organization_id',
      'id',
      'document_type',
      'document_id',
      'document_number',
      'system',
      'operation',
      'status',
      'request_id',
      'attempts',
      'external_type',
      'external_ref',
      'related_refs',
      'created_at',
      'claimed_by',
    ])
    // Whether the process holding the claim still beats (a claim of a dead process is free).
    .select((eb) =>
      eb
        .exists(
          eb
            .selectFrom('service_processes as p')
            .select('p.id')
            .whereRef('p.id', '=', 'external_postings.claimed_by')
            .where('p.stopped_at', 'is', null)
            .where('p.heartbeat_at', '>', leaseCutoff()),
        )
        .as('claim_alive'),
    )
    .where('organization_id', '=', job.organizationId)
    .where('id', '=', job.postingId)
    .forUpdate()
    .executeTakeFirst();
  if (row?.status !== 'pending') return 'done';
  if (row.claimed_by !== null && row.claim_alive) return 'busy'; // another job of the same posting is calling right now
  const subject = subjectOf(row.document_type);
  const connection = await readConnection(tx, row.organization_id, row.system as 'accounting' | 'fiscal');
  if (!connection)
    return fail(tx, row, `The organisation's ${row.system} connection was removed before this was sent.`);
  if (connection.baseUrl === SIMULATOR_BASE_URL && runner.settings.simulatorUrl === null) {
    return fail(
      tx,
      row,
      `The ${row.system} connection points at the simulators, which run only in the sandbox environment (SIMULATORS=true).`,
    );
  }

  let call: Call;
  if (row.operation === 'reverse') {
    // The document was reversed in the service: its void (Invoice, Payment) or deletion there, then the objects made
    // with it (each with a request id of its own, derived from the posting's).
    const refs: AccountingRef[] = [
      { type: row.external_type as AccountingType, id: row.external_ref! },
      ...(row.related_refs ?? []).map(parseRef),
    ];
    call = async () => {
      const connector = accountingConnectorOf(connection, runner.settings);
      for (const [i, ref] of refs.entries()) {
        const reversed = await connector.reverse(i === 0 ? row.request_id : `${row.request_id}.${i}`, ref);
        if (!reversed.ok) return reversed;
      }
      return { ok: true, value: undefined };
    };
  } else if (row.system === 'accounting') {
    const prepared = await subject.accounting(tx, row.organization_id, row.document_id);
    if (prepared.kind !== 'call') return notNow(runner, tx, row, subject, prepared);
    call = () => prepared.call(accountingConnectorOf(connection, runner.settings), row.request_id);
  } else {
    const prepared = await subject.fiscal!(tx, row.organization_id, row.document_id, row.external_ref);
    if (prepared.kind !== 'call') return notNow(runner, tx, row, subject, prepared);
    call = () => prepared.call(fiscalConnectorOf(connection, runner.settings));
  }
  await tx
    .updateTable('external_postings')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      last_attempt_at: eb.fn<Date>('now'),
      claimed_by: runner.processId,
      updated_at: eb.fn<Date>('now'),
    }))
    .where('organization_id', '=', row.organization_id)
    .where('id', '=', row.id)
    .execute();
  return { row: { ...row, attempts: row.attempts + 1 }, call };
}

/**
 * Nothing to send (the block says why), not yet (another document first: looked at again soon, for 48 hours), or
 * not before a set-up is fixed here (failed at once with the reason, nothing sent).
 */
async function notNow(
  runner: PostingRunner,
  tx: Tx,
  row: Row,
  subject: PostingSubject,
  prepared: { kind: 'wait' | 'skip' | 'fail'; reason: string },
): Promise<AttemptOutcome> {
  if (prepared.kind === 'fail') return fail(tx, row, prepared.reason);
  if (prepared.kind === 'skip') {
    await tx
      .updateTable('external_postings')
      .set((eb) => ({ status: 'cancelled', reason: prepared.reason, claimed_by: null, updated_at: eb.fn<Date>('now') }))
      .where('organization_id', '=', row.organization_id)
      .where('id', '=', row.id)
      .execute();
    if (row.system === 'fiscal')
      await subject.setFiscal!(tx, row.organization_id, row.document_id, {
        status: 'cancelled',
        receipt: null,
        reason: prepared.reason,
      });
    else {
      await subject.setPosting(tx, row.organization_id, row.document_id, {
        status: 'not_applicable',
        accountingRef: null,
        accountingType: null,
        reason: prepared.reason,
      });
      await accountingPostingSettled(
        tx,
        row.organization_id,
        { type: row.document_type, id: row.document_id },
        { status: 'not_applicable' },
      );
    }
    return 'done';
  }
  if (Date.now() - row.created_at.getTime() > WAIT_LIMIT_HOURS * 3_600_000)
    return fail(tx, row, `${prepared.reason} Gave up after ${WAIT_LIMIT_HOURS} hours.`);
  await later(runner, tx, row, waitSeconds(row.created_at), prepared.reason);
  return 'waiting';
}

/**
 * How long a posting that waits for another document's is left before it is looked at again: WAIT_SECONDS while the
 * wait is young, then a quarter of its age, at most WAIT_MAX_SECONDS. Each look is a job; behind an accounting
 * system's rate limit a receipt waits minutes for its invoice, and at a look every 5 s the looks were most of the
 * jobs sent (a real day's mix: about 5,000 of 10,000 postings.run jobs at one moment; decision 0051).
 */
export function waitSeconds(createdAt: Date, now = Date.now()): number {
  return Math.min(WAIT_MAX_SECONDS, Math.max(WAIT_SECONDS, Math.round((now - createdAt.getTime()) / 4_000)));
}

/** The system's answer, recorded under the row's lock with the document's block and its event. */
async function record(
  runner: PostingRunner,
  tx: Tx,
  claimed: Row,
  result: ConnectorResult<AccountingRef | FiscalAnswer | undefined>,
): Promise<AttemptOutcome> {
  const row = await tx
    .selectFrom('external_postings')
    .select(['status'])
    .where('organization_id', '=', claimed.organization_id)
    .where('id', '=', claimed.id)
    .forUpdate()
    .executeTakeFirstOrThrow();
  if (row.status !== 'pending') return 'done';
  const subject = subjectOf(claimed.document_type);
  const org = claimed.organization_id;
  if (!result.ok) return failure(runner, tx, claimed, result.failure);

  if (claimed.operation === 'reverse') {
    await done(tx, claimed, {});
    const how = claimed.external_type === 'Invoice' || claimed.external_type === 'Payment' ? 'voided' : 'deleted';
    await subject.setPosting(tx, org, claimed.document_id, {
      status: 'reversed',
      accountingRef: claimed.external_ref,
      accountingType: claimed.external_type,
      reason: `${claimed.external_type} ${claimed.external_ref} was ${how} in the accounting system when the document was reversed here.`,
    });
    return 'posted';
  }

  if (claimed.system === 'accounting') {
    const ref = result.value as PostedRefs;
    await done(tx, claimed, {
      external_type: ref.type,
      external_ref: ref.id,
      related_refs: (ref.related ?? []).map((r) => `${r.type}:${r.id}`),
    });
    await subject.setPosting(tx, org, claimed.document_id, {
      status: 'posted',
      accountingRef: ref.id,
      accountingType: ref.type,
      reason: null,
    });
    await accountingPostingSettled(
      tx,
      org,
      { type: claimed.document_type, id: claimed.document_id },
      { status: 'posted', ref: ref.id },
    );
    return 'posted';
  }
  const answer = result.value as FiscalAnswer;
  if (answer.state === 'fiscalised') {
    await done(tx, claimed, { external_ref: answer.receipt.fdn });
    await subject.setFiscal!(tx, org, claimed.document_id, {
      status: 'fiscalised',
      receipt: answer.receipt,
      reason: null,
    });
    return 'posted';
  }
  if (answer.state === 'rejected') {
    await tx
      .updateTable('external_postings')
      .set((eb) => ({ status: 'failed', reason: answer.reason, claimed_by: null, updated_at: eb.fn<Date>('now') }))
      .where('organization_id', '=', org)
      .where('id', '=', claimed.id)
      .execute();
    await subject.setFiscal!(tx, org, claimed.document_id, {
      status: 'rejected',
      receipt: null,
      reason: answer.reason,
    });
    return 'failed';
  }
  // A credit note application waiting for approval: asked about again soon; the block says submitted once.
  const first = claimed.external_ref === null;
  await tx
    .updateTable('external_postings')
    .set({ external_ref: answer.applicationId, attempts: 0 })
    .where('organization_id', '=', org)
    .where('id', '=', claimed.id)
    .execute();
  await later(
    runner,
    tx,
    claimed,
    APPLICATION_POLL_SECONDS,
    `Application ${answer.applicationId} waits for the fiscal system's approval.`,
  );
  if (first)
    await subject.setFiscal!(tx, org, claimed.document_id, { status: 'submitted', receipt: null, reason: null });
  return 'submitted';
}

/** `Type:id` as related_refs keeps it. */
const parseRef = (text: string): AccountingRef => {
  const at = text.indexOf(':');
  return { type: text.slice(0, at) as AccountingType, id: text.slice(at + 1) };
};

async function done(
  tx: Tx,
  row: Row,
  set: { external_type?: string; external_ref?: string; related_refs?: string[] },
): Promise<void> {
  await tx
    .updateTable('external_postings')
    .set((eb) => ({ status: 'posted', reason: null, claimed_by: null, updated_at: eb.fn<Date>('now'), ...set }))
    .where('organization_id', '=', row.organization_id)
    .where('id', '=', row.id)
    .execute();
}

/** Tries again after `seconds`: the row's next attempt and its job, in this transaction. */
async function later(runner: PostingRunner, tx: Tx, row: Row, seconds: number, reason: string): Promise<void> {
  const jobId = randomUUID(); // the row names its job (dispatch.ts requeueAbandonedPostings)
  await tx
    .updateTable('external_postings')
    // The next attempt's time by the database's clock; the seconds are bound.
    .set((eb) => ({
      next_attempt_at: sql<Date>`now() + make_interval(secs => ${seconds})`,
      queued_at: eb.fn<Date>('now'),
      job_id: jobId,
      reason,
      claimed_by: null,
      updated_at: eb.fn<Date>('now'),
    }))
    .where('organization_id', '=', row.organization_id)
    .where('id', '=', row.id)
    .execute();
  await runner.sendMany<PostingJob>(
    POSTING_QUEUE,
    [{ id: jobId, data: { organizationId: row.organization_id, postingId: row.id }, startAfter: seconds }],
    tx,
  );
}

async function failure(runner: PostingRunner, tx: Tx, row: Row, failure: ConnectorFailure): Promise<AttemptOutcome> {
  const system = row.system === 'accounting' ? 'The accounting system' : 'The fiscal system';
  if (failure.kind === 'temporary' && row.attempts < MAX_ATTEMPTS) {
    const wait = Math.max(
      failure.retryAfterSeconds ?? 0,
      RETRY_SECONDS[Math.min(row.attempts - 1, RETRY_SECONDS.length - 1)]!,
    );
    await later(
      runner,
      tx,
      row,
      wait,
      `Attempt ${row.attempts} of ${MAX_ATTEMPTS}: ${failure.message}; trying again in ${wait} s.`,
    );
    return 'retrying';
  }
  const reason =
    failure.kind === 'temporary'
      ? `${system} could not be reached after ${row.attempts} attempts; the last answer: ${failure.message}. Retry it with \`admin postings retry ${row.id}\`.`
      : failure.kind === 'period_closed'
        ? `${system}'s books are closed${failure.closedThrough ? ` through ${failure.closedThrough}` : ''}: ${failure.message}. Reopen the period there or post it by hand.`
        : `${system} refused it (${failure.code}): ${failure.message}`;
  return fail(tx, row, reason, failure.kind === 'rejected' ? 'rejected' : 'failed', failure.kind === 'period_closed');
}

/** The posting failed for good: the row and the document's block say why (a fiscal refusal is `rejected`). */
async function fail(
  tx: Tx,
  row: Row,
  reason: string,
  fiscalStatus: 'failed' | 'rejected' = 'failed',
  periodClosed = false,
): Promise<AttemptOutcome> {
  await tx
    .updateTable('external_postings')
    .set((eb) => ({ status: 'failed', reason, claimed_by: null, updated_at: eb.fn<Date>('now') }))
    .where('organization_id', '=', row.organization_id)
    .where('id', '=', row.id)
    .execute();
  const subject = subjectOf(row.document_type);
  if (row.system === 'fiscal') {
    await subject.setFiscal!(tx, row.organization_id, row.document_id, { status: fiscalStatus, receipt: null, reason });
  } else if (row.operation === 'reverse') {
    // Reversed in the service; the accounting system kept it (it came to hold it in between, or refused): by hand.
    await subject.setPosting(tx, row.organization_id, row.document_id, {
      status: 'posted',
      accountingRef: row.external_ref,
      accountingType: row.external_type,
      reason: `Reversed in the service, but the accounting system did not void it: ${reason} Void ${row.external_type} ${row.external_ref} there by hand.`,
    });
  } else {
    await subject.setPosting(tx, row.organization_id, row.document_id, {
      status: 'failed',
      accountingRef: null,
      accountingType: null,
      reason,
    });
    // Whoever follows it hears (the DMS: a document that applied this one is rejected, R06 closed books there, R09 otherwise).
    await accountingPostingSettled(
      tx,
      row.organization_id,
      { type: row.document_type, id: row.document_id },
      { status: 'failed', reason, periodClosed },
    );
  }
  return 'failed';
}
