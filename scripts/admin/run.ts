// The operator CLI as a function: runCli(argv, options) parses and runs one command line in this process and
// resolves with its exit code and what it printed. The `admin` binary (cli.ts) is this function over the process's
// own streams; tests call it directly (a child process per command cost ~0.4 s of Node start-up each). Exit codes:
// 0 done, 1 failed (the message is on stderr), 2 usage error (bad or missing option, unknown command).
//
// Nothing process-wide is touched: output goes to the run's writers, the configuration is read from the run's
// environment (options.env, process.env by default), the exit code is the run's own (process.exitCode is left
// alone), and every command closes the database pools and the job system it opened before it returns.
import { CommanderError } from 'commander';
import { ConfigError } from '../../server/platform/config.js';
import { ApiError } from '../../server/platform/errors/api-error.js';
import { EXIT_FAILURE, EXIT_USAGE, UsageError } from './errors.js';
import { io, withIo, type Env } from './io.js';
import { buildProgram } from './program.js';

export interface RunOptions {
  /** Receives stdout as it is written (besides the returned copy). */
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
  /** The environment the command reads (DATABASE_URL, DATA_DIR, secrets, ...); process.env when left out. */
  env?: Env;
  /**
   * What the command reads on standard input (`console owner|password --password-stdin`): the text itself, or a
   * stream; this process's stdin when left out (the binary's). Tests give the text: no child process, no pipe.
   */
  stdin?: string | Buffer | AsyncIterable<Buffer | string>;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `admin <argv...>` (argv without the node and script names). Never throws for a command's failure. */
export async function runCli(argv: readonly string[], options: RunOptions = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const run = {
    stdout: (text: string) => {
      stdout += text;
      options.stdout?.(text);
    },
    stderr: (text: string) => {
      stderr += text;
      options.stderr?.(text);
    },
    env: options.env ?? process.env,
    exitCode: 0,
    stdin: () => inputOf(options.stdin),
  };
  await withIo(run, async () => {
    try {
      await buildProgram().parseAsync([...argv], { from: 'user' });
    } catch (error) {
      run.exitCode = exitCodeFor(error);
    }
  });
  return { code: run.exitCode, stdout, stderr };
}

function inputOf(given: RunOptions['stdin']): AsyncIterable<Buffer | string> {
  if (given === undefined) return process.stdin;
  if (typeof given === 'string' || Buffer.isBuffer(given))
    return (async function* once() {
      yield given;
    })();
  return given;
}

function messageOf(error: unknown): string {
  // The detail, and each field problem when the detail does not already say it (a stock line that is short).
  if (error instanceof ApiError) {
    const unsaid = (error.errors ?? []).filter((e) => !error.detail.includes(e.message));
    return unsaid.length === 0
      ? error.detail
      : `${error.detail} (${unsaid.map((e) => `${e.field}: ${e.message}`).join('; ')})`;
  }
  if (error instanceof AggregateError && error.message === '') return error.errors.map(messageOf).join('; ');
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

function exitCodeFor(error: unknown): number {
  if (error instanceof CommanderError) {
    // commander has already written its message (or the help) to the run's stderr/stdout (configureOutput).
    return ['commander.helpDisplayed', 'commander.version'].includes(error.code) ? 0 : EXIT_USAGE;
  }
  if (error instanceof UsageError) {
    io().stderr(`error: ${error.message}\n(add --help for usage)\n`);
    return EXIT_USAGE;
  }
  const message = error instanceof ConfigError ? error.message : messageOf(error);
  io().stderr(`error: ${message}\n`);
  return EXIT_FAILURE;
}
