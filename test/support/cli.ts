// Runs the operator CLI as a user would: a child process, its exit code, stdout and stderr (under `npm test` from the
// run's bundle of scripts/admin/cli.ts, see entry.ts).
import { spawn } from 'node:child_process';
import { entryArguments } from './entry.js';
import { TEST_SECRETS } from './secrets.js';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...entryArguments('scripts/admin/cli.ts'), ...args], {
      env: { ...process.env, ENVIRONMENT: 'sandbox', LOG_LEVEL: 'info', ...TEST_SECRETS, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk; });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs a --json command that must succeed; its stdout must be one JSON document and nothing else. */
export async function runCliJson<T = any>(args: string[], env: Record<string, string>): Promise<T> {
  const run = await runCli([...args, '--json'], env);
  if (run.code !== 0) throw new Error(`admin ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout) as T;
}
