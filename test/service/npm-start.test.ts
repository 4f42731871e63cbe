import test from 'ava';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function isAlive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

test('npm start with no DATABASE_URL runs an embedded PostgreSQL, answers /health, and on SIGTERM exits 0 having stopped the database', async (t) => {
  t.timeout(90_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'erp-start-'));
  chmodSync(dataDir, 0o755);
  const [port, pgPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    env: { ...process.env, DATABASE_URL: '', DATA_DIR: dataDir, PORT: String(port), EMBEDDED_POSTGRES_PORT: String(pgPort), LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => { output += c; });
  child.stderr.on('data', (c: Buffer) => { output += c; });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    const deadline = Date.now() + 60_000;
    while (!output.includes('API listening') && Date.now() < deadline) {
      if (child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    t.true(output.includes('API listening'), output);
    const health = await fetch(`http://127.0.0.1:${port}/api/v1/health`).then((r) => r.json());
    t.like(health, { status: 'ok', version: '1.13.0', environment: 'sandbox' });

    const postgresPid = Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
    t.true(isAlive(postgresPid), 'the embedded PostgreSQL runs');
    child.kill('SIGTERM');
    t.is(await exited, 0, output);
    t.false(isAlive(postgresPid), 'the embedded PostgreSQL was stopped');
  } finally {
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});
