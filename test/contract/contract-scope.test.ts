// Where `npm run contract` writes, as a partner runs it (a child process against the real service): on the sandbox
// with its one key it passes and leaves the DMS as it was (no document, flag, wait, reconciliation or notification);
// on an empty organisation set up as the README says (both modules, a canonical DMS connection) it passes, with
// or without the DMS examples; and a DMS example whose document is rejected is a failure, not a pass. The sandbox run
// is the README's own sample ("Contract check of a deployment"), run as it is written and compared with the output
// the text shows; test/docs/samples.test.ts skips that block, so that the suite runs a whole check of a sandbox once.
import test from 'ava';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { apiDocument } from '../../server/platform/spec.js';
import { bootstrapSandbox } from '../../server/modules/sandbox/bootstrap.js';
import { addConnection } from '../../server/modules/dms/connections.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { inTransaction } from '../../server/platform/database/transaction.js';
import { codeBlocks, compareOutput } from '../docs/code-blocks.js';
import { createCaller } from '../support/callers.js';
import { runContract, type ContractRun } from '../support/contract.js';
import { useTestService } from '../support/service.js';

// The service without its own response validation (VALIDATE_RESPONSES=false), as a partner's deployment runs: the
// command under test checks every answer against the description and makes it a FAIL line, which these tests
// count, so an answer the validator would have turned into a 500 fails here all the same. The validator's
// compiling and checking, for every operation of four whole runs, was ~40 % of this file's CPU (own 21 -> 12 s).
const api = useTestService(test, 'contract_scope', { env: { VALIDATE_RESPONSES: 'false' } });
const pool = () => api().service.database.pool;
const scratch = mkdtempSync(join(tmpdir(), 'contract-scope-'));
test.after.always(() => rmSync(scratch, { recursive: true, force: true }));

type Json = Record<string, any>;
type Run = ContractRun;

const requestOf = (line: string) => /^(?:PASS|FAIL|SKIP) {2}(\S+ \S+(?: \(example: [^)]+\))?)/.exec(line)?.[1] ?? line;
const lastLine = (run: Run) => run.stdout.trimEnd().split('\n').at(-1)!;
const DMS_WRITES = /^(POST \/dms\/\{system\}\/(documents|files))/;

/** The organisation's DMS as it stands: documents by state and reason, waits, reconciliations, notifications. */
async function dmsState(organizationId: string) {
  const query = async (sql: string) => (await pool().query(sql, [organizationId])).rows;
  return {
    documents: await query(
      'SELECT state, reason_code, count(*)::int AS n FROM dms_documents WHERE organization_id = $1 GROUP BY 1, 2 ORDER BY 1, 2',
    ),
    waiting: await query(
      "SELECT count(*)::int AS n FROM dms_documents WHERE organization_id = $1 AND state = 'received' AND next_attempt_at IS NOT NULL",
    ),
    batches: await query('SELECT count(*)::int AS n FROM dms_batches WHERE organization_id = $1'),
    reconciliations: await query('SELECT count(*)::int AS n FROM dms_reconciliations WHERE organization_id = $1'),
    notifications: await query(
      'SELECT kind, count(*)::int AS n FROM notifications WHERE organization_id = $1 GROUP BY 1 ORDER BY 1',
    ),
  };
}

