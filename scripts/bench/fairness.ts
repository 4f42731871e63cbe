// `npm run bench -- --only fair`: fair to every distributor (issue 37, item 10; decision 0040). On a fresh database,
// the service (API and worker in this process, production settings, accounting off as in the DMS part) and two
// distributors, each with its master data and van stock posted first:
// - A alone: an XML file of `documents` CS invoices (one line each, about 4.6 MB at 10,000) uploaded, and the time
//   until all are posted: A's documents/s;
// - A with B: A's next file of as many, and while it is processed, B pushes one invoice at a time (JSON, an
//   asynchronous connection), one every `gapMs` after the last one posted; each push's time from sending to its
//   `posted` flag (median, worst, how many), and A's documents/s meanwhile;
// - A alone again (the same as the first, on the fuller tables): A's documents/s without B is the mean of the two.
// Aims: B posted within 2 s, A with B at least 0.9 of A alone.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../../server/platform/config.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { applyMigrations } from '../../server/platform/database/migrations.js';
import type { Db } from '../../server/platform/database/transaction.js';
import { startService, type RunningService } from '../../server/composition/service.js';
import { dmsDocument, prepareDmsShop, requireAllPosted, until, type DmsShop } from './dms-setup.js';
import { writeDmsFile } from '../../server/modules/dms/xml/write.js';

export interface FairnessFigures {
  documents: number;
  fileBytes: number;
  /** A's documents/s: alone (before and after), and while B pushed. */
  aloneBefore: number;
  aloneAfter: number;
  withB: number;
  /** B's pushes while A's file was processed: from sending to posted. */
  bPushes: number;
  bMedianMs: number;
  bMaxMs: number;
}

const D = dmsDocument;
const invoice = (n: number) =>
  D('sale_invoice', `CSR01${String(n).padStart(6, '0')}`, {
    routeCode: 'R01',
    customerCode: `UG${String(1 + (n % 20)).padStart(7, '0')}`,
    currency: 'UGX',
    payment: { method: 'credit' },
    lines: [{ productCode: '100201', unit: 'case', quantity: 1, unitPrice: '24000' }],
    totals: { subtotal: '24000', discount: '0', tax: '4320', total: '28320' },
  });

type Shop = DmsShop;

