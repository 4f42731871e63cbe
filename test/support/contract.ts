// `npm run contract` for the contract tests, its output kept whole and its PASS/FAIL/SKIP lines apart: the command run
// in this process (scripts/contract/command.ts, what the binary runs), or, for the few runs that prove the binary
// itself, the compiled command as a child process, as a user runs it. A child process costs about half a CPU-second
// to start; the suite ran some twenty (decision 0055).
import { spawn } from 'node:child_process';
import { runContractCommand } from '../../scripts/contract/command.js';
import { entryArguments } from './entry.js';

export interface ContractRun {
  code: number | null;
  stdout: string;
  stderr: string;
  lines: string[];
}

const resultLines = (stdout: string) => stdout.split('\n').filter((l) => /^(PASS|FAIL|SKIP) {2}/.test(l));

/** The command in this process, as the binary runs it (argv as process.argv: node, script, arguments). */
export async function runContract(args: string[]): Promise<ContractRun> {
  let stdout = '';
  let stderr = '';
  const code = await runContractCommand([process.execPath, 'scripts/contract/run.ts', ...args], {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr, lines: resultLines(stdout) };
}

/** The compiled binary as a child process: its exit code, and its output on its own streams. */
export function runContractBinary(args: string[]): Promise<ContractRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...entryArguments('scripts/contract/run.ts'), ...args], {
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
    child.on('close', (code) => resolve({ code, stdout, stderr, lines: resultLines(stdout) }));
  });
}
