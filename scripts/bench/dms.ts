// The DMS push, measured (not asserted in a test: timed tests flake on a shared machine). On a fresh database, the
// service (API and worker in this process, production settings) and two distributors, each with its master data
// and van stock posted first:
// - asynchronous connection: `batches` pushes of 500 CS invoices each; the time from sending to the answer (all 500
//   stored and flagged received), median and worst; and posting throughput, documents/s = documents / (the last
//   flag's change - the first push), with the worker running beside the API as `npm start` runs them;
// - synchronous connection: `syncBatches` pushes of 50, each answered after its documents are posted; the answer's
//   time, median and worst, and documents/s over the whole run.
// - an XML file of about 5 MB of CS invoices (10 lines each): the answer, the time until it is parsed and every
//   document flagged, and until all are posted; and the process's resident memory before and at its peak meanwhile.
// Every document must end posted; the figures are not printed otherwise.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { pino } from 'pino';
import { sql } from 'kysely';
import { loadConfig } from '../../server/platform/config.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { applyMigrations } from '../../server/platform/database/migrations.js';
import type { Db } from '../../server/platform/database/transaction.js';
import { startService, type RunningService } from '../../server/composition/service.js';
import { writeDmsFile } from '../../server/modules/dms/xml/write.js';
import { dmsDocument, pendingDocuments, prepareDmsShop, requireAllPosted, until, type DmsShop } from './dms-setup.js';

export interface DmsFigures {
  batchSize: number;
  batches: number;
  answerMedianMs: number;
  answerMaxMs: number;
  postedPerSecond: number;
  syncBatchSize: number;
  syncBatches: number;
  syncAnswerMedianMs: number;
  syncAnswerMaxMs: number;
  syncPerSecond: number;
  /** The XML file: its size, documents, the answer, parsed and flagged, all posted, and the process's memory. */
  file: {
    bytes: number;
    documents: number;
    answerMs: number;
    parsedMs: number;
    postedMs: number;
    rssBeforeMb: number;
    rssPeakMb: number;
    /** The parser alone on the same file, in a process of its own (dms-file-memory.ts). */
    alone: { ms: number; rssBeforeMb: number; rssPeakMb: number };
  };
}

const D = dmsDocument;
const invoice = (n: number) =>
  D('sale_invoice', `CSR01${String(n).padStart(6, '0')}`, {
    routeCode: 'R01',
    customerCode: `UG${String(1 + (n % 20)).padStart(7, '0')}`,
    currency: 'UGX',
    payment: { method: 'credit' },
    lines: [
      { productCode: '100201', unit: 'case', quantity: 1, unitPrice: '24000' },
      { productCode: '100201', unit: 'bottle', quantity: 2, unitPrice: '1000', discount: '100' },
    ],
    totals: { subtotal: '26000', discount: '100', tax: '4662', total: '30562' },
  });

type Shop = DmsShop;

