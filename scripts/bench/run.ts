// `npm run bench`: starts the service (production settings, its own embedded PostgreSQL) and bare baselines,
// each in its own process(es), drives each with autocannon one after the other, and prints requests/s, p50 and
// p99, then one table of the ratios measured in this one run, each beside its aim (issues 21, 40) and whether it is
// met. The figures depend on the machine; the ratios are the result.
//   --duration S      seconds of measurement per scenario (default 10), in two halves
//   --warmup S        seconds of warm-up (default 2): right before each scenario, and once more for every scenario of
//                     a target when its process(es) start, so that the first scenario after a start is not the cold one
//   --connections N   concurrent connections (default 50; split evenly over the processes of a two-process row)
//   --only TEXT       run only the scenarios whose label contains TEXT (case-insensitive; repeatable, or
//                     comma-separated: --only health,/me). A label is what the table prints, e.g.
//                     "POST /customers (50 keys) [raw pg]", so --only "50 keys", --only "raw pg", --only walk work.
//                     A ratio whose two scenarios did not both run says "not run".
//   --skip-extras     skip the "where the time went" profiles, the webhook delivery, /openapi.json download, hostile body, SDK, Kysely-compile, stock, sandbox, money, several-processes, postings, DMS, DMS mix, fairness and idle parts
//                     (they run by default, even with --only, unless an --only text names one of them: --only stock
//                     runs the stock part alone, --only stock,sdk those two; the names are webhooks, sdk, kysely, stock,
//                     sandbox, money, split, postings, dms, dmsmix, reconciliation, documents, hostile, fair, idle, where;
//                     --only dms runs dms and dmsmix, --only dmsmix the real day's mix alone)
//   --stock-movements N  movements in the ledger for the stock part's second feed walk (default 1000000; the first
//                     is at 10000); a smaller N loads faster (see stock.ts)
//   --profiles DIR    keep the "where the time went" CPU profiles in DIR (one folder each; open a .cpuprofile in
//                     Chrome's DevTools); without it they are read and deleted with the bench's scratch directory
// Examples: npm run bench -- --duration 4 --only health,/me --skip-extras
//           npm run bench -- --only stock --duration 4 --warmup 1
//           npm run bench -- --only money (invoices, the invoice page and payments: money.ts)
//           npm run bench -- --only "POST /customers" --skip-extras
//
// Fairness (item 5 of issue 21):
//   - the raw pg baseline authenticates every request too (one indexed SELECT of the key and its organisation;
//     no rate limit, which is the service's own feature), and writes its idempotency rows for the requesting key;
//   - "50 keys" rows rotate the requests over 50 keys of one organisation, so that one key's rate-limit row (a row
//     lock every request of that key takes) does not decide the figure; the single-key rows stay;
//   - "2 processes" rows run two processes of the target on one database (the service: one `--role all` as in
//     the single-process rows plus one `--role api`, i.e. one more API process), each driven by its own autocannon
//     instance with half the connections, at the same time; the figure is the sum. They use the 50 keys too, so
//     that the only difference from the "50 keys" row is the second process;
//   - the change-feed walks read an organisation of their own (1000 customers, never written), so that the
//     service and the baseline walk the same records whatever the creates before them added.
// A scenario with any non-2xx answer or connection error makes its ratios "invalid": a 401 or 429 is not a figure.
import { spawn, type ChildProcess } from 'node:child_process';
import { benchDocuments, printDocuments, type DocumentFigures } from './documents.js';
import { benchHostile, printHostile, type HostileFigures } from './hostile.js';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { createApiKey } from '../../server/platform/access/api-keys.js';
import { createOrganization } from '../../server/platform/access/organizations.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { startEmbeddedPostgres } from '../../server/platform/database/embedded-postgres.js';
import { applyMigrations } from '../../server/platform/database/migrations.js';
import { syntheticOutlets } from '../../server/modules/sandbox/synthetic-outlets.js';
import { freePort } from '../lib/free-port.js';
import { measureKyselyCompile } from './kysely-compile.js';
import { benchSdk, type SdkFigures } from './sdk.js';
import { benchStock, stockReport, type StockFigures } from './stock.js';
import { benchMoney, moneyReport, type MoneyFigures } from './money.js';
import { benchSandbox, sandboxReport, type SandboxFigures } from './sandbox.js';
import { benchPostings, postingsReport, type PostingsFigures } from './postings.js';
import { benchDms, dmsReport, type DmsFigures } from './dms.js';
import { benchDmsMix, dmsMixReport, type DmsMixFigures } from './dms-mix.js';
import {
  benchDmsReconciliation,
  dmsReconciliationReport,
  type DmsReconciliationFigures,
} from './dms-reconciliation.js';
import { benchWebhooks, type WebhookFigures } from './webhooks.js';
import { benchProcesses, processesReport, type ProcessesFigures } from './processes.js';
import { benchFairness, fairnessReport, type FairnessFigures } from './fairness.js';
import { benchIdle, idleReport, type IdleFigures } from './idle.js';
import { pieceComparison, profileLines, readProfile, type ProfileSummary } from './profile.js';
import { build, ENTRIES } from '../build.mjs';
import { cpuReadable, postgresCpuUs, processesCpuUs } from './cpu.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '50' },
    only: { type: 'string', multiple: true },
    'skip-extras': { type: 'boolean', default: false },
    'stock-movements': { type: 'string', default: '1000000' },
    profiles: { type: 'string' },
  },
});
const duration = Number(values.duration);
const warmup = Number(values.warmup);
const connections = Number(values.connections);
if (!(duration > 0) || !(warmup >= 0) || !Number.isInteger(connections) || connections < 2) {
  console.error('--duration takes seconds (> 0), --warmup seconds (>= 0), --connections a whole number of at least 2');
  process.exit(2);
}
const only = (values.only ?? [])
  .flatMap((value) => value.split(','))
  .map((value) => value.trim().toLowerCase())
  .filter((value) => value !== '');
const skipExtras = values['skip-extras'];
const stockMovements = Number(values['stock-movements']);
if (!Number.isInteger(stockMovements) || stockMovements < 100) {
  console.error('--stock-movements takes a whole number of at least 100');
  process.exit(2);
}
// The extra parts: all of them unless --skip-extras, or only those an --only text names.
const EXTRAS = [
  'where',
  'webhooks',
  'documents',
  'hostile',
  'sdk',
  'kysely',
  'stock',
  'sandbox',
  'money',
  'split',
  'postings',
  'dms',
  'dmsmix',
  'reconciliation',
  'fair',
  'idle',
] as const;
const namedExtras = EXTRAS.filter((extra) => only.some((text) => extra.includes(text)));
const extras = new Set<(typeof EXTRAS)[number]>(skipExtras ? [] : namedExtras.length > 0 ? namedExtras : EXTRAS);
const KEY_COUNT = 50;

