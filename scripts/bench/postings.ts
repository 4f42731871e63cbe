// Postings to the accounting system through the QuickBooks simulator, measured (not asserted in a test: timed tests
// flake on a shared machine). Two figures:
// - throughput: N invoices of 10 distributors (each its own QuickBooks company) queued while no worker runs (an
//   API-only service), then one worker (with the simulators) drains them; postings/s = N / (the last posting's time -
//   the worker's start). Spread over companies because QuickBooks allows one company 500 requests a minute (the
//   simulator enforces it): one company alone is drained at that limit, which is measured too (`single`);
// - latency: with the worker running, one invoice every `gapMs` for a fresh company (below both limits); the time
//   from each document's post to its `posting.status = posted`, by the database's clock (the document's created_at
//   and the posting row's last update), p50 and p99.
// The service runs in this process (both roles and the simulators share its CPU with the driver, on the same
// database server as the rest of the bench).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../../server/platform/config.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { applyMigrations } from '../../server/platform/database/migrations.js';
import { inTransaction, type Db } from '../../server/platform/database/transaction.js';
import { startService, type RunningService } from '../../server/composition/service.js';
import { actingOrganization, createOrganization } from '../../server/platform/access/organizations.js';
import { operatorActor, type OperatorActor } from '../../server/platform/access/actor.js';
import { setConnection, SIMULATOR_BASE_URL } from '../../server/connectors/connections.js';
import { customers } from '../../server/modules/customers/service.js';
import { locations } from '../../server/modules/locations/service.js';
import { products } from '../../server/modules/products/service.js';
import { postStockAdjustment } from '../../server/modules/stock/documents.js';
import { createInvoice } from '../../server/modules/invoices/documents.js';

export interface PostingsFigures {
  queued: number;
  companies: number;
  postingsPerSecond: number;
  drainMs: number;
  /** One company's 600 queued invoices: drained at QuickBooks' own limit. */
  singleQueued: number;
  singlePostingsPerSecond: number;
  latencySamples: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  attemptsAboveOne: number;
}

interface Shop {
  operator: OperatorActor;
  organizationId: string;
  soda: string;
  warehouse: string;
  customer: string;
}

