// `npm run contract` as a user runs it, for the contract tests: the compiled command as a child process, its output
// kept whole and its PASS/FAIL/SKIP lines apart.
import { spawn } from 'node:child_process';
import { entryArguments } from './entry.js';

export interface ContractRun {
  code: number | null;
  stdout: string;
  stderr: string;
  lines: string[];
}

export function runContract(args: string[]): Promise<ContractRun> {
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
    child.on('close', (code) =>
      resolve({ code, stdout, stderr, lines: stdout.split('\n').filter((l) => /^(PASS|FAIL|SKIP) {2}/.test(l)) }),
    );
  });
}