// 'service' is `npm start`'s single process (every role in one); 'service api+worker' the README's production
// topology (an `--role api` process serving, a `--role worker` process apart); 'service api alone' an API process
// with no worker anywhere, so that /health's cost is seen without the worker loops sharing its process.
// 'service via tsx' is the single process run from the sources through tsx, as the bench ran it before issue 40.
type Target =
  | 'service'
  | 'service api+worker'
  | 'service api alone'
  | 'service via tsx'
  | 'raw pg'
  | 'bare express'
  | 'bare node:http';
/** Which keys the requests carry: none, the one key, the 50 keys in turn, or the feed organisation's key. */
type Keys = 'none' | 'one' | 'many' | 'feed';
interface Scenario {
  /** The request, e.g. 'POST /customers'; scenarios of one name on two targets make a ratio. */
  name: string;
  variant?: '50 keys' | '2 processes; 50 keys';
  target: Target;
  processes?: 1 | 2;
  keys: Keys;
  path: string;
  /** A fresh body (and Idempotency-Key) per request, for creates. */
  create?: boolean;
  /** A fixed JSON body (for PUT). */
  body?: unknown;
  method?: 'GET' | 'POST' | 'PUT';
  connections?: number;
  /** Rows written per request, to report rows/s. */
  rowsPerRequest?: number;
  /** Not autocannon: one client walks the whole change feed page by page, again and again; the figure is records/s. */
  walk?: boolean;
}
interface Measured {
  scenario: Scenario;
  perSecond: number;
  spread: number;
  p50: number | null;
  p99: number | null;
  failed: number;
  /** CPU µs per request (per record for the walks) of the target's own processes and of PostgreSQL, in the measured halves. */
  cpu: { nodeUs: number; postgresUs: number } | null;
}
interface Half {
  perSecond: number;
  p50: number | null;
  p99: number | null;
  failed: number;
}

// 100 products x 5 price groups = one batch of 500 price rows, upserted again and again.
const PRICE_BATCH_PRODUCTS = 100;
const PRICE_BATCH = {
  items: Array.from({ length: PRICE_BATCH_PRODUCTS * 5 }, (_, i) => ({
    productCode: String(Math.floor(i / 5) + 1).padStart(6, '0'),
    priceGroup: `GROUP-${(i % 5) + 1}`,
    unit: 'case',
    unitPrice: { amount: String(20_000 + i), currency: 'UGX' },
    validFrom: '2026-11-01',
  })),
};

// The address budget of keyless requests (docs/decisions/0027) raised out of reach: the bench's load all comes from
// 127.0.0.1, and GET /health is measured with its bucket statement, not refused.
const SERVICE_ENV = {
  ANONYMOUS_RATE_LIMIT: '1000000,1000000',
  LOG_LEVEL: 'warn',
  NODE_ENV: 'production',
  ENVIRONMENT: 'production',
  CURSOR_SECRET: 'bench-cursor-secret-0123456789',
  WEBHOOK_SECRET_KEY: 'b'.repeat(64),
  PUBLIC_BASE_URL: 'http://127.0.0.1',
};
const CREATE = { path: '/api/v1/customers', method: 'POST', create: true } as const;
const PAGE = { path: '/api/v1/customers?limit=100' } as const;
const PRICES = {
  path: '/api/v1/prices',
  method: 'PUT',
  body: PRICE_BATCH,
  connections: 4,
  rowsPerRequest: 500,
} as const;
const WALK = { path: '/api/v1/customers', keys: 'feed', walk: true } as const;
const MANY = { keys: 'many', variant: '50 keys' } as const;
const TWO = { keys: 'many', variant: '2 processes; 50 keys', processes: 2 } as const;

const allScenarios: Scenario[] = [
  { name: 'GET /health', target: 'service', keys: 'none', path: '/api/v1/health' },
  { name: 'GET /me (key + rate limit)', target: 'service', keys: 'one', path: '/api/v1/me' },
  { name: 'GET /me (key + rate limit)', target: 'service', ...MANY, path: '/api/v1/me' },
  { name: 'POST /customers', target: 'service', keys: 'one', ...CREATE },
  { name: 'GET /customers?limit=100', target: 'service', keys: 'one', ...PAGE },
  { name: 'POST /customers', target: 'service', ...MANY, ...CREATE },
  { name: 'GET /customers?limit=100', target: 'service', ...MANY, ...PAGE },
  { name: 'PUT /prices (500 rows)', target: 'service', keys: 'one', ...PRICES },
  { name: 'change-feed walk (100 per page)', target: 'service', ...WALK },
  { name: 'POST /customers', target: 'service', ...TWO, ...CREATE },
  { name: 'GET /customers?limit=100', target: 'service', ...TWO, ...PAGE },
  { name: 'POST /customers', target: 'raw pg', keys: 'one', ...CREATE },
  { name: 'GET /customers?limit=100', target: 'raw pg', keys: 'one', ...PAGE },
  { name: 'POST /customers', target: 'raw pg', ...MANY, ...CREATE },
  { name: 'GET /customers?limit=100', target: 'raw pg', ...MANY, ...PAGE },
  { name: 'PUT /prices (500 rows)', target: 'raw pg', keys: 'one', ...PRICES },
  { name: 'change-feed walk (100 per page)', target: 'raw pg', ...WALK },
  { name: 'POST /customers', target: 'raw pg', ...TWO, ...CREATE },
  { name: 'GET /customers?limit=100', target: 'raw pg', ...TWO, ...PAGE },
  { name: 'GET /health', target: 'service api+worker', keys: 'none', path: '/api/v1/health' },
  { name: 'GET /me (key + rate limit)', target: 'service api+worker', keys: 'one', path: '/api/v1/me' },
  { name: 'POST /customers', target: 'service api+worker', keys: 'one', ...CREATE },
  { name: 'GET /customers?limit=100', target: 'service api+worker', keys: 'one', ...PAGE },
  { name: 'PUT /prices (500 rows)', target: 'service api+worker', keys: 'one', ...PRICES },
  { name: 'change-feed walk (100 per page)', target: 'service api+worker', ...WALK },
  { name: 'GET /health', target: 'service api alone', keys: 'none', path: '/api/v1/health' },
  { name: 'GET /health', target: 'service via tsx', keys: 'none', path: '/api/v1/health' },
  { name: 'PUT /prices (500 rows)', target: 'service via tsx', keys: 'one', ...PRICES },
  { name: 'GET /health', target: 'bare express', keys: 'none', path: '/api/v1/health' },
  { name: 'GET /health', target: 'bare node:http', keys: 'none', path: '/api/v1/health' },
];
// No comma in a label: --only splits at commas.
const label = (s: Scenario) => `${s.name}${s.variant ? ` (${s.variant})` : ''} [${s.target}]`;
const scenarios =
  only.length === 0
    ? allScenarios
    : allScenarios.filter((s) => only.some((text) => label(s).toLowerCase().includes(text)));
