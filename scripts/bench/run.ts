// `npm run bench`: starts the service (production settings, its own embedded PostgreSQL) and bare baselines,
// each in its own process, drives each with autocannon one after the other, and prints requests/s, p50 and
// p99 with the ratios measured in this one run. The figures depend on the machine; the ratios are the result.
//   --duration S     seconds of measurement per scenario (default 10), after a 2 s warm-up
//   --connections N  concurrent connections (default 50)
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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
import { benchWebhooks, type WebhookFigures } from './webhooks.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const { values } = parseArgs({ options: { duration: { type: 'string', default: '10' }, connections: { type: 'string', default: '50' } } });
const duration = Number(values.duration);
const connections = Number(values.connections);

interface Scenario {
  name: string;
  target: string;
  path: string;
  headers?: Record<string, string>;
  /** A fresh body (and Idempotency-Key) per request, for creates. */
  create?: boolean;
  /** A fixed JSON body (for PUT). */
  body?: unknown;
  method?: 'GET' | 'POST' | 'PUT';
  connections?: number;
  /** Rows written per request, to report rows/s. */
  rowsPerRequest?: number;
}
interface Measured { scenario: Scenario; requestsPerSecond: number; spread: number; p50: number; p99: number; non2xx: number }

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

const scratch = mkdtempSync(join(tmpdir(), 'erp-bench-'));
chmodSync(scratch, 0o755);
const database = await startEmbeddedPostgres({ dataDir: join(scratch, 'postgres'), port: await freePort() });
const databaseUrl = database.url('postgres');
const { organizationId, key, keyId } = await prepareDatabase(databaseUrl);
const auth = { Authorization: `Bearer ${key}` };

const targets: Record<string, (port: number) => Promise<ChildProcess>> = {
  // Production settings: no response validation, no bodies in the API log (sandbox keys keep them, redacted).
  service: (port) => startProcess(join(root, 'server', 'main.ts'), {
    PORT: String(port), DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', NODE_ENV: 'production', ENVIRONMENT: 'production', CURSOR_SECRET: 'bench-cursor-secret-0123456789', WEBHOOK_SECRET_KEY: 'b'.repeat(64),
  }, 'API listening'),
  'raw pg': (port) => startProcess(join(here, 'baselines', 'raw-pg.ts'), { PORT: String(port), DATABASE_URL: databaseUrl, ORGANIZATION_ID: organizationId, API_KEY_ID: keyId }, 'ready'),
  'bare express': (port) => startProcess(join(here, 'baselines', 'bare-express.ts'), { PORT: String(port) }, 'ready'),
  'bare node:http': (port) => startProcess(join(here, 'baselines', 'bare-node-http.ts'), { PORT: String(port) }, 'ready'),
};

const scenarios: Scenario[] = [
  { name: 'GET /health', target: 'service', path: '/api/v1/health' },
  { name: 'GET /me (key + rate limit)', target: 'service', path: '/api/v1/me', headers: auth },
  { name: 'POST /customers', target: 'service', path: '/api/v1/customers', method: 'POST', headers: auth, create: true },
  { name: 'GET /customers?limit=100', target: 'service', path: '/api/v1/customers?limit=100', headers: auth },
  { name: 'POST /customers', target: 'raw pg', path: '/api/v1/customers', method: 'POST', create: true },
  { name: 'GET /customers?limit=100', target: 'raw pg', path: '/api/v1/customers?limit=100' },
  { name: 'PUT /prices (500 rows)', target: 'service', path: '/api/v1/prices', method: 'PUT', headers: auth, body: PRICE_BATCH, connections: 4, rowsPerRequest: 500 },
  { name: 'PUT /prices (500 rows)', target: 'raw pg', path: '/api/v1/prices', method: 'PUT', body: PRICE_BATCH, connections: 4, rowsPerRequest: 500 },
  { name: 'GET /health', target: 'bare express', path: '/api/v1/health' },
  { name: 'GET /health', target: 'bare node:http', path: '/api/v1/health' },
];

const results: Measured[] = [];
const feedWalks: Record<string, number[]> = {};
let webhookFigures: WebhookFigures | undefined;
let sdkFigures: SdkFigures | undefined;
let createSequence = 0;
try {
  for (const [target, start] of Object.entries(targets)) {
    const port = await freePort();
    const child = await start(port);
    try {
      for (const scenario of scenarios.filter((s) => s.target === target)) {
        await load(port, scenario, 2); // warm-up: JIT, connection pools
        results.push(await measure(port, scenario));
      }
      if (target === 'service' || target === 'raw pg') feedWalks[target] = await walkFeed(port, target === 'service' ? auth : {});
      if (target === 'service') sdkFigures = await benchSdk(port, key);
    } finally {
      await stopProcess(child);
    }
  }
  webhookFigures = await benchWebhooks({
    databaseUrl,
    organizationId,
    burst: 1_000,
    paced: 100,
    startService: async (env) => {
      const port = await freePort();
      const child = await startProcess(join(root, 'server', 'main.ts'), {
        PORT: String(port), DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', NODE_ENV: 'production', ENVIRONMENT: 'sandbox', SANDBOX_BOOTSTRAP: 'false', ...env,
      }, 'API listening');
      return { port, stop: () => stopProcess(child) };
    },
  });
} finally {
  await database.stop();
  rmSync(scratch, { recursive: true, force: true });
}

