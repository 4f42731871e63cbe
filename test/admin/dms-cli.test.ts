// `admin dms connection add | update | show`, `admin dms show` and `admin dms reprocess`, run as an operator runs
// them (one test per group: CLI processes are costly). The flag rules themselves are proved in test/dms/.
import test from 'ava';
import { ingestBatch } from '../../server/modules/dms/ingest.js';
import { findConnection } from '../../server/modules/dms/connections.js';
import { runCli, runCliJson } from '../support/cli.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';
import { doc, masterData } from '../support/dms.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('dms_cli');
});
test.after.always(async () => {
  await world?.close();
});
const env = () => ({
  DATABASE_URL: world.database.url,
  WEBHOOK_SECRET_KEY: 'cd'.repeat(32),
  WEBHOOK_ALLOW_LOOPBACK: 'true',
});

test('connection add serves one distributor code, update changes only what is given (a callback URL becomes a webhook endpoint whose secret is shown once), show prints it; bad values exit 2 or 1 naming the option', async (t) => {
  const { organization } = await world.organization();
  const org = organization.id;
  const added = await runCliJson(
    ['dms', 'connection', 'add', '--org', org, '--distributor-code', 'DIST001', '--json'],
    env(),
  );
  t.like(added, {
    system: 'canonical',
    distributorCode: 'DIST001',
    synchronous: false,
    returnPath: 'response',
    fiscalise: true,
    cutOffTime: '20:00',
    webhookEndpointId: null,
  });
  const again = await runCli(['dms', 'connection', 'add', '--org', org, '--distributor-code', 'DIST002'], env());
  t.is(again.code, 1);
  t.regex(again.stderr, /already has a canonical connection/);
  const updated = await runCliJson(
    [
      'dms',
      'connection',
      'update',
      '--org',
      org,
      '--synchronous',
      'on',
      '--cut-off',
      '18:30',
      '--return-path',
      'callback',
      '--callback-url',
      'http://127.0.0.1:9/flags',
      '--json',
    ],
    env(),
  );
  t.like(updated, {
    distributorCode: 'DIST001',
    synchronous: true,
    cutOffTime: '18:30',
    returnPath: 'callback',
    fiscalise: true,
  });
  t.regex(updated.callbackSecret, /^whsec_/);
  const endpoint = await world.db
    .selectFrom('webhook_endpoints')
    .select(['id', 'events', 'url'])
    .where('organization_id', '=', org)
    .executeTakeFirstOrThrow();
  t.deepEqual(
    { id: endpoint.id, events: endpoint.events },
    { id: updated.webhookEndpointId, events: ['dms.document.flagged'] },
  );
  const shown = await runCli(['dms', 'connection', 'show', '--org', org, '--json'], env());
  t.is(shown.code, 0, shown.stderr);
  t.false(shown.stdout.includes(updated.callbackSecret), 'the secret is shown only once');
  const badCutOff = await runCli(['dms', 'connection', 'update', '--org', org, '--cut-off', '25:00'], env());
  t.is(badCutOff.code, 1);
  t.regex(badCutOff.stderr, /--cut-off is a time HH:MM/);
  const badPath = await runCli(['dms', 'connection', 'update', '--org', org, '--return-path', 'sftp'], env());
  t.is(badPath.code, 2);
  t.regex(badPath.stderr, /response, callback, flag_file/);
  const noCallback = await runCli(['dms', 'connection', 'update', '--org', org, '--return-path', 'callback'], env());
  t.is(noCallback.code, 0, 'the connection already has its callback endpoint');
  const other = await world.organization();
  const missing = await runCli(
    ['dms', 'connection', 'update', '--org', other.organization.id, '--synchronous', 'off'],
    env(),
  );
  t.is(missing.code, 1);
  t.regex(missing.stderr, /has no canonical connection; add one/);
});