/** The README's sample of the check: the first sh block of "## Contract check of a deployment" and the text block after it. */
function readmeSample(): { command: string; expected: string } {
  const readme = readFileSync('README.md', 'utf8');
  const section = readme.split(/^## Contract check of a deployment$/m)[1]?.split(/^## /m)[0] ?? '';
  const blocks = codeBlocks('README.md', section);
  const index = blocks.findIndex((block) => block.kind === 'shell');
  const output = blocks[index + 1];
  if (index < 0 || output?.lang !== 'text')
    throw new Error('README.md: "## Contract check of a deployment" has no sh block followed by a text block');
  return { command: blocks[index]!.code, expected: output.code };
}

/** The command as the README runs it: the key in CONTRACT_API_KEY, the base URL as the one argument. */
async function runAsTheReadme(baseUrl: string, key: string): Promise<Run> {
  process.env.CONTRACT_API_KEY = key; // read by the command's --key option (the tests of this file run in turn)
  try {
    return await runContract(['--base-url', baseUrl]);
  } finally {
    delete process.env.CONTRACT_API_KEY;
  }
}

test.serial(
  "on the sandbox, with its one key: every request passes or is skipped, the DMS examples are not sent, and the sandbox's DMS, waits and notifications stay as they were",
  async (t) => {
    t.timeout(15 * 60_000); // whole runs of the check on a loaded machine
    const sandbox = await bootstrapSandbox(kyselyOver(pool()), join(scratch, 'sandbox'), pino({ level: 'silent' }));
    t.truthy(sandbox, 'the test database had no organisation yet');
    const before = await dmsState(sandbox!.organizationId);
    const sample = readmeSample();
    t.is(
      sample.command,
      'CONTRACT_API_KEY="$ERP_API_KEY" npm run --silent contract -- --base-url "$ERP_BASE_URL"\n',
      "the README's command is the one this test runs",
    );
    const result = await runAsTheReadme(api().baseUrl, sandbox!.secret);
    t.is(result.code, 0, result.stdout + result.stderr);
    t.is(compareOutput(sample.expected, result.stdout), null, 'it prints what the README shows');
    t.deepEqual(
      result.lines.filter((l) => l.startsWith('FAIL')),
      [],
    );
    const skipped = result.lines.filter((l) => l.startsWith('SKIP')).map(requestOf);
    t.true(skipped.some((r) => r.startsWith('POST /dms/{system}/documents')));
    t.deepEqual(
      skipped.filter((r) => !DMS_WRITES.test(r)),
      ['GET /dms/{system}/files/{batchId}', 'GET /dms/{system}/files/{batchId}/flags'],
      "only the DMS writes and the reads of the file batch only they make; the trips are the sandbox's own",
    );
    t.true(result.lines.some((l) => l.startsWith('PASS  GET /trips/{id}/settlement')));
    t.regex(
      lastLine(result),
      new RegExp(`^${result.lines.length - skipped.length} passed, 0 failed, ${skipped.length} skipped$`),
    );
    // It says what it changed.
    const report = result.stdout.split('\n');
    t.regex(
      report.find((l) => l.startsWith('Changed in '))!,
      /^Changed in Kampala Beverages Ltd \(sandbox\): \d+ records written or changed by this run: .*cus \d+ \(cus_/,
    );
    t.regex(
      report.find((l) => l.startsWith('DMS: '))!,
      /^DMS: nothing sent \(\d+ requests skipped: --dms DISTRIBUTOR_CODE sends the DMS examples/,
    );
    // Give the worker a moment: had anything been sent, it would be posting it now.
    await new Promise((done) => setTimeout(done, 1500));
    t.deepEqual(await dmsState(sandbox!.organizationId), before);
  },
);

test.serial(
  'on an empty organisation set up as the README says, it passes: the trip reads are skipped (only the service writes trips), and with --dms its DMS examples are accepted',
  async (t) => {
    t.timeout(15 * 60_000); // whole runs of the check on a loaded machine
    const caller = await createCaller(pool(), { modules: ['delivery', 'field-sales'] });
    await inTransaction(kyselyOver(pool()), (tx) =>
      addConnection(tx, caller.organizationId, 'canonical', { distributorCode: 'KLA042' }),
    );
    for (const dms of [[], ['--dms', 'KLA042']]) {
      const result = await runContract(['--base-url', api().baseUrl, '--key', caller.secret, ...dms]);
      t.is(result.code, 0, `${dms.join(' ')}\n${result.stdout}${result.stderr}`);
      t.deepEqual(
        result.lines.filter((l) => l.startsWith('FAIL')),
        [],
        dms.join(' '),
      );
      const skipped = result.lines.filter((l) => l.startsWith('SKIP'));
      for (const read of ['GET /trips/{id}', 'GET /trips/{id}/locations', 'GET /trips/{id}/settlement']) {
        t.regex(
          skipped.find((l) => requestOf(l) === read) ?? read,
          /skipped: the organisation has no trp record to read \(no request of this check writes one; the service does\)/,
        );
      }
      if (dms.length === 0) continue;
      t.false(
        skipped.some((l) => DMS_WRITES.test(requestOf(l))),
        'with --dms the DMS examples are sent',
      );
      const pushes = result.lines.filter((l) => requestOf(l).startsWith('POST /dms/{system}/documents'));
      t.true(pushes.every((l) => l.startsWith('PASS')));
      const sale = pushes.find((l) => l.includes('(example: sale_invoice)'))!;
      t.regex(
        sale,
        /numbers and codes made new for this run: UG0000123->UG0\d{6}, 100201->\d{6}, CSR01000123->CSR01\d{6}; distributor DIST001 sent as KLA042/,
      );
      const dmsLine = result.stdout.split('\n').find((l) => l.startsWith('DMS: '))!;
      t.regex(dmsLine, /^DMS: \d+ document flags answered \(.*rejected R07.*\); 1 XML file/);
      // Every document it sent is the connection's distributor's, except the example sent as another's on purpose.
      const { rows } = await pool().query(
        'SELECT distributor_code, count(*)::int AS n FROM dms_documents WHERE organization_id = $1 GROUP BY 1 ORDER BY 1',
        [caller.organizationId],
      );
      t.deepEqual(
        rows.map((r) => r.distributor_code),
        ['DIST999', 'KLA042'],
      );
    }
  },
);

test.serial(
  'a DMS example whose document is rejected is a failure, with its reason code; an example that declares its rejection passes',
  async (t) => {
    t.timeout(15 * 60_000); // whole runs of the check on a loaded machine
    const caller = await createCaller(pool(), { modules: ['delivery', 'field-sales'] });
    await inTransaction(kyselyOver(pool()), (tx) =>
      addConnection(tx, caller.organizationId, 'canonical', { distributorCode: 'DIST001' }),
    );
    const document = structuredClone(apiDocument) as Json;
    document.paths = { '/dms/{system}/documents': document.paths['/dms/{system}/documents'] };
    const spec = join(scratch, 'dms-push-only.json');
    writeFileSync(spec, JSON.stringify(document));
    // Another distributor code than the connection's: every document is rejected R07 on arrival, answered 202.
    const result = await runContract([
      '--base-url',
      api().baseUrl,
      '--key',
      caller.secret,
      '--spec',
      spec,
      '--dms',
      'OTHER01',
    ]);
    t.is(result.code, 1, result.stdout + result.stderr);
    const examples = Object.entries(
      document.paths['/dms/{system}/documents'].post.requestBody.content['application/json'].examples as Json,
    );
    const declared = examples.filter(([, example]) => example['x-expected-flags']).map(([name]) => name);
    t.deepEqual(declared.sort(), [
      'rejected_another_distributor',
      'rejected_format',
      'rejected_no_customer',
      'rejected_not_a_document',
      'rejected_totals',
    ]);
    for (const line of result.lines) {
      const name = /\(example: ([^)]+)\)/.exec(line)![1]!;
      if (name === 'rejected_another_distributor' || name === 'rejected_not_a_document' || name === 'rejected_format') {
        t.regex(line, /^PASS  POST \S+ \(example: \w+\) 202 /, line); // rejected as the example declares (R07 or R09 first)
      } else if (declared.includes(name)) {
        t.regex(
          line,
          /^FAIL .* 202 .*flag the flags are \[rejected R07\], the example expects \[rejected R0[14]\]/,
          line,
        );
      } else {
        t.regex(
          line,
          /^FAIL  POST \S+ \(example: \w+\) 202 \S+ \[contract-[0-9a-f]+-\d+\] {2}flag \d+ of \d+ documents? rejected: \S+ R07: The document is for distributor OTHER01; this connection serves DIST001 only\./,
          line,
        );
      }
    }
    t.is(lastLine(result), `3 passed, ${examples.length - 3} failed`);
  },
);
