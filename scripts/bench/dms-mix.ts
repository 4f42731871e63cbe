// The DMS on a real day's mix (issue 40 item 4), measured (not asserted in a test: timed tests flake on a shared
// machine). The best case of dms.ts (one van, one day, invoices only, no accounting) is not what a distributor's DMS
// sends. Here, on a fresh database, the service (API and worker in this process, with the QuickBooks and EFRIS
// simulators in it, as the sandbox ships) and one distributor whose accounting connection is on (the simulator):
// - 5 salesmen (SM01..SM05, routes R01..R05, each with a member, a van and 20 customers) over 3 business dates;
// - per salesman-day: a van replenishment (VR) from the warehouse, then sale invoices (credit) interleaved with the
//   customer collections (cash) that settle some of them, in the order the DMS sends them;
// - the days one after the other, each day's salesmen one after the other, pushed in batches of 500.
// Figures, each from the database's clock and the flags' rows:
// - the push's answer per batch (all stored and flagged received), median and worst;
// - applied in the service (the flag's record set: mikono_id, or the flag final): documents/s from the first push
//   to the last document applied, and the time split per document type (each sampling interval's time shared over
//   the types applied in it, in proportion to their documents; the intervals that applied nothing apart), the jobs
//   sent (pg-boss: dms.process and postings.run) against the documents and postings they carried, and between Node (this process: API, worker,
//   simulators, the bench's own polling) and PostgreSQL by their CPU from /proc (cpu.ts);
// - posted (the flag `posted`, the accounting posting included, as the spec says): documents/s over a window of
//   `accountingSeconds` after the last document applied (QuickBooks allows a company 500 requests a minute, and the
//   simulator enforces it, so the whole mix is not waited for), and how many remain.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { sql } from 'kysely';
import { loadConfig } from '../../server/platform/config.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { applyMigrations } from '../../server/platform/database/migrations.js';
import { inTransaction, type Db } from '../../server/platform/database/transaction.js';
import { startService, type RunningService } from '../../server/composition/service.js';
import { operatorActor } from '../../server/platform/access/actor.js';
import { actingOrganization, createOrganization } from '../../server/platform/access/organizations.js';
import { createApiKey } from '../../server/platform/access/api-keys.js';
import { addMemberIn } from '../../server/platform/access/members.js';
import { setAccountsIn } from '../../server/platform/access/accounts.js';
import { locations } from '../../server/modules/locations/service.js';
import { salespeople } from '../../server/modules/salespeople/service.js';
import { addConnection } from '../../server/modules/dms/connections.js';
import { setConnection, SIMULATOR_BASE_URL } from '../../server/connectors/connections.js';
import { dmsDocument, pendingDocuments, until } from './dms-setup.js';
import { cpuReadable, postgresCpuUs, processesCpuUs } from './cpu.js';

export interface DmsMixFigures {
  salesmen: number;
  dates: number;
  invoicesPerDay: number;
  collectionsPerDay: number;
  documents: number;
  batches: number;
  answerMedianMs: number;
  answerMaxMs: number;
  /** First push to the last document applied in the service. */
  appliedMs: number;
  appliedPerSecond: number;
  /** Per document type: how many, and the share of the applying time charged to it. */
  types: { type: string; documents: number; seconds: number }[];
  /** Seconds of the applying time in which no document of the mix was applied (waits, queued jobs). */
  idleSeconds: number;
  /** Jobs sent (pg-boss, any state) by the end: dms.process (a job is up to 50 documents) and postings.run; null if unreadable. */
  jobs: { dmsProcess: number; postingsRun: number } | null;
  /** The organisation's accounting postings by the end, and their attempts (a throttled attempt counts). */
  postings: { count: number; attempts: number; posted: number };
  /** CPU of this process and of PostgreSQL from the first push to the last document applied, in ms (null: no /proc). */
  cpu: { nodeMs: number; postgresMs: number } | null;
  accounting: boolean;
  /** Flags `posted` (accounting included) within the window after the last document applied. */
  accountingSeconds: number;
  postedInWindow: number;
  postedPerSecond: number;
  remaining: number;
  /** Flags not posted or received at the end (rejected, superseded), with the first one's reason. */
  rejected: number;
  firstRejection: string | null;
  loadAverage: [number, number];
}

const DATES = ['2026-11-23', '2026-11-24', '2026-11-25'];
const UNLIMITED = { perMinute: 100_000_000, burst: 10_000_000 };
const REALM = '9341450040';