if (scenarios.length === 0 && extras.size === 0) {
  console.error(
    `--only ${only.join(',')} matches no scenario; the labels are:\n${allScenarios.map((s) => `  ${label(s)}`).join('\n')}`,
  );
  process.exit(2);
}

await build();
const SERVICE_BUNDLE = join(root, 'dist', ENTRIES['server/main.ts']);
const scratch = mkdtempSync(join(tmpdir(), 'erp-bench-'));
chmodSync(scratch, 0o755);
if (values.profiles) mkdirSync(resolve(values.profiles), { recursive: true });
const database = await startEmbeddedPostgres({ dataDir: join(scratch, 'postgres'), port: await freePort() });
const databaseUrl = database.url('postgres');
const prepared = await prepareDatabase(databaseUrl);
// The embedded server's postmaster, whose CPU (with its backends') is read around every measured half.
const postmasterPid = Number(readFileSync(join(scratch, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
const keysOf: Record<Keys, string[]> = { none: [], one: [prepared.key], many: prepared.keys, feed: [prepared.feedKey] };

/** Starts process number `index` (0 or 1) of a target on `port`. */
// The service as `npm start`, `npm run api` and `npm run worker` run it: compiled (dist/, built once by this run with
// their own build function), with source maps on. The extras further down start the sources through tsx.
const serviceProcess = (port: number, args: string[], nodeArgs: string[] = []) =>
  startProcess(
    SERVICE_BUNDLE,
    args,
    {
      ...SERVICE_ENV,
      PORT: String(port),
      DATABASE_URL: databaseUrl,
    },
    'API listening',
    nodeArgs,
  );
const workerProcess = () =>
  startProcess(SERVICE_BUNDLE, ['--role', 'worker'], { ...SERVICE_ENV, DATABASE_URL: databaseUrl }, 'Worker running');
const targets: Record<Target, (port: number, index: number) => Promise<ChildProcess | ChildProcess[]>> = {
  // Production settings: no response validation, no bodies in the API log (sandbox keys keep them, redacted).
  // The first process has every role, as a single-process deployment; a second one serves the API only.
  service: (port, index) => serviceProcess(port, index === 0 ? [] : ['--role', 'api']),
  // The worker first, so that the API process starts on a migrated database as it would in production.
  'service api+worker': async (port) => [await workerProcess(), await serviceProcess(port, ['--role', 'api'])],
  'service api alone': (port) => serviceProcess(port, ['--role', 'api']),
  'service via tsx': (port) =>
    startProcess(
      join(root, 'server', 'main.ts'),
      [],
      { ...SERVICE_ENV, PORT: String(port), DATABASE_URL: databaseUrl },
      'API listening',
    ),
  'raw pg': (port) =>
    startProcess(
      join(here, 'baselines', 'raw-pg.ts'),
      [],
      {
        PORT: String(port),
        DATABASE_URL: databaseUrl,
        ENVIRONMENT: 'production',
        BENCH_API_KEYS: [prepared.key, ...prepared.keys, prepared.feedKey].join(','),
      },
      'ready',
    ),
  'bare express': (port) =>
    startProcess(join(here, 'baselines', 'bare-express.ts'), [], { PORT: String(port) }, 'ready'),
  'bare node:http': (port) =>
    startProcess(join(here, 'baselines', 'bare-node-http.ts'), [], { PORT: String(port) }, 'ready'),
};

// One group per target and process count, in the order of allScenarios; the SDK part needs the single service.
const groups: { target: Target; processes: number; scenarios: Scenario[] }[] = [];
for (const s of allScenarios) {
  const processes = s.processes ?? 1;
  if (!groups.some((g) => g.target === s.target && g.processes === processes))
    groups.push({ target: s.target, processes, scenarios: [] });
}
for (const s of scenarios)
  groups.find((g) => g.target === s.target && g.processes === (s.processes ?? 1))!.scenarios.push(s);

const results: Measured[] = [];
let webhookFigures: WebhookFigures | undefined;
let sdkFigures: SdkFigures | undefined;
let documentFigures: DocumentFigures | undefined;
let hostileFigures: HostileFigures | undefined;
let stockFigures: StockFigures | undefined;
let sandboxFigures: SandboxFigures | undefined;
let postingsFigures: PostingsFigures | undefined;
let dmsFigures: DmsFigures | undefined;
let dmsMixFigures: DmsMixFigures | undefined;
let fairnessFigures: FairnessFigures | undefined;
let idleFigures: IdleFigures | undefined;
let dmsReconciliationFigures: DmsReconciliationFigures | undefined;
let moneyFigures: MoneyFigures | undefined;
const whereFigures: {
  title: string;
  perSecond: number;
  cpuUsPerOperation: number;
  /** PostgreSQL's CPU per request (per record of the walk) in the window, and its transactions per 1000 requests. */
  postgresUsPerOperation: number;
  transactionsPerThousand: number;
  summary: ProfileSummary;
}[] = [];
let processesFigures: ProcessesFigures | undefined;
let createSequence = 0;
let keyTurn = 0;
const started = new Date();
try {
  for (const group of groups) {
    const runSdk = group.target === 'service' && group.processes === 1 && extras.has('sdk');
    const runDocuments = group.target === 'service' && group.processes === 1 && extras.has('documents');
    const runHostile = group.target === 'service' && group.processes === 1 && extras.has('hostile');
    if (group.scenarios.length === 0 && !runSdk && !runDocuments && !runHostile) continue;
    const ports: number[] = [];
    const children: ChildProcess[] = [];
    try {
      for (let index = 0; index < group.processes; index += 1) {
        // one after the other: both would migrate at once
        const port = await freePort();
        children.push(...[await targets[group.target](port, index)].flat());
        ports.push(port);
      }
      // Fresh processes: every scenario of the group once (JIT, connection pools, keys read into memory), so that
      // the first one measured is not the only one measured cold.
      if (warmup > 0) for (const scenario of group.scenarios) await half(ports, scenario, warmup);
      for (const scenario of group.scenarios) {
        process.stderr.write(`measuring ${label(scenario)}\n`);
        if (warmup > 0) await half(ports, scenario, warmup);
        results.push(
          await measure(
            ports,
            scenario,
            children.map((child) => child.pid!),
          ),
        );
      }
      if (runSdk) sdkFigures = await benchSdk(ports[0]!, prepared.feedKey);
      if (runDocuments) documentFigures = await benchDocuments(ports[0]!);
      if (runHostile) hostileFigures = await benchHostile(ports[0]!, prepared.key);
    } finally {
      await Promise.all(children.map(stopProcess));
    }
  }
  if (extras.has('where')) {
    // Where the time went: each of these driven as in its scenario, on a process started for it with --cpu-prof.
    const profiled: {
      title: string;
      scenario: Scenario;
      start: (port: number, nodeArgs: string[]) => Promise<ChildProcess>;
      /** Started before the profiled process and stopped after it, unprofiled (the worker of the production topology). */
      alongside?: () => Promise<ChildProcess>;
    }[] = [
      {
        title: 'GET /health, single process',
        scenario: allScenarios[0]!,
        start: (port, nodeArgs) => serviceProcess(port, [], nodeArgs),
      },
      {
        // The README's production topology (decision 0056): the API process profiled, its worker running apart.
        title: 'GET /health, API process (worker apart)',
        scenario: allScenarios[0]!,
        start: (port, nodeArgs) => serviceProcess(port, ['--role', 'api'], nodeArgs),
        alongside: workerProcess,
      },
      {
        title: 'GET /health, bare express',
        scenario: allScenarios.find((s) => s.target === 'bare express')!,
        start: (port, nodeArgs) =>
          startProcess(join(here, 'baselines', 'bare-express.ts'), [], { PORT: String(port) }, 'ready', nodeArgs),
      },
      {
        title: 'POST /customers, single process',
        scenario: allScenarios.find((s) => s.name === 'POST /customers' && s.target === 'service' && !s.variant)!,
        start: (port, nodeArgs) => serviceProcess(port, [], nodeArgs),
      },
      {
        title: 'PUT /prices (500 rows), single process',
        scenario: allScenarios.find((s) => s.name.startsWith('PUT /prices') && s.target === 'service')!,
        start: (port, nodeArgs) => serviceProcess(port, [], nodeArgs),
      },
      {
        title: 'change-feed walk, single process',
        scenario: allScenarios.find((s) => s.walk && s.target === 'service')!,
        start: (port, nodeArgs) => serviceProcess(port, [], nodeArgs),
      },
    ];
    for (const item of profiled) {
      process.stderr.write(`profiling ${item.title}\n`);
      const dir = mkdtempSync(
        join(values.profiles ? resolve(values.profiles) : scratch, `${item.title.replace(/[^A-Za-z0-9]+/g, '-')}-`),
      );
      const port = await freePort();
      const beside = item.alongside ? await item.alongside() : undefined;
      const child = await item.start(port, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
      const window = { from: 0, to: 0, perSecond: 0, cpuUs: 0, postgresUs: 0, transactions: 0 };
      try {
        await half([port], item.scenario, Math.max(warmup, 2)); // a fresh process: its pools fill and its code warms first
        const [from, cpuBefore, postgresBefore, transactionsBefore] = [
          performance.now(),
          processesCpuUs([child.pid!]),
          postgresCpuUs(postmasterPid),
          await committedTransactions(),
        ];
        const measured = await half([port], item.scenario, duration / 2);
        Object.assign(window, {
          from,
          to: performance.now(),
          perSecond: measured.perSecond,
          cpuUs: processesCpuUs([child.pid!]) - cpuBefore,
          postgresUs: postgresCpuUs(postmasterPid) - postgresBefore,
          transactions: (await committedTransactions()) - transactionsBefore,
        });
      } finally {
        await stopProcess(child);
        if (beside) await stopProcess(beside);
      }
      const exited = performance.now();
      const cut = { fromEndUs: (exited - window.from) * 1000, toEndUs: (exited - window.to) * 1000 };
      writeFileSync(join(dir, 'window.json'), `${JSON.stringify(cut)}\n`); // the window measured, for a second reading
      const summary = readProfile(dir, root, cut);
      const operations = window.perSecond * (duration / 2);
      whereFigures.push({
        title: item.title,
        perSecond: window.perSecond,
        cpuUsPerOperation: window.cpuUs / operations,
        postgresUsPerOperation: window.postgresUs / operations,
        transactionsPerThousand: (window.transactions / operations) * 1000,
        summary,
      });
    }
  }
  if (extras.has('webhooks')) {
    process.stderr.write('measuring webhook delivery\n');
    webhookFigures = await benchWebhooks({
      databaseUrl,
      organizationId: prepared.organizationId,
      burst: 1_000,
      paced: 100,
      startService: async (env) => {
        const port = await freePort();
        const child = await startProcess(
          join(root, 'server', 'main.ts'),
          [],
          {
            PORT: String(port),
            DATABASE_URL: databaseUrl,
            LOG_LEVEL: 'warn',
            NODE_ENV: 'production',
            ENVIRONMENT: 'sandbox',
            SANDBOX_BOOTSTRAP: 'false',
            ...env,
          },
          'API listening',
        );
        return { port, stop: () => stopProcess(child) };
      },
    });
  }
  // The stock and money parts start their own service and raw pg processes, on the bench's database.
  const start = async (entry: string, env: Record<string, string>, readyText: string) => {
    const port = await freePort();
    const child = await startProcess(entry, [], { PORT: String(port), DATABASE_URL: databaseUrl, ...env }, readyText);
    return { port, stop: () => stopProcess(child) };
  };
  if (extras.has('stock')) {
    stockFigures = await benchStock({
      databaseUrl,
      roundSeconds: duration / 4,
      warmup,
      rounds: 3,
      movements: stockMovements,
      transferWorkers: 4,
      removalWorkers: [8, 32],
      startService: () => start(join(root, 'server', 'main.ts'), SERVICE_ENV, 'API listening'),
      startRawPg: (keys) =>
        start(
          join(here, 'baselines', 'raw-pg.ts'),
          { ENVIRONMENT: 'production', BENCH_API_KEYS: keys.join(',') },
          'ready',
        ),
    });
  }
  if (extras.has('sandbox')) sandboxFigures = await benchSandbox((name) => database.url(name));
  if (extras.has('postings')) postingsFigures = await benchPostings((name) => database.url(name));
  if (extras.has('dms')) dmsFigures = await benchDms((name) => database.url(name));
  if (extras.has('dmsmix')) dmsMixFigures = await benchDmsMix((name) => database.url(name));
  if (extras.has('fair')) fairnessFigures = await benchFairness((name) => database.url(name));
  if (extras.has('idle')) idleFigures = await benchIdle((name) => database.url(name));
  if (extras.has('reconciliation'))
    dmsReconciliationFigures = await benchDmsReconciliation((name) => database.url(name));
  if (extras.has('money')) {
    moneyFigures = await benchMoney({
      databaseUrl,
      roundSeconds: duration / 4,
      warmup,
      rounds: 3,
      invoiceWorkers: 4,
      pageWorkers: 4,
      paymentWorkers: 4,
      startService: () => start(join(root, 'server', 'main.ts'), SERVICE_ENV, 'API listening'),
      startRawPg: (keys) =>
        start(
          join(here, 'baselines', 'raw-pg.ts'),
          { ENVIRONMENT: 'production', BENCH_API_KEYS: keys.join(',') },
          'ready',
        ),
    });
  }
  if (extras.has('split')) {
    process.stderr.write('measuring several processes (split roles)\n');
    processesFigures = await benchProcesses({
      databaseUrl,
      organizationId: prepared.organizationId,
      keys: prepared.keys,
      seconds: duration,
      warmup,
      connections,
      burst: 500,
      start: (args, env, readyText) => startProcess(join(root, 'server', 'main.ts'), args, env, readyText),
      stop: stopProcess,
    });
  }
} finally {
  await database.stop();
  rmSync(scratch, { recursive: true, force: true });
}

console.log(
  `\n${connections} connections, ${duration} s per scenario after ${warmup} s of warm-up, started ${started.toISOString()}${only.length > 0 ? `, only ${only.join(', ')}` : ''}\n`,
);
if (results.length > 0)
  console.log(
    pad('scenario', 60) +
      pad('per second', 12) +
      pad('noise', 8) +
      pad('p50 ms', 9) +
      pad('p99 ms', 9) +
      pad('failed', 9) +
      pad('rows/s', 9) +
      pad('node us', 9) +
      'pg us',
  );
for (const r of results) {
  const rows = r.scenario.rowsPerRequest ? (r.perSecond * r.scenario.rowsPerRequest).toFixed(0) : '';
  console.log(
    pad(label(r.scenario), 60) +
      pad(`${r.perSecond.toFixed(0)}${r.scenario.walk ? ' rec' : ''}`, 12) +
      pad(percent(r.spread), 8) +
      pad(r.p50 === null ? '-' : String(r.p50), 9) +
      pad(r.p99 === null ? '-' : String(r.p99), 9) +
      pad(String(r.failed), 9) +
      pad(rows, 9) +
      pad(r.cpu ? r.cpu.nodeUs.toFixed(0) : '-', 9) +
      (r.cpu ? r.cpu.postgresUs.toFixed(0) : '-'),
  );
}
if (results.length > 0)
  console.log(
    '(per second: requests/s, or records/s for the walks ("rec"); failed: non-2xx answers plus connection errors;\n node us, pg us: CPU microseconds per request (per record for the walks) of the target\'s own processes and of PostgreSQL, from /proc)',
  );
const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)] ?? NaN;
if (webhookFigures) {
  console.log(
    `\nwebhooks: ${webhookFigures.eventsPerSecond.toFixed(0)} events/s delivered to a local receiver (${webhookFigures.events} events committed at once); ` +
      `write request to delivery p50 ${webhookFigures.latencyP50Ms.toFixed(0)} ms, p99 ${webhookFigures.latencyP99Ms.toFixed(0)} ms over ${webhookFigures.latencySamples} changes`,
  );
}
if (sdkFigures) {
  console.log(
    `SDK: change-feed walk through paginate median ${median(sdkFigures.sdkWalks).toFixed(0)} records/s, plain fetch loop ${median(sdkFigures.fetchWalks).toFixed(0)} (alternated, ${sdkFigures.sdkWalks.length} each); ` +
      `verifyWebhook (2 KB body) median ${median(sdkFigures.verificationsPerSecond).toFixed(0)} verifications/s`,
  );
}
if (stockFigures) console.log(`\n${stockReport(stockFigures).join('\n')}`);
if (sandboxFigures) console.log(`\n${sandboxReport(sandboxFigures).join('\n')}`);
if (postingsFigures) console.log(`\n${postingsReport(postingsFigures).join('\n')}`);
if (dmsFigures) console.log(`\n${dmsReport(dmsFigures).join('\n')}`);
if (dmsMixFigures) console.log(`\n${dmsMixReport(dmsMixFigures).join('\n')}`);
if (fairnessFigures) console.log(`\n${fairnessReport(fairnessFigures).join('\n')}`);
if (idleFigures) console.log(`\n${idleReport(idleFigures).join('\n')}`);
if (dmsReconciliationFigures) console.log(`\n${dmsReconciliationReport(dmsReconciliationFigures).join('\n')}`);
if (moneyFigures) console.log(`\n${moneyReport(moneyFigures).join('\n')}`);
if (processesFigures) console.log(`\n${processesReport(processesFigures).join('\n')}`);
if (extras.has('kysely')) {
  console.log("\nKysely's own cost per query (build + compile to SQL, no database; median of 15 rounds of 2000):");
  for (const figure of measureKyselyCompile())
    console.log(`  ${figure.query.padEnd(30)} ${figure.microseconds.toFixed(1)} us`);
}
const noisiest = results.reduce((worst, r) => Math.max(worst, r.spread), 0);
if (results.length > 0)
  console.log(`\nrun-to-run noise: the two halves of a scenario differ by up to ${percent(noisiest)} in this run`);

// The ratios, each beside its aim: a is measured against b.
interface Ratio {
  label: string;
  a: Find;
  b: Find;
  aim?: number;
}
type Find = { name: string; target: Target; variant?: Scenario['variant'] };
const svc = (name: string, variant?: Scenario['variant']): Find => ({ name, target: 'service', variant });
const raw = (name: string, variant?: Scenario['variant']): Find => ({ name, target: 'raw pg', variant });
const split = (name: string): Find => ({ name, target: 'service api+worker' });
const ratios: Ratio[] = [
  {
    label: 'GET /health: service / bare express',
    a: svc('GET /health'),
    b: { name: 'GET /health', target: 'bare express' },
    aim: 0.95,
  },
  {
    label: 'GET /me (key + rate limit) / GET /health, service',
    a: svc('GET /me (key + rate limit)'),
    b: svc('GET /health'),
    aim: 0.85,
  },
  { label: 'POST /customers: service / raw pg', a: svc('POST /customers'), b: raw('POST /customers'), aim: 0.8 },
  {
    label: 'GET /customers?limit=100: service / raw pg',
    a: svc('GET /customers?limit=100'),
    b: raw('GET /customers?limit=100'),
    aim: 0.9,
  },
  {
    label: 'PUT /prices (500 rows): service / raw pg',
    a: svc('PUT /prices (500 rows)'),
    b: raw('PUT /prices (500 rows)'),
    aim: 0.8,
  },
  {
    label: 'change-feed walk: service / raw pg',
    a: svc('change-feed walk (100 per page)'),
    b: raw('change-feed walk (100 per page)'),
    aim: 0.8,
  },
  {
    label: 'GET /me, 50 keys / GET /health, service',
    a: svc('GET /me (key + rate limit)', '50 keys'),
    b: svc('GET /health'),
    aim: 0.85,
  },
  {
    label: 'POST /customers, 50 keys: service / raw pg',
    a: svc('POST /customers', '50 keys'),
    b: raw('POST /customers', '50 keys'),
    aim: 0.8,
  },
  {
    label: 'GET /customers?limit=100, 50 keys: service / raw pg',
    a: svc('GET /customers?limit=100', '50 keys'),
    b: raw('GET /customers?limit=100', '50 keys'),
    aim: 0.9,
  },
  {
    label: 'POST /customers, 2 processes; 50 keys: service / raw pg',
    a: svc('POST /customers', '2 processes; 50 keys'),
    b: raw('POST /customers', '2 processes; 50 keys'),
    aim: 0.8,
  },
  {
    label: 'GET /customers?limit=100, 2 processes; 50 keys: service / raw pg',
    a: svc('GET /customers?limit=100', '2 processes; 50 keys'),
    b: raw('GET /customers?limit=100', '2 processes; 50 keys'),
    aim: 0.9,
  },
  // The same aims in the README's production topology: an API process and a worker apart.
  {
    label: 'GET /health: api+worker / bare express',
    a: split('GET /health'),
    b: { name: 'GET /health', target: 'bare express' },
    aim: 0.95,
  },
  {
    label: 'GET /me / GET /health, api+worker',
    a: split('GET /me (key + rate limit)'),
    b: split('GET /health'),
    aim: 0.85,
  },
  { label: 'POST /customers: api+worker / raw pg', a: split('POST /customers'), b: raw('POST /customers'), aim: 0.8 },
  {
    label: 'GET /customers?limit=100: api+worker / raw pg',
    a: split('GET /customers?limit=100'),
    b: raw('GET /customers?limit=100'),
    aim: 0.9,
  },
  {
    label: 'PUT /prices (500 rows): api+worker / raw pg',
    a: split('PUT /prices (500 rows)'),
    b: raw('PUT /prices (500 rows)'),
    aim: 0.8,
  },
  {
    label: 'change-feed walk: api+worker / raw pg',
    a: split('change-feed walk (100 per page)'),
    b: raw('change-feed walk (100 per page)'),
    aim: 0.8,
  },
  // For information, no aim: where /health's time goes by topology (see "where the time went" below).
  {
    label: 'GET /health: api alone (no worker) / bare express',
    a: { name: 'GET /health', target: 'service api alone' },
    b: { name: 'GET /health', target: 'bare express' },
  },
  {
    label: 'GET /health: single process / api alone (no worker)',
    a: svc('GET /health'),
    b: { name: 'GET /health', target: 'service api alone' },
  },
  {
    label: 'GET /health: api+worker / api alone (no worker)',
    a: split('GET /health'),
    b: { name: 'GET /health', target: 'service api alone' },
  },
  {
    label: 'GET /health: compiled (npm start) / tsx sources',
    a: svc('GET /health'),
    b: { name: 'GET /health', target: 'service via tsx' },
  },
  {
    label: 'PUT /prices (500 rows): compiled (npm start) / tsx sources',
    a: svc('PUT /prices (500 rows)'),
    b: { name: 'PUT /prices (500 rows)', target: 'service via tsx' },
  },
  // For information, no aim: the ceiling of one Node process, and what a second process adds to each target.
  {
    label: 'GET /health: service / bare node:http',
    a: svc('GET /health'),
    b: { name: 'GET /health', target: 'bare node:http' },
  },
  {
    label: 'POST /customers, service: 2 processes / 1 (50 keys)',
    a: svc('POST /customers', '2 processes; 50 keys'),
    b: svc('POST /customers', '50 keys'),
  },
  {
    label: 'POST /customers, raw pg: 2 processes / 1 (50 keys)',
    a: raw('POST /customers', '2 processes; 50 keys'),
    b: raw('POST /customers', '50 keys'),
  },
  {
    label: 'GET /customers?limit=100, service: 2 processes / 1 (50 keys)',
    a: svc('GET /customers?limit=100', '2 processes; 50 keys'),
    b: svc('GET /customers?limit=100', '50 keys'),
  },
  {
    label: 'GET /customers?limit=100, raw pg: 2 processes / 1 (50 keys)',
    a: raw('GET /customers?limit=100', '2 processes; 50 keys'),
    b: raw('GET /customers?limit=100', '50 keys'),
  },
];
const find = (f: Find) =>
  results.find((r) => r.scenario.name === f.name && r.scenario.target === f.target && r.scenario.variant === f.variant);

if (results.length > 0)
  console.log(
    `\nratios of this run against the aims of issue 40 (${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${connections} connections, ${duration} s per scenario)`,
  );
if (results.length > 0)
  console.log(pad('ratio', 68) + pad('value', 8) + pad('aim', 9) + pad('met', 22) + pad('noise', 8) + 'by CPU');
let withinNoise = false;
for (const r of results.length > 0 ? ratios : []) {
  const [a, b] = [find(r.a), find(r.b)];
  const aim = r.aim === undefined ? '-' : `>= ${r.aim}`;
  if (!a || !b) {
    if (r.aim !== undefined || only.length === 0) console.log(pad(r.label, 68) + pad('-', 8) + pad(aim, 9) + 'not run');
    continue;
  }
  const value = a.perSecond / b.perSecond;
  const noise = Math.max(a.spread, b.spread);
  let met = '-';
  if (a.failed + b.failed > 0) met = `invalid (${a.failed + b.failed} failed)`;
  else if (r.aim !== undefined) {
    met = value >= r.aim ? 'yes' : 'NO';
    // The ratio's own noise (the noisier scenario's halves) is larger than its distance from the aim.
    if (Math.abs(value - r.aim) <= noise * value) {
      met += ' (within noise)';
      withinNoise = true;
    }
  }
  // The same ratio from the CPU each request cost the two targets (their processes and PostgreSQL): what the
  // throughputs' ratio would be if the CPU were the only limit; it moves less than throughput with the neighbours.
  const total = (m: Measured) => (m.cpu ? m.cpu.nodeUs + m.cpu.postgresUs : NaN);
  const byCpu = total(b) / total(a);
  console.log(
    pad(r.label, 68) +
      pad(value.toFixed(2), 8) +
      pad(aim, 9) +
      pad(met, 22) +
      pad(percent(noise), 8) +
      (Number.isFinite(byCpu) ? byCpu.toFixed(2) : '-'),
  );
}
if (sdkFigures && results.length > 0) {
  console.log(
    pad('change-feed walk: SDK paginate / plain fetch', 68) +
      pad((median(sdkFigures.sdkWalks) / median(sdkFigures.fetchWalks)).toFixed(2), 8) +
      pad('-', 9) +
      pad('-', 22) +
      '-',
  );
}
if (results.length > 0)
  console.log(
    "noise: the larger of the two scenarios' noise (the difference between the two halves of each); by CPU: the CPU per request\n(node + pg) of the second target over the first's, the ratio the CPU alone would allow",
  );
if (withinNoise)
  console.log('within noise: the ratio is nearer its aim than its noise; one run does not tell, repeat it');
const withKey = find(svc('GET /me (key + rate limit)'));
const withoutKey = find(svc('GET /health'));
const manyKeys = find(svc('GET /me (key + rate limit)', '50 keys'));
if (withKey && withoutKey) {
  // Server time per request = 1 / (requests/s) at full load; below zero when noise is larger than the cost.
  const cost = (r: Measured) => {
    const us = (1 / r.perSecond - 1 / withoutKey.perSecond) * 1e6;
    return us > 0 ? `~${us.toFixed(0)} us` : 'none measurable (noise)';
  };
  console.log(
    `authentication + rate limit, server time per request: ${cost(withKey)} with one key${manyKeys ? `, ${cost(manyKeys)} with 50` : ''}`,
  );
}

if (whereFigures.length > 0) {
  console.log(
    '\nwhere the time went: each target on a process of its own started with --cpu-prof, driven as in its scenario for half the',
  );
  console.log(
    'duration after the warm-up; the window measured only (the profiler costs some speed: the per-second figures are lower than above)',
  );
  // The process's CPU per request (per record of the walk) from /proc; the profile's own milliseconds are the
  // thread's busy time, which on a loaded machine includes the time it waited for a core.
  for (const figure of whereFigures) {
    const unit = figure.title.includes('walk') ? 'record' : 'request';
    const cpu = cpuReadable
      ? `, ${figure.cpuUsPerOperation.toFixed(0)} us of CPU per ${unit}, PostgreSQL ${figure.postgresUsPerOperation.toFixed(0)} us in ${figure.transactionsPerThousand.toFixed(0)} transactions per 1000`
      : '';
    console.log(
      `\n${profileLines(`${figure.title} (${figure.perSecond.toFixed(0)}/s under the profiler${cpu})`, figure.summary).join('\n')}`,
    );
  }
  const [single, apart, bare] = [
    'GET /health, single process',
    'GET /health, API process (worker apart)',
    'GET /health, bare express',
  ].map((title) => whereFigures.find((f) => f.title === title));
  if (single && bare && cpuReadable) {
    const ratio = (figure: (typeof whereFigures)[number]) =>
      (bare.cpuUsPerOperation / (figure.cpuUsPerOperation + figure.postgresUsPerOperation)).toFixed(2);
    console.log(
      `\nGET /health under the profiler, CPU per request (process + PostgreSQL): bare express / single process ${ratio(single)}${apart ? `, bare express / API process ${ratio(apart)}` : ''}`,
    );
    // Where /health's time went against bare express's, piece by piece, in µs of CPU per request (issue 40).
    const columns = [single, ...(apart ? [apart] : []), bare].map((figure) => ({
      label: figure.title.replace('GET /health, ', ''),
      cpuUs: figure.cpuUsPerOperation,
      postgresUs: figure.postgresUsPerOperation,
      summary: figure.summary,
    }));
    console.log(`\n${pieceComparison('GET /health, µs of CPU per request by piece', columns).join('\n')}`);
  }
}
if (documentFigures) printDocuments(documentFigures);
if (hostileFigures) printHostile(hostileFigures);

/**
 * Transactions committed in the bench's database so far (pg_stat_database; each autocommit statement is one, this
 * reading's two included). A backend under load sends its counts about once a second, so a window's count is
 * approximate by about a second's worth of each busy connection's transactions.
 */
async function committedTransactions(): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    // Counters are sent to the statistics at the end of each backend's transaction; the snapshot is read fresh.
    await client.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await client.query<{ n: string }>(
      'SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = current_database()',
    );
    return Number(rows[0]!.n);
  } finally {
    await client.end();
  }
}