console.log(`\n${connections} connections, ${duration} s per scenario, ${new Date().toISOString()}\n`);
console.log(pad('scenario', 44) + pad('requests/s', 12) + pad('noise', 8) + pad('p50 ms', 9) + pad('p99 ms', 9) + pad('non-2xx', 9) + 'rows/s');
for (const r of results) {
  const rows = r.scenario.rowsPerRequest ? (r.requestsPerSecond * r.scenario.rowsPerRequest).toFixed(0) : '';
  console.log(pad(`${r.scenario.name} [${r.scenario.target}]`, 44) + pad(r.requestsPerSecond.toFixed(0), 12) + pad(`${(r.spread * 100).toFixed(0)}%`, 8) + pad(String(r.p50), 9) + pad(String(r.p99), 9) + pad(String(r.non2xx), 9) + rows);
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
for (const [target, walks] of Object.entries(feedWalks)) {
  console.log(`full change-feed walk of every customer, 100 per page [${target}]: median ${median(walks).toFixed(0)} records/s over ${walks.length} walks`);
}
const rps = (name: string, target: string) => results.find((r) => r.scenario.name === name && r.scenario.target === target)?.requestsPerSecond ?? NaN;
const ratio = (a: number, b: number) => (a / b).toFixed(2);
if (webhookFigures) {
  console.log(`webhooks: ${webhookFigures.eventsPerSecond.toFixed(0)} events/s delivered to a local receiver (${webhookFigures.events} events committed at once); ` +
    `write request to delivery p50 ${webhookFigures.latencyP50Ms.toFixed(0)} ms, p99 ${webhookFigures.latencyP99Ms.toFixed(0)} ms over ${webhookFigures.latencySamples} changes`);
}
if (sdkFigures) {
  console.log(`SDK: change-feed walk through paginate median ${median(sdkFigures.sdkWalks).toFixed(0)} records/s, plain fetch loop ${median(sdkFigures.fetchWalks).toFixed(0)} (alternated, ${sdkFigures.sdkWalks.length} each); ` +
    `verifyWebhook (2 KB body) median ${median(sdkFigures.verificationsPerSecond).toFixed(0)} verifications/s`);
}
console.log('\nKysely\'s own cost per query (build + compile to SQL, no database; median of 15 rounds of 2000):');
for (const figure of measureKyselyCompile()) console.log(`  ${figure.query.padEnd(30)} ${figure.microseconds.toFixed(1)} us`);
const noisiest = results.reduce((worst, r) => Math.max(worst, r.spread), 0);
console.log(`\nrun-to-run noise: the two halves of a scenario differ by up to ${(noisiest * 100).toFixed(0)}% in this run`);
console.log('\nratios (same run):');
console.log(`  GET /health, service / bare express           = ${ratio(rps('GET /health', 'service'), rps('GET /health', 'bare express'))}  (aim >= 0.8)`);
console.log(`  GET /health, service / bare node:http         = ${ratio(rps('GET /health', 'service'), rps('GET /health', 'bare node:http'))}`);
console.log(`  POST /customers, service / raw pg             = ${ratio(rps('POST /customers', 'service'), rps('POST /customers', 'raw pg'))}  (aim >= 0.6)`);
console.log(`  GET /customers?limit=100, service / raw pg    = ${ratio(rps('GET /customers?limit=100', 'service'), rps('GET /customers?limit=100', 'raw pg'))}  (aim >= 0.6)`);
const withKey = rps('GET /me (key + rate limit)', 'service');
const withoutKey = rps('GET /health', 'service');
console.log(`  PUT /prices (500 rows), service / raw pg      = ${ratio(rps('PUT /prices (500 rows)', 'service'), rps('PUT /prices (500 rows)', 'raw pg'))}`);
console.log(`  change-feed walk, service / raw pg           = ${ratio(median(feedWalks.service ?? []), median(feedWalks['raw pg'] ?? []))}`);
if (sdkFigures) console.log(`  change-feed walk, SDK paginate / plain fetch   = ${ratio(median(sdkFigures.sdkWalks), median(sdkFigures.fetchWalks))}  (the SDK's cost per page)`);
console.log(`  GET /me with a key / GET /health without      = ${ratio(withKey, withoutKey)}  (authentication + rate limit: ~${((1 / withKey - 1 / withoutKey) * 1e6).toFixed(0)} us of server time per request)`);

async function prepareDatabase(url: string): Promise<{ organizationId: string; key: string; keyId: string }> {
  const pool = new pg.Pool({ connectionString: url });
  try {
    await applyMigrations(pool);
    const organization = await createOrganization(kyselyOver(pool), { name: 'Bench Distributor', baseCurrency: 'UGX' });
    // Limits high enough never to refuse: the bench measures the cost of the bucket, not its refusals.
    const unlimited = { perMinute: 100_000_000, burst: 10_000_000 };
    const issued = await createApiKey(kyselyOver(pool), { organizationId: organization.id, environment: 'production', scopes: ['customers:read', 'customers:write', 'prices:read', 'prices:write'], rateLimits: { read: unlimited, write: unlimited } });
    const outlets = syntheticOutlets(1_000, 7).map((o, i) => ({ ...o, id: `cus_${String(i).padStart(26, '0')}`, outlet_code: `UG9${String(i).padStart(6, '0')}` }));
    await pool.query(
      `INSERT INTO customers (organization_id, id, outlet_code, name, status, channel, price_group, credit_limit_amount, credit_limit_currency, payment_terms_days, address, region, phone, tax_id)
       SELECT $1, id, outlet_code, name, status, channel, price_group, credit_limit_amount, credit_limit_currency, payment_terms_days, address, region, phone, tax_id
         FROM jsonb_to_recordset($2::jsonb) AS x(id text, outlet_code text, name text, status text, channel text, price_group text, credit_limit_amount numeric,
           credit_limit_currency text, payment_terms_days int, address jsonb, region text, phone text, tax_id text)`,
      [organization.id, JSON.stringify(outlets)],
    );
    await pool.query(
      `INSERT INTO products (organization_id, id, product_code, name, status, pack_size, selling_units, tracks_stock, tax_rate, is_empty)
       SELECT $1, 'prd_' || lpad(g::text, 26, '0'), lpad(g::text, 6, '0'), 'Bench product ' || g, 'active', 24, ARRAY['case'], true, 18, false
         FROM generate_series(1, $2) AS g`,
      [organization.id, PRICE_BATCH_PRODUCTS],
    );
    return { organizationId: organization.id, key: issued.secret, keyId: issued.id };
  } finally {
    await pool.end();
  }
}

/**
 * Measures a scenario in two halves of the duration: the figure is the whole, and the spread between the halves
 * (|a - b| / mean) is this run's own noise, against which a change between two runs is judged.
 */
async function measure(port: number, scenario: Scenario): Promise<Measured> {
  const halves = [await load(port, scenario, duration / 2), await load(port, scenario, duration / 2)];
  const [a, b] = halves.map((half) => half.requests.average) as [number, number];
  return {
    scenario, requestsPerSecond: (a + b) / 2, spread: Math.abs(a - b) / ((a + b) / 2),
    p50: Math.max(...halves.map((half) => half.latency.p50)), p99: Math.max(...halves.map((half) => half.latency.p99)),
    non2xx: halves.reduce((total, half) => total + half.non2xx, 0),
  };
}

/** Walks the whole customers change feed page by page, as a partner's poller would; records/s of 3 walks. */
async function walkFeed(port: number, headers: Record<string, string>): Promise<number[]> {
  const walks: number[] = [];
  for (let walk = 0; walk < 3; walk += 1) {
    const started = performance.now();
    let records = 0;
    let cursor: string | null = null;
    do {
      const query = `updatedSince=2000-01-01T00:00:00.000Z&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/customers?${query}`, { headers });
      if (!response.ok) throw new Error(`feed walk: ${response.status} ${await response.text()}`);
      const page = await response.json() as { data: unknown[]; nextCursor: string | null };
      records += page.data.length;
      cursor = page.nextCursor;
    } while (cursor);
    walks.push(records / ((performance.now() - started) / 1000));
  }
  return walks;
}

function load(port: number, scenario: Scenario, seconds: number): Promise<autocannon.Result> {
  const headers = { ...scenario.headers, ...(scenario.create || scenario.body ? { 'content-type': 'application/json' } : {}) };
  return autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: scenario.connections ?? connections,
    duration: seconds,
    requests: [{
      method: scenario.method ?? 'GET',
      path: scenario.path,
      headers,
      ...(scenario.body ? { body: JSON.stringify(scenario.body) } : {}),
      ...(scenario.create
        ? {
            setupRequest: (request: autocannon.Request) => {
              createSequence += 1;
              const code = `UG${String(createSequence).padStart(7, '0')}`;
              return { ...request, headers: { ...headers, 'idempotency-key': `bench-${scenario.target}-${createSequence}` }, body: JSON.stringify({ outletCode: code, name: `Bench outlet ${createSequence}`, channel: 'retail' }) };
            },
          }
        : {}),
    }],
  });
}

function startProcess(entry: string, env: Record<string, string>, readyText: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', entry], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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


function pad(text: string, width: number): string {
  return text.padEnd(width);
}