test('reprocess issues a new flag for a rejected document, refuses R05 saying why, and takes a date with reason codes; show prints a document with its flag', async (t) => {
  const { organization } = await world.organization();
  const org = organization.id;
  await runCliJson(['dms', 'connection', 'add', '--org', org, '--distributor-code', 'DIST001', '--json'], env());
  const connection = (await findConnection(world.db, org, 'canonical'))!;
  const warehouse = doc('warehouse', 'M07', { name: 'Far' }, { status: 'active' });
  const first = await world.post((tx) => ingestBatch(tx, connection, [masterData.soda, warehouse]));
  // Rejected as the worker would have rejected it (R03: no such location), and an R05 beside it.
  await world.db
    .updateTable('dms_documents')
    .set({ state: 'rejected', reason_code: 'R03', reason_text: 'M07 matches no location', next_attempt_at: null })
    .where('organization_id', '=', org)
    .where('id', '=', first.flags[1]!.id)
    .execute();
  const r05 = await world.post((tx) => ingestBatch(tx, connection, [{ ...warehouse, body: { name: 'Farther' } }]));
  t.is(r05.flags[0]!.state, 'received', 'master data: a new content is a new version, not R05');

  const refused = await runCli(['dms', 'reprocess', first.flags[0]!.id, '--org', org], env());
  t.is(refused.code, 1);
  t.regex(refused.stderr, /is received and still being tried/);
  const done = await runCliJson(['dms', 'reprocess', first.flags[1]!.id, '--org', org, '--json'], env());
  t.deepEqual(done, { reprocessed: [first.flags[1]!.id] });
  const shown = await runCliJson(['dms', 'show', first.flags[1]!.id, '--org', org], env());
  t.like(shown, {
    flag: { state: 'received', note: 'Re-processing was asked for.' },
    version: 1,
    naturalKey: 'DIST001|warehouse|M07',
  });
  await world.db
    .updateTable('dms_documents')
    .set({ state: 'rejected', reason_code: 'R08', reason_text: 'waited', next_attempt_at: null })
    .where('organization_id', '=', org)
    .where('id', '=', first.flags[1]!.id)
    .execute();
  t.deepEqual(
    await runCliJson(
      ['dms', 'reprocess', '--org', org, '--date', '2026-11-25', '--reason', 'R08,R03', '--json'],
      env(),
    ),
    { reprocessed: [first.flags[1]!.id] },
  );
  const badReason = await runCli(['dms', 'reprocess', '--org', org, '--date', '2026-11-25', '--reason', 'R05'], env());
  t.is(badReason.code, 2);
  t.regex(badReason.stderr, /R05 cannot be re-processed/);
  const both = await runCli(['dms', 'reprocess', first.flags[1]!.id, '--org', org, '--batch', first.batchId], env());
  t.is(both.code, 1);
  t.regex(both.stderr, /Name one document, or --batch ID/);

  // Each re-process is an action towards the DMS: `dms actions` lists it (one per document, its status done).
  const { actions } = (await runCliJson(['dms', 'actions', '--org', org, '--json'], env())) as {
    actions: { kind: string; subjectId: string; status: string; detail: string }[];
  };
  t.deepEqual(
    actions.map((a) => [a.kind, a.subjectId, a.status]),
    [['reprocess', first.flags[1]!.id, 'done']],
  );
  t.regex(actions[0]!.detail, /warehouse M07 is received again/);
  const text = await runCli(['dms', 'actions', '--org', org, '--limit', '5'], env());
  t.regex(text.stdout, /reprocess\s+done\s+dmd_/);
  t.is((await runCli(['dms', 'actions', '--org', org, '--limit', '0'], env())).code, 2);
});