async function prepareDatabase(
  url: string,
): Promise<{ organizationId: string; key: string; keys: string[]; feedKey: string }> {
  const pool = new pg.Pool({ connectionString: url });
  try {
    await applyMigrations(pool);
    const db = kyselyOver(pool);
    const organization = await createOrganization(db, { name: 'Bench Distributor', baseCurrency: 'UGX' });
    // Limits high enough never to refuse: the bench measures the cost of the bucket, not its refusals.
    const unlimited = { perMinute: 100_000_000, burst: 10_000_000 };
    const scopes = ['customers:read', 'customers:write', 'prices:read', 'prices:write'];
    const issue = async (organizationId: string, name: string) =>
      (
        await createApiKey(db, {
          organizationId,
          name,
          environment: 'production',
          scopes,
          rateLimits: { read: unlimited, write: unlimited },
        })
      ).secret;
    const key = await issue(organization.id, 'bench');
    const keys: string[] = [];
    for (let i = 0; i < KEY_COUNT; i += 1) keys.push(await issue(organization.id, `bench ${i + 1} of ${KEY_COUNT}`));
    // The change-feed walks read an organisation of their own, which no scenario writes to.
    const feed = await createOrganization(db, { name: 'Bench Feed Reader', baseCurrency: 'UGX' });
    const feedKey = await issue(feed.id, 'bench feed');
    for (const org of [organization.id, feed.id]) {
      const outlets = syntheticOutlets(1_000, 7).map((o, i) => ({
        ...o,
        id: `cus_${String(i).padStart(26, '0')}`,
        outlet_code: `UG9${String(i).padStart(6, '0')}`,
      }));
      await pool.query(
        `INSERT INTO customers (organization_id, id, outlet_code, name, status, channel, price_group, credit_limit_amount, credit_limit_currency, payment_terms_days, address, region, phone, tax_id)
         SELECT $1, id, outlet_code, name, status, channel, price_group, credit_limit_amount, credit_limit_currency, payment_terms_days, address, region, phone, tax_id
           FROM jsonb_to_recordset($2::jsonb) AS x(id text, outlet_code text, name text, status text, channel text, price_group text, credit_limit_amount numeric,
             credit_limit_currency text, payment_terms_days int, address jsonb, region text, phone text, tax_id text)`,
        [org, JSON.stringify(outlets)],
      );
    }
    await pool.query(
      `INSERT INTO products (organization_id, id, product_code, name, status, pack_size, selling_units, tracks_stock, tax_rate, is_empty)
       SELECT $1, 'prd_' || lpad(g::text, 26, '0'), lpad(g::text, 6, '0'), 'Bench product ' || g, 'active', 24, ARRAY['case'], true, 18, false
         FROM generate_series(1, $2) AS g`,
      [organization.id, PRICE_BATCH_PRODUCTS],
    );
    return { organizationId: organization.id, key, keys, feedKey };
  } finally {
    await pool.end();
  }
}

