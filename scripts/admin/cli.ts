// Entry of the operator CLI: `npm run --silent admin -- <command>`. Exit codes: 0 done, 1 failed (the message is on
// stderr), 2 usage error (bad or missing option, unknown command). With --json, stdout holds only the JSON.
import { CommanderError } from 'commander';
import { ConfigError, readEnvFile } from '../../server/platform/config.js';
import { ApiError } from '../../server/platform/errors/api-error.js';
import { EXIT_FAILURE, EXIT_USAGE, UsageError } from './errors.js';
import { buildProgram } from './program.js';

function messageOf(error: unknown): string {
  // The detail, and each field problem when the detail does not already say it (a stock line that is short).
  if (error instanceof ApiError) {
    const unsaid = (error.errors ?? []).filter((e) => !error.detail.includes(e.message));
    return unsaid.length === 0 ? error.detail : `${error.detail} (${unsaid.map((e) => `${e.field}: ${e.message}`).join('; ')})`;
  }
  if (error instanceof AggregateError && error.message === '') return error.errors.map(messageOf).join('; ');
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

function exitCodeFor(error: unknown): number {
  if (error instanceof CommanderError) {
    // commander has already written its message (or the help) to stderr/stdout.
    return ['commander.helpDisplayed', 'commander.version'].includes(error.code) ? 0 : EXIT_USAGE;
  }
  if (error instanceof UsageError) {
    process.stderr.write(`error: ${error.message}\n(add --help for usage)\n`);
    return EXIT_USAGE;
  }
  const message = error instanceof ConfigError ? error.message : messageOf(error);
  process.stderr.write(`error: ${message}\n`);
  return EXIT_FAILURE;
}

try {
  readEnvFile(); // the same optional .env that `npm start` reads, so both see one WEBHOOK_ALLOW_LOOPBACK, DATA_DIR, ...
  await buildProgram().parseAsync(process.argv);
} catch (error) {
  process.exitCode = exitCodeFor(error);
}