test('dms list answers "which documents were rejected R03 on that day": filters by state, reason, date, salesman and type, as a table, JSON or CSV; bad filters exit 2', async (t) => {
  const { organization } = await world.organization();
  const org = organization.id;
  await runCliJson(['dms', 'connection', 'add', '--org', org, '--distributor-code', 'DIST001'], env());
  const connection = (await findConnection(world.db, org, 'canonical'))!;
  const batch = await world.post((tx) =>
    ingestBatch(tx, connection, [
      masterData.soda,
      doc('warehouse', 'M07', { name: 'Far' }, { status: 'active' }),
      doc('warehouse', 'M08', { name: 'Farther' }, { status: 'active', salesmanCode: 'SM02' }),
      doc('warehouse', 'M09', { name: 'Other day' }, { status: 'active', documentDate: '2026-11-24' }),
    ]),
  );
  const [soda, m07, m08, m09] = batch.flags.map((flag) => flag.id);
  // Rejected as the worker would have rejected them.
  const reject = (id: string, code: string, text: string) =>
    world.db
      .updateTable('dms_documents')
      .set({ state: 'rejected', reason_code: code, reason_text: text, next_attempt_at: null })
      .where('organization_id', '=', org)
      .where('id', '=', id)
      .execute();
  await reject(m07!, 'R03', 'M07, "far", matches no location');
  await reject(m08!, 'R03', 'M08 matches no location');
  await reject(m09!, 'R03', 'M09 matches no location');

  const listed = async (...filters: string[]) =>
    (
      await runCliJson<{ documents: { documentId: string }[] }>(['dms', 'list', '--org', org, ...filters], env())
    ).documents
      .map((d) => d.documentId)
      .sort();
  t.deepEqual(await listed(), [soda, m07, m08, m09].sort());
  t.deepEqual(await listed('--state', 'rejected', '--reason', 'R03', '--date', '2026-11-25'), [m07, m08].sort());
  t.deepEqual(await listed('--state', 'rejected', '--reason', 'R03', '--date', '2026-11-25', '--salesman', 'SM02'), [
    m08,
  ]);
  t.deepEqual(await listed('--type', 'product'), [soda]);
  t.deepEqual(await listed('--state', 'received,posted', '--type', 'product,warehouse'), [soda]);
  t.deepEqual(await listed('--reason', 'R08'), []);
  const one = (
    await runCliJson<{ documents: Record<string, unknown>[] }>(
      ['dms', 'list', '--org', org, '--salesman', 'SM02'],
      env(),
    )
  ).documents[0];
  t.like(one, {
    documentId: m08,
    system: 'canonical',
    documentType: 'warehouse',
    documentNumber: 'M08',
    documentDate: '2026-11-25',
    salesmanCode: 'SM02',
    state: 'rejected',
    reasonCode: 'R03',
  });

  const text = await runCli(['dms', 'list', '--org', org, '--state', 'rejected', '--date', '2026-11-25'], env());
  t.is(text.code, 0, text.stderr);
  const [header, ...rows] = text.stdout.trimEnd().split('\n');
  t.regex(header!, /^DOCUMENT\s+TYPE\s+NUMBER\s+DATE\s+SALESMAN\s+STATE\s+REASON\s+WHY\s+UPDATED$/);
  t.is(rows.length, 2);
  t.true(
    rows.every((row) => /warehouse\s+M0[78]\s+2026-11-25\s+SM0[12]\s+rejected\s+R03/.test(row)),
    rows.join('\n'),
  );

  const csv = await runCli(
    ['dms', 'list', '--org', org, '--salesman', 'SM01', '--state', 'rejected', '--date', '2026-11-25', '--csv'],
    env(),
  );
  t.is(csv.code, 0, csv.stderr);
  const lines = csv.stdout.split('\r\n');
  t.is(lines[0], 'DOCUMENT,TYPE,NUMBER,DATE,SALESMAN,STATE,REASON,WHY,UPDATED');
  t.true(
    lines[1]!.startsWith(`${m07},warehouse,M07,2026-11-25,SM01,rejected,R03,"M07, ""far"", matches no location",`),
    lines[1],
  );
  t.is(lines.length, 3, 'the header, one record, and the CRLF that ends it');

  t.is((await runCli(['dms', 'list', '--org', org, '--state', 'lost'], env())).code, 2);
  t.is((await runCli(['dms', 'list', '--org', org, '--reason', 'R10'], env())).code, 2);
  t.is((await runCli(['dms', 'list', '--org', org, '--type', 'invoice'], env())).code, 2);
  t.is((await runCli(['dms', 'list', '--org', org, '--date', '25/11/2026'], env())).code, 2);
  const both = await runCli(['dms', 'list', '--org', org, '--json', '--csv'], env());
  t.is(both.code, 2);
  t.regex(both.stderr, /--json.*cannot be used with.*--csv|--csv.*cannot be used with.*--json/);
});

