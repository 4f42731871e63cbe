// Cold start of an API process, sources under tsx against the compiled dist/ (docs/decisions/0028-the-service-runs-compiled.md):
// `node --import tsx server/main.ts --role api` and `node --enable-source-maps dist/server-main.mjs --role api`
// (run `npm run build` first), started in turn on one migrated database of an embedded PostgreSQL of their own.
// Per run: milliseconds from the spawn to the first 200 of GET /api/v1/health (polled every 10 ms), and the
// CPU it used until then (user + system, /proc/<pid>/stat), and the process's resident memory (VmRSS and VmHWM of /proc/<pid>/status) 2 s after that answer. Prints each run and the
// medians.   node --import tsx scripts/bench/cold-start.ts [--runs N]   (default 7 per variant)
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../server/platform/database/embedded-postgres.js';
import { applyMigrations } from '../../server/platform/database/migrations.js';
import { installJobsSchema } from '../../server/platform/jobs/jobs.js';
import { freePort } from '../lib/free-port.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' } } });
const runs = Number(values.runs);
if (!existsSync(join(root, 'dist', 'server-main.mjs')))
  throw new Error('no dist/server-main.mjs: run `npm run build` first');

const variants = {
  tsx: ['--import', 'tsx', 'server/main.ts', '--role', 'api'],
  compiled: ['--enable-source-maps', 'dist/server-main.mjs', '--role', 'api'],
} as const;
type Variant = keyof typeof variants;
interface Run {
  ms: number;
  cpuMs: number;
  rssMiB: number;
  hwmMiB: number;
}

const scratch = mkdtempSync(join(tmpdir(), 'erp-cold-start-'));
chmodSync(scratch, 0o755);
const embedded = await startEmbeddedPostgres({
  dataDir: join(scratch, 'postgres'),
  port: await freePort(),
  ephemeral: true,
});
try {
  const url = embedded.url('postgres');
  const pool = new pg.Pool({ connectionString: url });
  await applyMigrations(pool);
  await pool.end();
  await installJobsSchema(url);

  const results: Record<Variant, Run[]> = { tsx: [], compiled: [] };
  for (let i = -1; i < runs; i += 1) {
    // run -1 warms the disk cache and tsx's transpile cache; not counted
    for (const variant of Object.keys(variants) as Variant[]) {
      const run = await once(variant, url);
      if (i >= 0) {
        results[variant].push(run);
        console.log(
          `${variant.padEnd(8)} run ${i + 1}: ${run.ms.toFixed(0)} ms to /health 200 (CPU ${run.cpuMs} ms), RSS ${run.rssMiB.toFixed(1)} MiB (peak ${run.hwmMiB.toFixed(1)})`,
        );
      }
    }
  }
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  console.log(`\nmedians of ${runs} runs each:`);
  for (const variant of Object.keys(variants) as Variant[]) {
    const r = results[variant];
    console.log(
      `${variant.padEnd(8)} ${median(r.map((x) => x.ms)).toFixed(0)} ms (min ${Math.min(...r.map((x) => x.ms)).toFixed(0)}, max ${Math.max(...r.map((x) => x.ms)).toFixed(0)}), CPU ${median(r.map((x) => x.cpuMs)).toFixed(0)} ms, RSS ${median(r.map((x) => x.rssMiB)).toFixed(1)} MiB, peak ${median(r.map((x) => x.hwmMiB)).toFixed(1)} MiB`,
    );
  }
} finally {
  await embedded.stop();
  rmSync(scratch, { recursive: true, force: true });
}

async function once(variant: Variant, databaseUrl: string): Promise<Run> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [...variants[variant]], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      SANDBOX_BOOTSTRAP: 'false',
      SIMULATORS: 'false',
      LOG_LEVEL: 'warn',
      DATA_DIR: scratch,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr.on('data', (c: Buffer) => {
    errors += c;
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${variant} ended before answering:\n${errors}`);
      const status = await fetch(`http://127.0.0.1:${port}/api/v1/health`).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const ms = performance.now() - started;
    const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    const cpuMs = (Number(stat[11]) + Number(stat[12])) * 10; // utime + stime, in ticks of 10 ms
    await new Promise((r) => setTimeout(r, 2_000));
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)![1]);
    return { ms, cpuMs, rssMiB: kib('VmRSS') / 1024, hwmMiB: kib('VmHWM') / 1024 };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}