export async function benchFairness(
  urlOf: (database: string) => string,
  options: { documents?: number; gapMs?: number } = {},
): Promise<FairnessFigures> {
  // As many as asked, or as fit in the 5 MB a file may have (these invoices are a little longer than the issue's).
  const perInvoice = Buffer.byteLength(writeDmsFile([invoice(0)])) - Buffer.byteLength(writeDmsFile([]));
  const documents = Math.min(options.documents ?? 10_000, Math.floor((5 * 1024 * 1024 - 200) / perInvoice));
  const gapMs = options.gapMs ?? 250;
  const name = 'bench_fair';
  const admin = new pg.Pool({ connectionString: urlOf('postgres'), max: 1 });
  admin.on('error', () => {});
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  const pool = new pg.Pool({ connectionString: urlOf(name), max: 4 });
  pool.on('error', () => {});
  const db = kyselyOver(pool);
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-fair-'));
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
      const res = await fetch(`${base}/dms/canonical/documents`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${shop.key}`,
          'content-type': 'application/json',
          'idempotency-key': `fair-${keys++}`,
        },
        body: JSON.stringify(body),
      });
      const answer = (await res.json()) as { flags: { documentId: string; state: string }[] };
      if (res.status >= 300) throw new Error(`push: ${res.status} ${JSON.stringify(answer)}`);
      return answer.flags;
    };
    const prepare = (label: string, cases: number) =>
      prepareDmsShop(db, { name: `Bench fairness ${label}`, synchronous: false, cases, push });

    const a = await prepare('A', documents * 3 + 10);
    const b = await prepare('B', 10_000);
    let n = 0;
    let fileBytes = 0;
    /** Uploads A's next file and answers its documents/s once all are posted; `meanwhile` runs until then. */
    const fileOfA = async (meanwhile?: (done: () => boolean) => Promise<void>) => {
      const xml = writeDmsFile(Array.from({ length: documents }, () => invoice(n++)));
      fileBytes = Buffer.byteLength(xml);
      const started = performance.now();
      const upload = await fetch(`${base}/dms/canonical/files`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${a.key}`,
          'content-type': 'application/xml',
          'idempotency-key': `fair-${keys++}`,
        },
        body: xml,
      });
      if (upload.status !== 202) throw new Error(`file: ${upload.status} ${await upload.text()}`);
      let finished = false;
      const side = meanwhile?.(() => finished);
      await until(
        async () => {
          if ((await count(db, a.organizationId, 'rejected')) > 0) await requireAllPosted(db, a.organizationId); // throws, naming why
          return (await posted(db, a.organizationId)) >= n;
        },
        900_000,
        "A's file posted",
      );
      const seconds = (performance.now() - started) / 1000;
      finished = true;
      await side;
      await requireAllPosted(db, a.organizationId);
      return documents / seconds;
    };

    const aloneBefore = await fileOfA();
    const bTimes: number[] = [];
    let m = 0;
    const withB = await fileOfA(async (done) => {
      // Wait for A's file to be under way (parsed and posting), then push B's documents one at a time.
      await until(
        async () => done() || (await posted(db, a.organizationId)) > n - documents + documents / 10,
        600_000,
        "A's file under way",
      );
      while (!done()) {
        const sent = performance.now();
        const [flag] = await push(b, { documents: [invoice(m++)] });
        await until(
          async () => (await stateOf(db, b.organizationId, flag!.documentId)) !== 'received',
          120_000,
          "B's document posted",
        );
        bTimes.push(performance.now() - sent);
        await new Promise((resolve) => setTimeout(resolve, gapMs));
      }
    });
    const aloneAfter = await fileOfA();
    await requireAllPosted(db, b.organizationId);
    if (bTimes.length === 0) throw new Error("B pushed nothing while A's file was processed");
    const sorted = [...bTimes].sort((x, y) => x - y);
    return {
      documents,
      fileBytes,
      aloneBefore,
      aloneAfter,
      withB,
      bPushes: bTimes.length,
      bMedianMs: sorted[Math.floor(sorted.length / 2)]!,
      bMaxMs: sorted.at(-1)!,
    };
  } catch (error) {
    process.stderr.write(`fairness bench: ${(error as Error).stack ?? String(error)}\n`);
    throw error;
  } finally {
    await running?.stop().catch(() => {});
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const count = async (db: Db, organizationId: string, state: string) =>
  Number(
    (
      await db
        .selectFrom('dms_documents')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('organization_id', '=', organizationId)
        .where('state', '=', state)
        .where('document_type', '=', 'sale_invoice')
        .executeTakeFirstOrThrow()
    ).n,
  );
const posted = (db: Db, organizationId: string) => count(db, organizationId, 'posted');
const stateOf = async (db: Db, organizationId: string, id: string) =>
  (
    await db
      .selectFrom('dms_documents')
      .select('state')
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
  ).state;

export function fairnessReport(f: FairnessFigures): string[] {
  const alone = (f.aloneBefore + f.aloneAfter) / 2;
  return [
    `Fair to every distributor (API and worker in one process; accounting off): A's XML file of ${f.documents} CS invoices (${(f.fileBytes / 1048576).toFixed(1)} MB) while B pushes one invoice at a time`,
    `  B's one-document push posted within ${(f.bMaxMs / 1000).toFixed(2)} s at worst, ${(f.bMedianMs / 1000).toFixed(2)} s median, of ${f.bPushes} pushes while A's file was processed (aim within 2 s)`,
    `  A's throughput: ${f.withB.toFixed(0)} documents/s with B, ${alone.toFixed(0)} alone (${f.aloneBefore.toFixed(0)} before, ${f.aloneAfter.toFixed(0)} after): ${(f.withB / alone).toFixed(2)}x (aim at least 0.9x)`,
  ];
}