test("dms reconciliations lists each salesman's reconciled days, newest first, filtered by salesman, date and status, with their differences on request", async (t) => {
  const { organization } = await world.organization();
  const org = organization.id;
  await runCliJson(['dms', 'connection', 'add', '--org', org, '--distributor-code', 'DIST001'], env());
  const connection = (await findConnection(world.db, org, 'canonical'))!;
  // Days as the reconciliation job stores them (its rules are proved in test/dms/).
  const day = (id: string, salesman: string, date: string, differences: { kind: string; message: string }[]) => ({
    organization_id: org,
    id,
    connection_id: connection.id,
    salesman_code: salesman,
    business_date: date,
    status: differences.length === 0 ? 'balanced' : 'differences',
    difference_count: differences.length,
    result: JSON.stringify({ comparedWith: { routeSettlement: null, dailyTotals: null }, totals: [], differences }),
    result_hash: id,
    checked_at: new Date('2026-11-26T06:00:00Z'),
  });
  await world.db
    .insertInto('dms_reconciliations')
    .values([
      day('dmr_a', 'SM01', '2026-11-24', []),
      day('dmr_b', 'SM01', '2026-11-25', [
        { kind: 'missing', message: 'CS-1 is listed by the route settlement but never arrived.' },
      ]),
      day('dmr_c', 'SM02', '2026-11-25', []),
    ] as never)
    .execute();

  const days = await runCliJson<{
    reconciliations: {
      id: string;
      salesmanCode: string;
      businessDate: string;
      status: string;
      differenceCount: number;
    }[];
  }>(['dms', 'reconciliations', '--org', org], env());
  t.deepEqual(
    days.reconciliations.map((d) => [d.businessDate, d.salesmanCode, d.status, d.differenceCount]),
    [
      ['2026-11-25', 'SM01', 'differences', 1],
      ['2026-11-25', 'SM02', 'balanced', 0],
      ['2026-11-24', 'SM01', 'balanced', 0],
    ],
  );
  const ids = async (...filters: string[]) =>
    (
      await runCliJson<{ reconciliations: { id: string }[] }>(
        ['dms', 'reconciliations', '--org', org, ...filters],
        env(),
      )
    ).reconciliations.map((d) => d.id);
  t.deepEqual(await ids('--salesman', 'SM01'), ['dmr_b', 'dmr_a']);
  t.deepEqual(await ids('--date', '2026-11-25', '--status', 'balanced'), ['dmr_c']);
  const text = await runCli(
    ['dms', 'reconciliations', '--org', org, '--status', 'differences', '--differences'],
    env(),
  );
  t.is(text.code, 0, text.stderr);
  t.regex(
    text.stdout,
    /^DATE\s+SALESMAN\s+STATUS\s+DIFFERENCES\s+CHECKED\n2026-11-25\s+SM01\s+differences\s+1\s+2026-11-26T06:00:00.000Z\n\n2026-11-25 SM01:\n  missing\s+CS-1 is listed/,
  );
  const csv = await runCli(['dms', 'reconciliations', '--org', org, '--csv', '--salesman', 'SM02'], env());
  t.is(
    csv.stdout,
    'DATE,SALESMAN,STATUS,DIFFERENCES,CHECKED\r\n2026-11-25,SM02,balanced,0,2026-11-26T06:00:00.000Z\r\n',
  );
  t.is((await runCli(['dms', 'reconciliations', '--org', org, '--status', 'open'], env())).code, 2);
});