export async function benchDms(
  urlOf: (database: string) => string,
  options: { batches?: number; syncBatches?: number } = {},
): Promise<DmsFigures> {
  const batches = options.batches ?? 4;
  const syncBatches = options.syncBatches ?? 10;
  const name = 'bench_dms';
  const admin = new pg.Pool({ connectionString: urlOf('postgres'), max: 1 });
  admin.on('error', () => {}); // its idle connection may be cut when the bench's server is stopped
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  const pool = new pg.Pool({ connectionString: urlOf(name), max: 4 });
  // The database is dropped (WITH FORCE) at the end: an idle connection cut then is not an error of the bench.
  pool.on('error', () => {});
  const db = kyselyOver(pool);
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-dms-'));
  const config = loadConfig({
    DATABASE_URL: urlOf(name),
    PORT: '0',
    LOG_LEVEL: 'silent',
    SANDBOX_BOOTSTRAP: 'false',
    DATA_DIR: dataDir,
    SHUTDOWN_TIMEOUT_MS: '5000',
    NODE_ENV: 'production',
    ENVIRONMENT: 'production',
    CURSOR_SECRET: 'bench-cursor-secret-0123456789',
    WEBHOOK_SECRET_KEY: 'b'.repeat(64),
    PUBLIC_BASE_URL: 'http://127.0.0.1',
  });
  let running: RunningService | null = null;
  try {
    await applyMigrations(pool);
    running = await startService(config, pino({ level: 'silent' }), { role: 'all' });
    const base = `${running.url}/api/v1`;
    let keys = 0;
    const push = async (shop: Shop, body: unknown) => {
      const started = performance.now();
      const res = await fetch(`${base}/dms/canonical/documents`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${shop.key}`,
          'content-type': 'application/json',
          'idempotency-key': `bench-${keys++}`,
        },
        body: JSON.stringify(body),
      });
      const answer = (await res.json()) as { flags: { state: string }[] };
      if (res.status >= 300) throw new Error(`push: ${res.status} ${JSON.stringify(answer)}`);
      return { ms: performance.now() - started, flags: answer.flags };
    };
    const prepare = (label: string, synchronous: boolean, cases: number) =>
      prepareDmsShop(db, { name: `Bench DMS ${label}`, synchronous, cases, push });

    const asyncShop = await prepare('async', false, batches * 500 * 2);
    const answers: number[] = [];
    const first = await firstChange(db);
    let n = 0;
    for (let b = 0; b < batches; b += 1) {
      const { ms, flags } = await push(asyncShop, { documents: Array.from({ length: 500 }, () => invoice(n++)) });
      if (flags.some((flag) => flag.state !== 'received')) throw new Error('a bench document was not received');
      answers.push(ms);
    }
    await until(
      async () => (await pendingDocuments(db, asyncShop.organizationId)) === 0,
      600_000,
      'the batches posted',
      50,
    );
    await requireAllPosted(db, asyncShop.organizationId);
    const drainMs = (await lastChange(db, asyncShop.organizationId)) - first;

    const syncShop = await prepare('sync', true, syncBatches * 50 * 2);
    const syncAnswers: number[] = [];
    const syncStarted = performance.now();
    for (let b = 0; b < syncBatches; b += 1) {
      const { ms, flags } = await push(syncShop, { documents: Array.from({ length: 50 }, () => invoice(n++)) });
      if (flags.some((flag) => flag.state !== 'posted'))
        throw new Error(
          `a synchronous document did not post: ${JSON.stringify(flags.find((f) => f.state !== 'posted'))}`,
        );
      syncAnswers.push(ms);
    }
    const syncMs = performance.now() - syncStarted;
    await requireAllPosted(db, syncShop.organizationId);

    // The file: invoices of 10 lines, as many as fit in just under 5 MB.
    const fileInvoice = (i: number) => {
      const base = invoice(n + i);
      const lines = Array.from({ length: 10 }, () => ({
        productCode: '100201',
        unit: 'case',
        quantity: 1,
        unitPrice: '24000',
      }));
      return {
        ...base,
        body: { ...base.body, lines, totals: { subtotal: '240000', discount: '0', tax: '43200', total: '283200' } },
      };
    };
    const perInvoice = Buffer.byteLength(writeDmsFile([fileInvoice(0)])) - Buffer.byteLength(writeDmsFile([]));
    const count = Math.floor((5 * 1024 * 1024 - 200) / perInvoice);
    const fileShop = await prepare('file', false, count * 10 + 10); // 10 cases an invoice
    const xml = writeDmsFile(Array.from({ length: count }, (_, i) => fileInvoice(i)));
    n += count;
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }, 20);
    const fileStarted = performance.now();
    const upload = await fetch(`${base}/dms/canonical/files`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${fileShop.key}`,
        'content-type': 'application/xml',
        'idempotency-key': `bench-${keys++}`,
      },
      body: xml,
    });
    const answerMs = performance.now() - fileStarted;
    const batch = (await upload.json()) as { batchId: string };
    if (upload.status !== 202) throw new Error(`file: ${upload.status} ${JSON.stringify(batch)}`);
    const batchRow = () =>
      db
        .selectFrom('dms_batches')
        .select(['file_status', 'file_error'])
        .where('organization_id', '=', fileShop.organizationId)
        .where('id', '=', batch.batchId)
        .executeTakeFirstOrThrow();
    await until(async () => (await batchRow()).file_status !== 'received', 60_000, 'the file parsed', 50);
    const parsedMs = performance.now() - fileStarted;
    clearInterval(sampler);
    const parsed = await batchRow();
    if (parsed.file_status !== 'parsed') throw new Error(`the bench file did not parse: ${parsed.file_error}`);
    await until(
      async () => (await pendingDocuments(db, fileShop.organizationId)) === 0,
      600_000,
      'the file posted',
      50,
    );
    const postedMs = performance.now() - fileStarted;
    await requireAllPosted(db, fileShop.organizationId);
    const xmlPath = join(dataDir, 'bench.xml');
    writeFileSync(xmlPath, xml);
    const alone = JSON.parse(
      execFileSync(
        process.execPath,
        ['--import', 'tsx', join(dirname(fileURLToPath(import.meta.url)), 'dms-file-memory.ts'), xmlPath],
        { encoding: 'utf8' },
      )
        .trim()
        .split('\n')
        .at(-1)!,
    ) as DmsFigures['file']['alone'];
    const file = {
      bytes: Buffer.byteLength(xml),
      documents: count,
      answerMs,
      parsedMs,
      postedMs,
      rssBeforeMb: rssBefore / 1048576,
      rssPeakMb: rssPeak / 1048576,
      alone,
    };
    return {
      batchSize: 500,
      batches,
      answerMedianMs: median(answers),
      answerMaxMs: Math.max(...answers),
      postedPerSecond: (batches * 500) / (drainMs / 1000),
      syncBatchSize: 50,
      syncBatches,
      syncAnswerMedianMs: median(syncAnswers),
      syncAnswerMaxMs: Math.max(...syncAnswers),
      syncPerSecond: (syncBatches * 50) / (syncMs / 1000),
      file,
    };
  } catch (error) {
    process.stderr.write(`dms bench: ${(error as Error).stack ?? String(error)}\n`);
    throw error;
  } finally {
    await running?.stop().catch(() => {});
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// The database's clock, as the flags' updated_at.
const firstChange = async (db: Db) =>
  (await sql<{ now: Date }>`select now() as now`.execute(db)).rows[0]!.now.getTime();
const lastChange = async (db: Db, organizationId: string) =>
  new Date(
    (
      await db
        .selectFrom('dms_documents')
        .select((eb) => eb.fn.max('updated_at').as('at'))
        .where('organization_id', '=', organizationId)
        .executeTakeFirstOrThrow()
    ).at as Date,
  ).getTime();

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export function dmsReport(f: DmsFigures): string[] {
  return [
    `DMS push (API and worker in one process): a batch of ${f.batchSize} CS invoices answered with its flags in ${f.answerMedianMs.toFixed(0)} ms (median of ${f.batches}; worst ${f.answerMaxMs.toFixed(0)} ms; aim under 1 s)`,
    `  posted: ${f.postedPerSecond.toFixed(0)} documents/s (${f.batches * f.batchSize} invoices, first push to last flag; aim at least 300/s)`,
    `  synchronous mode, batches of ${f.syncBatchSize}: answered with final flags in ${f.syncAnswerMedianMs.toFixed(0)} ms (median of ${f.syncBatches}; worst ${f.syncAnswerMaxMs.toFixed(0)} ms), ${f.syncPerSecond.toFixed(0)} documents/s`,
    `  XML file of ${(f.file.bytes / 1048576).toFixed(2)} MB, ${f.file.documents} CS invoices of 10 lines: answered in ${f.file.answerMs.toFixed(0)} ms, parsed and every document flagged in ${f.file.parsedMs.toFixed(0)} ms (aim under 3 s), all posted in ${(f.file.postedMs / 1000).toFixed(1)} s`,
    `  memory: the parser alone on that file, in a process of its own, ${f.file.alone.rssBeforeMb.toFixed(0)} MB before and ${f.file.alone.rssPeakMb.toFixed(0)} MB at its peak (aim under 200 MB; parsed in ${f.file.alone.ms.toFixed(0)} ms);`,
    `  the bench's own process (the service, API and worker, and all it kept from the scenarios before) ${f.file.rssBeforeMb.toFixed(0)} MB before the file, ${f.file.rssPeakMb.toFixed(0)} MB at its peak while it was taken and parsed`,
  ];
}
