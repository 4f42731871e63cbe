// `npm start` as its own process (one PID to signal): under `npm test` the run's compiled bundle of server/main.ts,
// as `npm start` runs dist/, unless `cwd` is another directory; `node --import tsx server/main.ts` otherwise (entry.ts), for tests that need the real start-up:
// embedded PostgreSQL, sandbox bootstrap, or a scratch copy of the repository.
import { spawn, type ChildProcess } from 'node:child_process';
import { entryArguments } from './entry.js';
import { TEST_SECRETS } from './secrets.js';

export interface ServerProcess {
  child: ChildProcess;
  /** Everything the process printed so far. */
  output: () => string;
  exited: Promise<number | null>;
  /** SIGTERM, then waits for the exit. */
  stop: () => Promise<void>;
}

/**
 * Starts server/main.ts under `cwd` and waits (at most `startTimeoutMs`, 60 s by default) for "API listening" (or
 * `readyLine`: "Worker running" for a worker) or the process's end. A start can take long on a machine busy with
 * other test files.
 */
export async function startServerProcess(
  env: Record<string, string>,
  options: { cwd?: string; args?: string[]; startTimeoutMs?: number; readyLine?: string } = {},
): Promise<ServerProcess> {
  const readyLine = options.readyLine ?? 'API listening';
  const child = spawn(process.execPath, [...entryArguments('server/main.ts', options.cwd), ...(options.args ?? [])], {
    cwd: options.cwd,
    env: { ...process.env, DATABASE_URL: '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => {
    output += c;
  });
  child.stderr!.on('data', (c: Buffer) => {
    output += c;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  for (
    const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
    !output.includes(readyLine) && child.exitCode === null && Date.now() < deadline;
  ) {
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    output: () => output,
    exited,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * A worker process (`--role worker`, with the simulators) on a test file's database, kept in `started` so the file
 * can kill what is left when it ends; a worker that did not start fails with its output.
 */
export async function startWorker(
  databaseUrl: string,
  dataDir: string,
  started: ServerProcess[],
): Promise<ServerProcess> {
  const child = await startServerProcess(
    {
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      SIMULATORS: 'true',
      SANDBOX_BOOTSTRAP: 'false',
      LOG_LEVEL: 'warn',
      ...TEST_SECRETS,
    },
    { args: ['--role', 'worker'], readyLine: 'Worker running', startTimeoutMs: 110_000 },
  );
  started.push(child);
  if (child.child.exitCode !== null) throw new Error(`the worker did not start:\n${child.output()}`);
  return child;
}
