// `npm run bench`: starts the service (production settings, its own embedded PostgreSQL) and bare baselines,
// each in its own process, drives each with autocannon one after the other, and prints requests/s, p50 and
// p99 with the ratios measured in this one run. The figures depend on the machine; the ratios are the result.
//   --duration S     seconds of measurement per scenario (default 10), after a 2 s warm-up
//   --connections N  concurrent connections (default 50)
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { startEmbeddedPostgres } from '../../server/platform/database/embedded-postgres.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const { values } = parseArgs({ options: { duration: { type: 'string', default: '10' }, connections: { type: 'string', default: '50' } } });
const duration = Number(values.duration);
const connections = Number(values.connections);

interface Target { name: string; start(port: number): Promise<ChildProcess> }
interface Scenario { name: string; target: string; path: string; method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string }
interface Measured { scenario: Scenario; requestsPerSecond: number; p50: number; p99: number; non2xx: number }

const scratch = mkdtempSync(join(tmpdir(), 'erp-bench-'));
chmodSync(scratch, 0o755);
const database = await startEmbeddedPostgres({ dataDir: join(scratch, 'postgres'), port: await freePort() });

const targets: Target[] = [
  { name: 'service', start: (port) => startProcess(join(root, 'server', 'main.ts'), { PORT: String(port), DATABASE_URL: database.url('postgres'), LOG_LEVEL: 'warn', NODE_ENV: 'production' }, 'API listening') },
  { name: 'bare express', start: (port) => startProcess(join(here, 'baselines', 'bare-express.ts'), { PORT: String(port) }, 'ready') },
  { name: 'bare node:http', start: (port) => startProcess(join(here, 'baselines', 'bare-node-http.ts'), { PORT: String(port) }, 'ready') },
];

const scenarios: Scenario[] = [
  { name: 'GET /health', target: 'service', path: '/api/v1/health' },
  { name: 'GET /health', target: 'bare express', path: '/api/v1/health' },
  { name: 'GET /health', target: 'bare node:http', path: '/api/v1/health' },
];

const results: Measured[] = [];
try {
  for (const target of targets) {
    const port = await freePort();
    const child = await target.start(port);
    try {
      for (const scenario of scenarios.filter((s) => s.target === target.name)) {
        await load(port, scenario, 2); // warm-up: JIT, connection pools
        results.push(await measure(port, scenario));
      }
    } finally {
      await stopProcess(child);
    }
  }
} finally {
  await database.stop();
  rmSync(scratch, { recursive: true, force: true });
}

console.log(`\n${connections} connections, ${duration} s per scenario, ${new Date().toISOString()}\n`);
console.log(pad('scenario', 34) + pad('requests/s', 12) + pad('p50 ms', 9) + pad('p99 ms', 9) + 'non-2xx');
for (const r of results) {
  console.log(pad(`${r.scenario.name} [${r.scenario.target}]`, 34) + pad(r.requestsPerSecond.toFixed(0), 12) + pad(String(r.p50), 9) + pad(String(r.p99), 9) + r.non2xx);
}
const rps = (name: string, target: string) => results.find((r) => r.scenario.name === name && r.scenario.target === target)?.requestsPerSecond ?? NaN;
console.log('\nratios (same run):');
console.log(`  GET /health, service / bare express    = ${(rps('GET /health', 'service') / rps('GET /health', 'bare express')).toFixed(2)}  (aim >= 0.8)`);
console.log(`  GET /health, service / bare node:http  = ${(rps('GET /health', 'service') / rps('GET /health', 'bare node:http')).toFixed(2)}`);
console.log(`  bare express / bare node:http          = ${(rps('GET /health', 'bare express') / rps('GET /health', 'bare node:http')).toFixed(2)}`);

async function measure(port: number, scenario: Scenario): Promise<Measured> {
  const result = await load(port, scenario, duration);
  return { scenario, requestsPerSecond: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx };
}

function load(port: number, scenario: Scenario, seconds: number): Promise<autocannon.Result> {
  return autocannon({
    url: `http://127.0.0.1:${port}${scenario.path}`,
    method: scenario.method ?? 'GET',
    headers: scenario.headers,
    body: scenario.body,
    connections,
    duration: seconds,
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

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function pad(text: string, width: number): string {
  return text.padEnd(width);
}