export async function benchDmsMix(
  urlOf: (database: string) => string,
  options: { invoicesPerDay?: number; collectionEvery?: number; accountingSeconds?: number; accounting?: boolean } = {},
): Promise<DmsMixFigures> {
  const salesmen = 5;
  const invoicesPerDay = options.invoicesPerDay ?? 240;
  // A collection after every `collectionEvery`-th invoice, settling it.
  const collectionEvery = options.collectionEvery ?? 3;
  // Off only to compare (the sandbox ships with it on): then every flag is final once applied.
  const accounting = options.accounting ?? true;
  const accountingSeconds = accounting ? (options.accountingSeconds ?? 60) : 0;
  const name = 'bench_dms_mix';
  const admin = new pg.Pool({ connectionString: urlOf('postgres'), max: 1 });
  admin.on('error', () => {});
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  const pool = new pg.Pool({ connectionString: urlOf(name), max: 4 });
  pool.on('error', () => {});
  const db = kyselyOver(pool);
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-dms-mix-'));
  // The sandbox's settings (the simulators in the process), answering as production does otherwise.
  const config = loadConfig({
    DATABASE_URL: urlOf(name),
    PORT: '0',
    LOG_LEVEL: 'silent',
    SANDBOX_BOOTSTRAP: 'false',
    SIMULATORS: 'true',
    DATA_DIR: dataDir,
    SHUTDOWN_TIMEOUT_MS: '5000',
    NODE_ENV: 'production',
    ENVIRONMENT: 'sandbox',
    CURSOR_SECRET: 'bench-cursor-secret-0123456789',
    WEBHOOK_SECRET_KEY: 'b'.repeat(64),
    PUBLIC_BASE_URL: 'http://127.0.0.1',
  });
  let running: RunningService | null = null;
  let sampling = false;
  let sampler: Promise<void> = Promise.resolve();
  try {
    await applyMigrations(pool);
    running = await startService(config, pino({ level: 'silent' }), { role: 'all' });
    const base = `${running.url}/api/v1`;
    // The postmaster: the parent of this connection's backend.
    const backend = (await pool.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    const postmasterPid = cpuReadable
      ? Number(readFileSync(`/proc/${backend}/stat`, 'utf8').split(') ')[1]!.split(' ')[1])
      : 0;

    // The distributor: set up as the README tells an operator, its accounting connection on.
    const record = await createOrganization(db, {
      name: 'Bench DMS mix',
      baseCurrency: 'UGX',
      modules: ['delivery', 'field-sales'],
    });
    const operator = operatorActor(actingOrganization(record), 'bench');
    const routes = Array.from({ length: salesmen }, (_, i) => ({ route: `R0${i + 1}`, salesman: `SM0${i + 1}` }));
    await inTransaction(db, async (tx) => {
      for (const code of ['M01', 'D01', ...routes.flatMap(({ route }) => [`V_${route}-G`, `V_${route}-B`])])
        await locations.create(tx, operator, { code, name: code });
      for (const [i, { salesman }] of routes.entries()) {
        const member = await addMemberIn(tx, record.id, {
          name: `Salesman ${i + 1}`,
          email: `salesman${i + 1}@example.com`,
          role: 'none',
        });
        await salespeople.create(tx, operator, {
          salesmanCode: salesman,
          name: `Salesman ${i + 1}`,
          memberId: member.id,
        });
      }
      await setAccountsIn(tx, record.id, {
        cashAccount: 'Cash on hand',
        salesAccount: 'Sales of beverages',
        promotionsExpenseAccount: 'Trade promotions',
        vendors: { SUP01: 'Nile Breweries Ltd' },
      });
      await addConnection(tx, record.id, 'canonical', { distributorCode: 'DIST001', synchronous: false });
      if (accounting)
        await setConnection(tx, record.id, 'accounting', { baseUrl: SIMULATOR_BASE_URL, account: REALM }, null);
    });
    const key = (
      await createApiKey(db, {
        organizationId: record.id,
        name: 'Bench DMS mix',
        environment: 'sandbox',
        scopes: ['dms:ingest', 'dms:flags:read'],
        rateLimits: { read: UNLIMITED, write: UNLIMITED, ingest: UNLIMITED },
      })
    ).secret;
    let keys = 0;
    const push = async (documents: unknown[]) => {
      const started = performance.now();
      const res = await fetch(`${base}/dms/canonical/documents`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'idempotency-key': `bench-mix-${keys++}`,
        },
        body: JSON.stringify({ documents }),
      });
      const answer = (await res.json()) as { flags: { state: string }[] };
      if (res.status >= 300) throw new Error(`push: ${res.status} ${JSON.stringify(answer)}`);
      return { ms: performance.now() - started, flags: answer.flags };
    };
    const D = (
      type: string,
      number: string,
      salesman: string,
      date: string,
      body: Record<string, unknown>,
      extra: Record<string, unknown> = {},
    ) => dmsDocument(type, number, body, { salesmanCode: salesman, documentDate: date, ...extra });

    // Master data and the warehouse's stock (its company invoice, whose Bill goes to QuickBooks too), posted first.
    const cases = salesmen * DATES.length * invoicesPerDay;
    const setup = [
      D(
        'product',
        '100201',
        'SM01',
        DATES[0]!,
        { name: 'Soda 300 ml, crate of 24', packSize: 24, taxRate: '18', sellingUnits: ['case', 'bottle'] },
        { status: 'active' },
      ),
      ...routes.map(({ route, salesman }, i) =>
        D(
          'salesman',
          route,
          salesman,
          DATES[0]!,
          { salesmanCode: salesman, salesmanName: `Salesman ${i + 1}`, routeName: `Route ${i + 1}` },
          { status: 'active' },
        ),
      ),
      ...routes.flatMap(({ route, salesman }, r) =>
        Array.from({ length: 20 }, (_, i) =>
          D(
            'customer',
            customerCode(r, i),
            salesman,
            DATES[0]!,
            { name: `Shop ${r + 1}-${i + 1}`, routeCode: route },
            { status: 'active' },
          ),
        ),
      ),
      D('company_invoice', '9550800000001', 'SM01', DATES[0]!, {
        supplierCode: 'SUP01',
        locationCode: 'M01',
        currency: 'UGX',
        lines: [
          { productCode: '100201', unit: 'case', invoicedQuantity: cases, receivedQuantity: cases, unitCost: '18000' },
        ],
      }),
    ];
    for (let i = 0; i < setup.length; i += 50) await push(setup.slice(i, i + 50));
    await until(async () => (await pendingDocuments(db, record.id)) === 0, 120_000, 'the set-up posted');

    // The mix, in the order the DMS sends it: day by day, salesman by salesman, VR then invoices and collections.
    const mix: ReturnType<typeof D>[] = [];
    for (const [d, date] of DATES.entries()) {
      for (const [r, { route, salesman }] of routes.entries()) {
        mix.push(
          D('van_replenishment', `VR${String((r + 1) * 10 + d).padStart(6, '0')}`, salesman, date, {
            routeCode: route,
            fromLocationCode: 'M01',
            lines: [{ productCode: '100201', unit: 'case', quantity: invoicesPerDay }],
          }),
        );
        for (let n = 0; n < invoicesPerDay; n += 1) {
          const number = `CS${route}${d}${String(n).padStart(5, '0')}`;
          const customer = customerCode(r, n % 20);
          mix.push(
            D('sale_invoice', number, salesman, date, {
              routeCode: route,
              customerCode: customer,
              currency: 'UGX',
              payment: { method: 'credit' },
              lines: [{ productCode: '100201', unit: 'case', quantity: 1, unitPrice: '24000' }],
              totals: { subtotal: '24000', discount: '0', tax: '4320', total: '28320' },
            }),
          );
          if (n % collectionEvery === collectionEvery - 1) {
            mix.push(
              D('customer_collection', `PY${route}${d}${String(n).padStart(5, '0')}`, salesman, date, {
                routeCode: route,
                customerCode: customer,
                method: 'cash',
                amount: '28320',
                currency: 'UGX',
                allocations: [{ invoiceNumber: number, amount: '28320' }],
              }),
            );
          }
        }
      }
    }
    const typeCounts = new Map<string, number>();
    for (const document of mix) typeCounts.set(document.documentType, (typeCounts.get(document.documentType) ?? 0) + 1);
    const mixTypes = [...typeCounts.keys()];

    // Sampling: every 250 ms, documents applied per type, so that each interval's time is charged to what it applied.
    const applied = async () => {
      const rows = await sql<{ document_type: string; applied: string }>`
        select document_type, count(*) filter (where mikono_id is not null or state <> 'received') as applied
        from dms_documents where organization_id = ${record.id} and document_type in (${sql.join(mixTypes)}) group by document_type`.execute(
        db,
      );
      return new Map(rows.rows.map((row) => [row.document_type, Number(row.applied)]));
    };
    const seconds = new Map<string, number>(mixTypes.map((type) => [type, 0]));
    let idleSeconds = 0;
    const cpuBefore = { node: processesCpuUs([process.pid]), postgres: postgresCpuUs(postmasterPid) };
    const firstPush = await dbNow(db);
    let last = { at: performance.now(), counts: new Map<string, number>() };
    sampling = true;
    sampler = (async () => {
      while (sampling) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        const counts = await applied();
        const at = performance.now();
        const moved = mixTypes
          .map((type) => [type, (counts.get(type) ?? 0) - (last.counts.get(type) ?? 0)] as const)
          .filter(([, n]) => n > 0);
        const total = moved.reduce((sum, [, n]) => sum + n, 0);
        for (const [type, n] of moved) seconds.set(type, seconds.get(type)! + ((at - last.at) / 1000) * (n / total));
        if (total === 0 && last.counts.size > 0) idleSeconds += (at - last.at) / 1000;
        last = { at, counts };
      }
    })();
    const answers: number[] = [];
    for (let i = 0; i < mix.length; i += 500) {
      const { ms, flags } = await push(mix.slice(i, i + 500));
      if (flags.some((flag) => flag.state !== 'received' && flag.state !== 'posted'))
        throw new Error(
          `a mix document was refused on arrival: ${JSON.stringify(flags.find((f) => f.state !== 'received' && f.state !== 'posted'))}`,
        );
      answers.push(ms);
    }
    await until(
      async () => [...(await applied()).values()].reduce((a, b) => a + b, 0) === mix.length,
      1_800_000,
      'the mix applied',
      250,
    );
    const cpu = cpuReadable
      ? {
          nodeMs: (processesCpuUs([process.pid]) - cpuBefore.node) / 1000,
          postgresMs: (postgresCpuUs(postmasterPid) - cpuBefore.postgres) / 1000,
        }
      : null;
    const lastApplied = await dbNow(db);
    sampling = false;
    await sampler;
    const appliedMs = lastApplied - firstPush;

    // Posted, accounting included: a window of accountingSeconds.
    const postedCount = async () =>
      Number(
        (
          await db
            .selectFrom('dms_documents')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where('organization_id', '=', record.id)
            .where('state', '=', 'posted')
            .where('document_type', 'in', mixTypes)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const postedAtStart = await postedCount();
    await new Promise((resolve) => setTimeout(resolve, accountingSeconds * 1000));
    const postedAtEnd = await postedCount();
    const states = await db
      .selectFrom('dms_documents')
      .select(['state', (eb) => eb.fn.countAll<string>().as('n')])
      .where('organization_id', '=', record.id)
      .groupBy('state')
      .execute();
    const countOf = (state: string) => Number(states.find((row) => row.state === state)?.n ?? 0);
    const refused = await db
      .selectFrom('dms_documents')
      .select(['document_number', 'reason_code', 'reason_text'])
      .where('organization_id', '=', record.id)
      .where('state', 'in', ['rejected', 'superseded'])
      .executeTakeFirst();
    // pg-boss keeps its jobs (completed ones too, until its retention) in pgboss.job.
    const jobs = await sql<{
      name: string;
      n: string;
    }>`select name, count(*) as n from pgboss.job where name in ('dms.process', 'postings.run') group by name`
      .execute(db)
      .then((result) => ({
        dmsProcess: Number(result.rows.find((row) => row.name === 'dms.process')?.n ?? 0),
        postingsRun: Number(result.rows.find((row) => row.name === 'postings.run')?.n ?? 0),
      }))
      .catch(() => null);
    const postings = await db
      .selectFrom('external_postings')
      .select([
        (eb) => eb.fn.countAll<string>().as('n'),
        (eb) => eb.fn.sum<string>('attempts').as('attempts'),
        (eb) => eb.fn.countAll<string>().filterWhere('status', '=', 'posted').as('posted'),
      ])
      .where('organization_id', '=', record.id)
      .executeTakeFirstOrThrow();
    const [one, five] = readFileSync('/proc/loadavg', 'utf8').split(' ').map(Number);
    return {
      salesmen,
      dates: DATES.length,
      invoicesPerDay,
      collectionsPerDay: Math.floor(invoicesPerDay / collectionEvery),
      documents: mix.length,
      batches: answers.length,
      answerMedianMs: median(answers),
      answerMaxMs: Math.max(...answers),
      appliedMs,
      appliedPerSecond: mix.length / (appliedMs / 1000),
      types: mixTypes.map((type) => ({ type, documents: typeCounts.get(type)!, seconds: seconds.get(type)! })),
      idleSeconds,
      cpu,
      jobs,
      postings: { count: Number(postings.n), attempts: Number(postings.attempts), posted: Number(postings.posted) },
      accountingSeconds,
      postedInWindow: postedAtEnd - postedAtStart,
      postedPerSecond: accountingSeconds > 0 ? (postedAtEnd - postedAtStart) / accountingSeconds : NaN,
      accounting,
      remaining: countOf('received'),
      rejected: countOf('rejected') + countOf('superseded'),
      firstRejection: refused ? `${refused.document_number} ${refused.reason_code}: ${refused.reason_text}` : null,
      loadAverage: [one!, five!],
    };
  } catch (error) {
    process.stderr.write(`dms mix bench: ${(error as Error).stack ?? String(error)}\n`);
    throw error;
  } finally {
    sampling = false;
    await sampler.catch(() => {});
    await running?.stop().catch(() => {});
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const customerCode = (route: number, i: number) => `UG${route + 1}${String(i + 1).padStart(6, '0')}`;
const dbNow = async (db: Db) =>
  (await sql<{ now: Date }>`select clock_timestamp() as now`.execute(db)).rows[0]!.now.getTime();
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export function dmsMixReport(f: DmsMixFigures): string[] {
  const total = f.types.reduce((sum, t) => sum + t.seconds, 0);
  return [
    `DMS on a real day's mix (API, worker and the QuickBooks simulator in one process; accounting connection ${f.accounting ? 'on' : 'OFF, to compare'}): ${f.salesmen} salesmen x ${f.dates} business dates, ` +
      `per salesman-day a VR, ${f.invoicesPerDay} invoices and ${f.collectionsPerDay} collections: ${f.documents} documents in ${f.batches} batches of up to 500`,
    `  a batch answered with its flags in ${f.answerMedianMs.toFixed(0)} ms (median of ${f.batches}; worst ${f.answerMaxMs.toFixed(0)} ms)`,
    `  applied in the service: ${f.appliedPerSecond.toFixed(0)} documents/s (first push to last document applied, ${(f.appliedMs / 1000).toFixed(1)} s; aim at least 1,000/s)`,
    `  the applying time by document type: ${f.types.map((t) => `${t.type} ${t.documents} docs ${t.seconds.toFixed(1)} s (${t.seconds > 0 ? (t.documents / t.seconds).toFixed(0) : '-'}/s while it was applied)`).join('; ')}; ` +
      `no document applied at all: ${f.idleSeconds.toFixed(1)} s (of ${(total + f.idleSeconds).toFixed(1)} s sampled)`,
    f.jobs
      ? `  jobs sent by the end: ${f.jobs.dmsProcess} dms.process (${Math.ceil(f.documents / 50)} would carry the mix once at 50 a job; a document waiting for another is sent again when it falls due) and ${f.jobs.postingsRun} postings.run ` +
        `for ${f.postings.count} accounting postings (${f.postings.attempts} attempts, ${f.postings.posted} posted)`
      : `  jobs: pgboss.job not readable; ${f.postings.count} accounting postings, ${f.postings.attempts} attempts, ${f.postings.posted} posted`,
    f.cpu
      ? `  CPU meanwhile: this process (API, worker, simulators, the bench's polling) ${(f.cpu.nodeMs / 1000).toFixed(1)} s, ${((f.cpu.nodeMs * 1000) / f.documents).toFixed(0)} µs a document; ` +
        `PostgreSQL ${(f.cpu.postgresMs / 1000).toFixed(1)} s, ${((f.cpu.postgresMs * 1000) / f.documents).toFixed(0)} µs a document; of ${(f.appliedMs / 1000).toFixed(1)} s on the wall clock`
      : '  CPU: /proc not readable',
    f.accounting
      ? `  posted (the flag, accounting posting included): ${f.postedPerSecond.toFixed(1)} documents/s over the ${f.accountingSeconds} s after the last one applied (${f.postedInWindow} posted then); ${f.remaining} still received at its end ` +
        `(QuickBooks allows a company 500 requests a minute: the simulator enforces it)`
      : `  accounting off: every flag final once applied; ${f.remaining} still received`,
    `  rejected or superseded: ${f.rejected}${f.firstRejection ? ` (first: ${f.firstRejection})` : ''}; load average at the end ${f.loadAverage[0]} (1 min), ${f.loadAverage[1]} (5 min)`,
  ];
}
