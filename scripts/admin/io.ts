// Where a command's output goes and which environment it reads. A real `admin` process writes to its own stdout and
// stderr and reads process.env; runCli (run.ts) runs a command in-process (tests, other tools) with its own writers,
// its own environment and its own exit code. The run is carried by AsyncLocalStorage, not by module variables, so
// that two runs at the same time in one process (ava runs a file's tests concurrently) never mix their output.
import { AsyncLocalStorage } from 'node:async_hooks';

export type Env = Record<string, string | undefined>;

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Env;
  /** Set by a command that finishes but must exit non-zero (audit differences, no live worker). */
  exitCode: number;
  /** Standard input, for the commands that read it (`--password-stdin`); this process's own when left out. */
  stdin?: () => AsyncIterable<Buffer | string>;
}

const current = new AsyncLocalStorage<CliIo>();

const processIo: CliIo = {
  stdout: (text) => {
    process.stdout.write(text);
  },
  stderr: (text) => {
    process.stderr.write(text);
  },
  get env() {
    return process.env;
  },
  get exitCode() {
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  },
  set exitCode(code: number) {
    process.exitCode = code;
  },
  stdin: () => process.stdin,
};

/** The run under way: runCli's when inside one, else this process's own streams and environment. */
export function io(): CliIo {
  return current.getStore() ?? processIo;
}

export function withIo<T>(run: CliIo, body: () => Promise<T>): Promise<T> {
  return current.run(run, body);
}

/** The run's standard input, read to its end as UTF-8 text. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of (io().stdin ?? processIo.stdin!)())
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** A command that completed but reports a failure by its exit code (1) rather than by an error. */
export function failWithoutError(): void {
  io().exitCode = 1;
}
