// The DMS flag's transitions without a database (server/modules/dms/flags.ts): the flag as the spec shows it in each
// state (each state's fields and no other's), and what each change writes: the columns it sets and clears, for the
// documents of its organisation only, with one dms.document.flagged event per document in the same transaction
// (statements recorded by test/support/recording-db.ts). The transitions end to end (a push, the workers, the
// reasons) are held against Postgres by test/dms/flags.test.ts. `npm run mutate -- dms-flags` holds the writers with
// these two files.
import test from 'ava';
import { setFlags, setPostedFlags, toFlag, type FlagRow } from '../../server/modules/dms/flags.js';
import { recordingDb, type RecordedStatement } from '../support/recording-db.js';

const received = new Date('2026-03-01T08:00:00.000Z');
const updated = new Date('2026-03-01T09:30:00.000Z');
const posted = new Date('2026-03-01T09:29:00.000Z');
const row = (over: Partial<FlagRow>): FlagRow => ({
  organization_id: 'org_1',
  id: 'dmd_1',
  connection_id: 'dmc_1',
  distributor_code: 'DIST001',
  document_type: 'sale_invoice',
  document_number: 'CSR01000001',
  state: 'received',
  note: null,
  reason_code: null,
  reason_text: null,
  mikono_table: null,
  mikono_id: null,
  quickbooks_ref: null,
  posted_at: null,
  received_at: received,
  updated_at: updated,
  ...over,
});
const base = {
  documentId: 'dmd_1',
  distributorCode: 'DIST001',
  documentType: 'sale_invoice',
  documentNumber: 'CSR01000001',
  receivedAt: '2026-03-01T08:00:00.000Z',
  updatedAt: '2026-03-01T09:30:00.000Z',
};

test('received: the flag carries its note when it waits for something, and nothing of the other states', (t) => {
  t.deepEqual(toFlag(row({ note: 'Customer UG0000009 has not been received.' })), {
    ...base,
    state: 'received',
    note: 'Customer UG0000009 has not been received.',
  });
  t.deepEqual(toFlag(row({ note: null })), { ...base, state: 'received' }, 'no note: no note field');
  t.deepEqual(
    toFlag(
      row({
        note: '',
        mikono_table: 'invoices',
        mikono_id: 'inv_1',
        quickbooks_ref: 'qb_1',
        posted_at: posted,
        reason_code: 'R08',
        reason_text: 'x',
      }),
    ),
    { ...base, state: 'received', note: '' },
    'a received flag shows no record, posting or reason, even where the row keeps them',
  );
});

test('posted: the record it posted to, the accounting reference (null without one) and when', (t) => {
  const row1 = row({
    state: 'posted',
    mikono_table: 'invoices',
    mikono_id: 'inv_1',
    quickbooks_ref: 'qb_9',
    posted_at: posted,
    note: 'stale',
    reason_code: 'R09',
    reason_text: 'stale',
  });
  t.deepEqual(toFlag(row1), {
    ...base,
    state: 'posted',
    mikonoRef: { table: 'invoices', id: 'inv_1' },
    quickbooksRef: 'qb_9',
    postedAt: '2026-03-01T09:29:00.000Z',
  });
  const flag = toFlag(
    row({ state: 'posted', mikono_table: 'customers', mikono_id: 'cus_1', quickbooks_ref: null, posted_at: posted }),
  );
  t.true('quickbooksRef' in flag);
  t.is(flag.quickbooksRef, null);
});

test('rejected: the reason code and text, and nothing of the other states', (t) => {
  t.deepEqual(
    toFlag(
      row({
        state: 'rejected',
        reason_code: 'R03',
        reason_text: 'M09 matches no location',
        note: 'stale',
        mikono_table: 'invoices',
        mikono_id: 'inv_1',
        posted_at: posted,
      }),
    ),
    { ...base, state: 'rejected', reasonCode: 'R03', reasonText: 'M09 matches no location' },
  );
});

test("superseded: the document's identity and times only", (t) => {
  t.deepEqual(
    toFlag(
      row({
        state: 'superseded',
        note: 'stale',
        reason_code: 'R09',
        reason_text: 'stale',
        mikono_table: 'invoices',
        mikono_id: 'inv_1',
        posted_at: posted,
      }),
    ),
    { ...base, state: 'superseded' },
  );
});