/**
 * Measures a scenario in two halves of the duration: the figure is the whole, and the spread between the halves
 * (|a - b| / mean) is this run's own noise, against which a change between two runs is judged.
 */
async function measure(ports: number[], scenario: Scenario, pids: number[]): Promise<Measured> {
  const used = { node: 0, postgres: 0, operations: 0 };
  const timedHalf = async () => {
    const [node, postgres] = [processesCpuUs(pids), postgresCpuUs(postmasterPid)];
    const measured = await half(ports, scenario, duration / 2);
    used.node += processesCpuUs(pids) - node;
    used.postgres += postgresCpuUs(postmasterPid) - postgres;
    used.operations += measured.perSecond * (duration / 2);
    return measured;
  };
  const halves = [await timedHalf(), await timedHalf()] as [Half, Half];
  const [a, b] = halves.map((h) => h.perSecond) as [number, number];
  const latency = (pick: (h: Half) => number | null) =>
    halves.some((h) => pick(h) === null) ? null : Math.max(...halves.map((h) => pick(h)!));
  return {
    scenario,
    perSecond: (a + b) / 2,
    spread: Math.abs(a - b) / ((a + b) / 2),
    p50: latency((h) => h.p50),
    p99: latency((h) => h.p99),
    failed: halves.reduce((total, h) => total + h.failed, 0),
    cpu:
      cpuReadable && used.operations > 0
        ? { nodeUs: used.node / used.operations, postgresUs: used.postgres / used.operations }
        : null,
  };
}

