// The first `npm start` takes 10 to 30 s (the embedded cluster, the schema, pg-boss's tables, the sandbox). On a
// terminal it says so before the wait (issue 19, part 8), so that it does not look like a hang; `script` gives the
// process a real terminal. The notice is absent from pipes (test/service/npm-start.test.ts).
import test from 'ava';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../scripts/lib/free-port.js';
import { entryArguments } from '../support/entry.js';

test('on a terminal, the first start of an empty DATA_DIR says what it is creating and how long it takes, before the wait', async (t) => {
  t.timeout(120_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'erp-first-start-'));
  chmodSync(dataDir, 0o755);
  const pidFile = join(dataDir, 'server.pid');
  const env = {
    ...process.env,
    DATABASE_URL: '',
    LOG_LEVEL: 'warn',
    DATA_DIR: dataDir,
    PORT: '0',
    EMBEDDED_POSTGRES_PORT: String(await freePort()),
  };
  // The server runs under a shell inside `script`, so that it can be stopped with SIGTERM (its graceful stop also
  // stops the embedded PostgreSQL) rather than by the terminal's hang-up.
  const command = [process.execPath, ...entryArguments('server/main.ts')]
    .map((word) => `'${word.replaceAll("'", `'\\''`)}'`)
    .join(' '); // npm start's bundle under npm test
  const inner = `${command} & echo $! > ${pidFile}; wait`;
  const child = spawn('script', ['-qefc', inner, '/dev/null'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c: Buffer) => {
    output += c;
  });
  child.stderr.on('data', (c: Buffer) => {
    output += c;
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  try {
    for (
      const deadline = Date.now() + 90_000;
      !output.includes('API listening') && child.exitCode === null && Date.now() < deadline;
    ) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const notice = `First start: creating the embedded PostgreSQL in ${dataDir}/postgres and the sandbox; this takes 10 to 30 seconds...`;
    t.true(output.includes(notice), output);
    t.true(output.indexOf(notice) < output.indexOf('Sandbox ready'), 'said before the wait, not after');
  } finally {
    try {
      process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGTERM');
    } catch {
      /* never started */
    }
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
});