/** The events insert: one dms.document.flagged event per document, in the order given. */
function assertEvents(
  t: import('ava').ExecutionContext,
  statement: RecordedStatement | undefined,
  ids: string[],
): void {
  t.is(
    statement?.sql,
    `insert into "events" ("organization_id", "id", "type", "resource", "record_id") values ${ids.map((_, i) => `(${[1, 2, 3, 4, 5].map((n) => `$${i * 5 + n}`).join(', ')})`).join(', ')}`,
  );
  const params = statement!.params;
  t.deepEqual(
    ids.map((_, i) => [params[i * 5], params[i * 5 + 2], params[i * 5 + 3], params[i * 5 + 4]]),
    ids.map((id) => ['org_1', 'dms.document.flagged', 'dms_document', id]),
  );
  for (let i = 0; i < ids.length; i += 1) t.regex(params[i * 5 + 1] as string, /^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
}

function assertNow(t: import('ava').ExecutionContext, value: unknown, before: number, after: number): void {
  t.true(value instanceof Date, 'a time');
  t.true((value as Date).getTime() >= before && (value as Date).getTime() <= after, 'the time of the change');
}

test('-> received (waiting): state, note, what it waits for and when it is tried next; the reason cleared; the window kept unless given', async (t) => {
  const { inTransaction, statements } = recordingDb();
  const next = new Date('2026-03-01T10:00:00.000Z');
  const before = Date.now();
  await inTransaction((tx) =>
    setFlags(tx, 'org_1', ['dmd_1', 'dmd_2'], {
      state: 'received',
      note: 'Customer UG0000009 has not been received.',
      waitingFor: 'customer:UG0000009',
      nextAttemptAt: next,
    }),
  );
  const after = Date.now();
  t.is(statements.length, 2);
  t.is(
    statements[0]!.sql,
    'update "dms_documents" set "state" = $1, "updated_at" = $2, "waiting_for" = $3, "next_attempt_at" = $4, "reason_code" = $5, "reason_text" = $6, "note" = $7 where "organization_id" = $8 and "id" in ($9, $10)',
  );
  const [state, updatedAt, ...rest] = statements[0]!.params;
  t.is(state, 'received');
  assertNow(t, updatedAt, before, after);
  t.deepEqual(rest, [
    'customer:UG0000009',
    next,
    null,
    null,
    'Customer UG0000009 has not been received.',
    'org_1',
    'dmd_1',
    'dmd_2',
  ]);
  assertEvents(t, statements[1], ['dmd_1', 'dmd_2']);

  const windowed = recordingDb();
  const until = new Date('2026-03-03T10:00:00.000Z');
  await windowed.inTransaction((tx) =>
    setFlags(tx, 'org_1', ['dmd_1'], {
      state: 'received',
      note: null,
      waitingFor: null,
      nextAttemptAt: null,
      retryUntil: until,
    }),
  );
  t.is(
    windowed.statements[0]!.sql,
    'update "dms_documents" set "state" = $1, "updated_at" = $2, "waiting_for" = $3, "next_attempt_at" = $4, "reason_code" = $5, "reason_text" = $6, "note" = $7, "retry_until" = $8 where "organization_id" = $9 and "id" in ($10)',
  );
  t.deepEqual(windowed.statements[0]!.params.slice(2), [null, null, null, null, null, until, 'org_1', 'dmd_1']);
  const cleared = recordingDb();
  await cleared.inTransaction((tx) =>
    setFlags(tx, 'org_1', ['dmd_1'], {
      state: 'received',
      note: null,
      waitingFor: null,
      nextAttemptAt: null,
      retryUntil: null,
    }),
  );
  t.deepEqual(cleared.statements[0]!.params.slice(7), [null, 'org_1', 'dmd_1'], 'a window given as null is cleared');
});

test('-> rejected: the reason code and text; the note, what it waited for and the next attempt cleared', async (t) => {
  const { inTransaction, statements } = recordingDb();
  const before = Date.now();
  await inTransaction((tx) =>
    setFlags(tx, 'org_1', ['dmd_3'], {
      state: 'rejected',
      reasonCode: 'R06',
      reasonText: 'The period 2026-02 is closed.',
    }),
  );
  const after = Date.now();
  t.is(statements.length, 2);
  t.is(
    statements[0]!.sql,
    'update "dms_documents" set "state" = $1, "updated_at" = $2, "waiting_for" = $3, "next_attempt_at" = $4, "note" = $5, "reason_code" = $6, "reason_text" = $7 where "organization_id" = $8 and "id" in ($9)',
  );
  assertNow(t, statements[0]!.params[1], before, after);
  t.deepEqual(
    [statements[0]!.params[0], ...statements[0]!.params.slice(2)],
    ['rejected', null, null, null, 'R06', 'The period 2026-02 is closed.', 'org_1', 'dmd_3'],
  );
  assertEvents(t, statements[1], ['dmd_3']);
});

test('-> superseded: the note, what it waited for and the next attempt cleared; the rest kept', async (t) => {
  const { inTransaction, statements } = recordingDb();
  await inTransaction((tx) => setFlags(tx, 'org_1', ['dmd_4', 'dmd_5'], { state: 'superseded' }));
  t.is(statements.length, 2);
  t.is(
    statements[0]!.sql,
    'update "dms_documents" set "state" = $1, "updated_at" = $2, "waiting_for" = $3, "next_attempt_at" = $4, "note" = $5 where "organization_id" = $6 and "id" in ($7, $8)',
  );
  t.deepEqual(
    [statements[0]!.params[0], ...statements[0]!.params.slice(2)],
    ['superseded', null, null, null, 'org_1', 'dmd_4', 'dmd_5'],
  );
  assertEvents(t, statements[1], ['dmd_4', 'dmd_5']);
});

test('no documents: nothing written, no event', async (t) => {
  const { inTransaction, statements } = recordingDb();
  await inTransaction((tx) => setFlags(tx, 'org_1', [], { state: 'superseded' }));
  await inTransaction((tx) =>
    setFlags(tx, 'org_1', [], {
      state: 'posted',
      mikonoTable: 'invoices',
      mikonoId: 'inv_1',
      quickbooksRef: null,
      accounting: null,
    }),
  );
  await inTransaction((tx) => setPostedFlags(tx, 'org_1', []));
  t.deepEqual(statements, []);
});

const POSTED_SQL =
  "UPDATE dms_documents AS d SET state = CASE WHEN x.note IS NULL THEN 'posted' ELSE 'received' END, updated_at = $1, posted_at = CASE WHEN x.note IS NULL THEN $2::timestamptz END, waiting_for = x.waiting_for, next_attempt_at = NULL, note = x.note, reason_code = NULL, reason_text = NULL, mikono_table = x.mikono_table, mikono_id = x.mikono_id, quickbooks_ref = x.quickbooks_ref, accounting_type = x.accounting_type, accounting_id = x.accounting_id FROM jsonb_to_recordset($3::jsonb) AS x(id text, mikono_table text, mikono_id text, quickbooks_ref text, accounting_type text, accounting_id text, note text, waiting_for text) WHERE d.organization_id = $4 AND d.id = x.id";

test('-> posted: every document given the same record, its accounting reference and the posting it follows, in one statement', async (t) => {
  const { inTransaction, statements } = recordingDb();
  const before = Date.now();
  await inTransaction((tx) =>
    setFlags(tx, 'org_1', ['dmd_6', 'dmd_7'], {
      state: 'posted',
      mikonoTable: 'invoice_sets',
      mikonoId: 'ivs_1',
      quickbooksRef: 'qb_1',
      accounting: { type: 'invoice', id: 'inv_1' },
    }),
  );
  const after = Date.now();
  t.is(statements.length, 2, 'the posted update and the events, nothing else');
  t.is(statements[0]!.sql, POSTED_SQL);
  const [updatedAt, postedAt, rows, organizationId] = statements[0]!.params;
  assertNow(t, updatedAt, before, after);
  t.is(postedAt, updatedAt, 'posted when changed');
  t.is(organizationId, 'org_1');
  const one = {
    mikono_table: 'invoice_sets',
    mikono_id: 'ivs_1',
    quickbooks_ref: 'qb_1',
    accounting_type: 'invoice',
    accounting_id: 'inv_1',
    note: null,
    waiting_for: null,
  };
  t.deepEqual(JSON.parse(rows as string), [
    { id: 'dmd_6', ...one },
    { id: 'dmd_7', ...one },
  ]);
  assertEvents(t, statements[1], ['dmd_6', 'dmd_7']);
});

test('-> posted for several documents, each its own record; one without an accounting posting, one held received while its posting is pending', async (t) => {
  const { inTransaction, statements } = recordingDb();
  await inTransaction((tx) =>
    setPostedFlags(tx, 'org_1', [
      { id: 'dmd_8', mikonoTable: 'customers', mikonoId: 'cus_1', quickbooksRef: null, accounting: null },
      {
        id: 'dmd_9',
        mikonoTable: 'invoices',
        mikonoId: 'inv_2',
        quickbooksRef: null,
        accounting: { type: 'invoice', id: 'inv_2' },
        held: {
          note: 'Applied in the service; waiting for its posting in the accounting system (QuickBooks).',
          waitingFor: 'accounting:invoice:inv_2',
        },
      },
      {
        id: 'dmd_10',
        mikonoTable: 'payments',
        mikonoId: 'pay_1',
        quickbooksRef: 'qb_2',
        accounting: { type: 'payment', id: 'pay_1' },
        held: null,
      },
    ]),
  );
  t.is(statements.length, 2);
  t.is(statements[0]!.sql, POSTED_SQL);
  t.deepEqual(JSON.parse(statements[0]!.params[2] as string), [
    {
      id: 'dmd_8',
      mikono_table: 'customers',
      mikono_id: 'cus_1',
      quickbooks_ref: null,
      accounting_type: null,
      accounting_id: null,
      note: null,
      waiting_for: null,
    },
    {
      id: 'dmd_9',
      mikono_table: 'invoices',
      mikono_id: 'inv_2',
      quickbooks_ref: null,
      accounting_type: 'invoice',
      accounting_id: 'inv_2',
      note: 'Applied in the service; waiting for its posting in the accounting system (QuickBooks).',
      waiting_for: 'accounting:invoice:inv_2',
    },
    {
      id: 'dmd_10',
      mikono_table: 'payments',
      mikono_id: 'pay_1',
      quickbooks_ref: 'qb_2',
      accounting_type: 'payment',
      accounting_id: 'pay_1',
      note: null,
      waiting_for: null,
    },
  ]);
  assertEvents(t, statements[1], ['dmd_8', 'dmd_9', 'dmd_10']);
});