/** One half: every process of the target driven at once, its own share of the connections each; the figure is the sum. */
async function half(ports: number[], scenario: Scenario, seconds: number): Promise<Half> {
  if (scenario.walk) return walkFeed(ports[0]!, keysOf[scenario.keys][0]!, seconds);
  const total = scenario.connections ?? connections;
  const runs = await Promise.all(
    ports.map((port, i) =>
      load(port, scenario, seconds, Math.floor(total / ports.length) + (i < total % ports.length ? 1 : 0)),
    ),
  );
  return {
    perSecond: runs.reduce((sum, run) => sum + run.requests.average, 0),
    p50: Math.max(...runs.map((run) => run.latency.p50)),
    p99: Math.max(...runs.map((run) => run.latency.p99)),
    failed: runs.reduce((sum, run) => sum + run.non2xx + run.errors, 0),
  };
}

/** Walks the whole customers change feed page by page, as a partner's poller would, again and again for `seconds`. */
async function walkFeed(port: number, key: string, seconds: number): Promise<Half> {
  const started = performance.now();
  let records = 0;
  let failed = 0;
  do {
    let cursor: string | null = null;
    do {
      const query = `updatedSince=2000-01-01T00:00:00.000Z&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/customers?${query}`, {
        headers: { Authorization: `Bearer ${key}` },
      });
      if (!response.ok) {
        failed += 1;
        process.stderr.write(`feed walk: ${response.status} ${await response.text()}\n`);
        break;
      }
      const page = (await response.json()) as { data: unknown[]; nextCursor: string | null };
      records += page.data.length;
      cursor = page.nextCursor;
    } while (cursor);
  } while (performance.now() - started < seconds * 1000 && failed === 0);
  return { perSecond: records / ((performance.now() - started) / 1000), p50: null, p99: null, failed };
}

