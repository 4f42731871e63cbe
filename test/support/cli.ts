// Runs the operator CLI for a test. runCli runs the command in-process through scripts/admin/run.ts (the same
// function the `admin` binary calls), with the test's environment and its own captured stdout, stderr and exit code:
// no Node start per command. runCliProcess runs the compiled binary as a child process (under `npm test` the run's
// bundle of scripts/admin/cli.ts, see entry.ts), for the few tests that prove the binary itself works.
import { spawn } from 'node:child_process';
import { runCli as runInProcess } from '../../scripts/admin/run.js';
import { entryArguments } from './entry.js';
import { TEST_SECRETS } from './secrets.js';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment a CLI run sees: this process's, the sandbox and the test secrets, then the test's own. */
function cliEnv(env: Record<string, string>): Record<string, string | undefined> {
  return { ...process.env, ENVIRONMENT: 'sandbox', LOG_LEVEL: 'info', ...TEST_SECRETS, ...env };
}

/** `stdin`: what the command reads on standard input (`--password-stdin`); none when left out. */
export function runCli(args: string[], env: Record<string, string>, options: { stdin?: string } = {}): Promise<CliRun> {
  return runInProcess(args, { env: cliEnv(env), stdin: options.stdin ?? '' });
}

/** The compiled `admin` binary as a child process: its exit code, stdout and stderr. */
export function runCliProcess(args: string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...entryArguments('scripts/admin/cli.ts'), ...args], {
      env: cliEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs a --json command that must succeed; its stdout must be one JSON document and nothing else. */
export async function runCliJson<T = any>(
  args: string[],
  env: Record<string, string>,
  options: { stdin?: string } = {},
): Promise<T> {
  const run = await runCli([...args, '--json'], env, options);
  if (run.code !== 0) throw new Error(`admin ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout) as T;
}