export async function benchPostings(
  urlOf: (database: string) => string,
  options: { queued?: number; paced?: number; gapMs?: number } = {},
): Promise<PostingsFigures> {
  const queued = options.queued ?? 1000;
  const paced = options.paced ?? 200;
  const gapMs = options.gapMs ?? 25;
  const name = 'bench_postings';
  const admin = new pg.Pool({ connectionString: urlOf('postgres'), max: 1 });
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  const pool = new pg.Pool({ connectionString: urlOf(name), max: 4 });
  const db = kyselyOver(pool);
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-postings-'));
  const logger = pino({ level: 'silent' });
  const config = loadConfig({
    DATABASE_URL: urlOf(name),
    PORT: '0',
    LOG_LEVEL: 'silent',
    SANDBOX_BOOTSTRAP: 'false',
    SIMULATORS: 'true',
    DATA_DIR: dataDir,
    SHUTDOWN_TIMEOUT_MS: '5000',
  });
  let running: RunningService | null = null;
  const companies = 10;
  const singleQueued = 600;
  try {
    await applyMigrations(pool);
    const shops: Shop[] = [];
    for (let i = 0; i < companies; i += 1) shops.push(await prepare(db, queued / companies, `555000${i}`));

    // Throughput: queue while only an API process runs (it sends no job), then drain with one worker.
    running = await startService(config, logger, { role: 'api' });
    for (let i = 0; i < queued; i += 1) await sell(db, shops[i % companies]!);
    await running.stop();
    let started = Date.now();
    running = await startService(config, logger, { role: 'worker' });
    await until(
      async () =>
        (await postedCount(
          db,
          shops.map((s) => s.organizationId),
        )) >= queued,
      600_000,
    );
    const drainMs =
      (await lastPosted(
        db,
        shops.map((s) => s.organizationId),
      )) - started;
    await running.stop();

    // One company alone: QuickBooks' 500 requests a minute decide (the throttled attempts wait its Retry-After).
    const single = await prepare(db, singleQueued + paced, '5550100');
    running = await startService(config, logger, { role: 'api' });
    for (let i = 0; i < singleQueued; i += 1) await sell(db, single);
    await running.stop();
    started = Date.now();
    running = await startService(config, logger, { role: 'worker' });
    await until(async () => (await postedCount(db, [single.organizationId])) >= singleQueued, 600_000);
    const singleMs = (await lastPosted(db, [single.organizationId])) - started;

    // Latency: paced documents of a fresh company with the worker running.
    const shop = await prepare(db, paced, '5550200');
    const since = new Date();
    for (let i = 0; i < paced; i += 1) {
      const before = Date.now();
      await sell(db, shop);
      await sleep(Math.max(0, gapMs - (Date.now() - before)));
    }
    await until(async () => (await postedCount(db, [shop.organizationId])) >= paced, 600_000);
    const rows = await db
      .selectFrom('external_postings as p')
      .innerJoin('invoices as i', (join) =>
        join.onRef('i.organization_id', '=', 'p.organization_id').onRef('i.id', '=', 'p.document_id'),
      )
      .select(['i.created_at', 'p.updated_at'])
      .where('p.organization_id', '=', shop.organizationId)
      .where('i.created_at', '>=', since)
      .execute();
    const latencies = rows.map((row) => row.updated_at.getTime() - row.created_at.getTime()).sort((a, b) => a - b);
    const repeated = await db
      .selectFrom('external_postings')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('organization_id', '=', shop.organizationId)
      .where('attempts', '>', 1)
      .executeTakeFirstOrThrow();
    return {
      queued,
      companies,
      postingsPerSecond: queued / (drainMs / 1000),
      drainMs,
      singleQueued,
      singlePostingsPerSecond: singleQueued / (singleMs / 1000),
      latencySamples: latencies.length,
      latencyP50Ms: percentile(latencies, 0.5),
      latencyP99Ms: percentile(latencies, 0.99),
      attemptsAboveOne: Number(repeated.n),
    };
  } finally {
    await running?.stop().catch(() => {});
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function prepare(db: Db, cases: number, realm: string): Promise<Shop> {
  const record = await createOrganization(db, { name: `Bench postings ${realm}`, baseCurrency: 'UGX' });
  const operator = operatorActor(actingOrganization(record), 'bench');
  return inTransaction(db, async (tx) => {
    const soda = await products.create(tx, operator, {
      productCode: '300001',
      name: 'Soda 300ml',
      packSize: 24,
      sellingUnits: ['case'],
      taxRate: 18,
    });
    const warehouse = await locations.create(tx, operator, { code: 'M01', name: 'Main' });
    const customer = await customers.create(tx, operator, {
      outletCode: 'UG0000001',
      name: 'Mama Shop',
      channel: 'retail',
    });
    await postStockAdjustment(tx, operator, {
      reasonCode: 'OPENING',
      lines: [{ productId: soda.id, locationId: warehouse.id, unit: 'case', quantity: cases, unitCost: '20000' }],
    });
    await setConnection(tx, record.id, 'accounting', { baseUrl: SIMULATOR_BASE_URL, account: realm }, null);
    return { operator, organizationId: record.id, soda: soda.id, warehouse: warehouse.id, customer: customer.id };
  });
}

const sell = (db: Db, shop: Shop) =>
  inTransaction(db, (tx) =>
    createInvoice(tx, shop.operator, {
      customerId: shop.customer,
      locationId: shop.warehouse,
      issueDate: '2026-11-24',
      currency: 'UGX',
      lines: [{ productId: shop.soda, unit: 'case', quantity: 1, unitPrice: '25000' }],
    }),
  );

const postedCount = async (db: Db, organizations: string[]) =>
  Number(
    (
      await db
        .selectFrom('external_postings')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('organization_id', 'in', organizations)
        .where('status', '=', 'posted')
        .executeTakeFirstOrThrow()
    ).n,
  );
const lastPosted = async (db: Db, organizations: string[]) =>
  new Date(
    (
      await db
        .selectFrom('external_postings')
        .select((eb) => eb.fn.max('updated_at').as('at'))
        .where('organization_id', 'in', organizations)
        .executeTakeFirstOrThrow()
    ).at as Date,
  ).getTime();

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('the postings did not finish in time');
    await sleep(50);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;

export function postingsReport(figures: PostingsFigures): string[] {
  return [
    `postings to the accounting system (QuickBooks simulator, one worker): ${figures.postingsPerSecond.toFixed(0)} postings/s (${figures.queued} queued invoices of ${figures.companies} companies drained in ${(figures.drainMs / 1000).toFixed(1)} s)`,
    `  one company alone: ${figures.singlePostingsPerSecond.toFixed(1)} postings/s for ${figures.singleQueued} invoices (QuickBooks allows a company 500 requests a minute: the rest wait its Retry-After)`,
    `  document posted -> posting.status posted: p50 ${figures.latencyP50Ms.toFixed(0)} ms, p99 ${figures.latencyP99Ms.toFixed(0)} ms over ${figures.latencySamples} paced invoices; ${figures.attemptsAboveOne} posting(s) needed more than one attempt`,
  ];
}