function load(port: number, scenario: Scenario, seconds: number, connectionCount: number): Promise<autocannon.Result> {
  const headers: Record<string, string> =
    scenario.create || scenario.body ? { 'content-type': 'application/json' } : {};
  const keys = keysOf[scenario.keys];
  if (keys.length === 1) headers.authorization = `Bearer ${keys[0]}`;
  // Many keys: each request takes the next key in turn (shared by both autocannon instances of a two-process row).
  const authorization = (): Record<string, string> =>
    keys.length > 1 ? { authorization: `Bearer ${keys[((keyTurn += 1)) % keys.length]}` } : {};
  const setupRequest = scenario.create
    ? (request: autocannon.Request) => {
        createSequence += 1;
        const code = `UG${String(createSequence).padStart(7, '0')}`;
        return {
          ...request,
          headers: { ...headers, ...authorization(), 'idempotency-key': `bench-${scenario.target}-${createSequence}` },
          body: JSON.stringify({ outletCode: code, name: `Bench outlet ${createSequence}`, channel: 'retail' }),
        };
      }
    : keys.length > 1
      ? (request: autocannon.Request) => ({ ...request, headers: { ...headers, ...authorization() } })
      : undefined;
  return autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: connectionCount,
    duration: seconds,
    requests: [
      {
        method: scenario.method ?? 'GET',
        path: scenario.path,
        headers,
        ...(scenario.body ? { body: JSON.stringify(scenario.body) } : {}),
        ...(setupRequest ? { setupRequest } : {}),
      },
    ],
  });
}

function startProcess(
  entry: string,
  args: string[],
  env: Record<string, string>,
  readyText: string,
  nodeArgs: string[] = [],
): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    // A bundle runs as npm start runs it; a TypeScript entry through tsx.
    const loader = entry.endsWith('.mjs') ? ['--enable-source-maps'] : ['--import', 'tsx'];
    const child = spawn(process.execPath, [...nodeArgs, ...loader, entry, ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (output.includes(readyText)) resolve(child);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${entry} exited with ${code} before it was ready:\n${output}`)));
  });
}

function stopProcess(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(0)}%`;
}

function pad(text: string, width: number): string {
  return text.padEnd(width);
}
