// Entry of the operator CLI: `npm run --silent admin -- <command>`. Exit codes: 0 done, 1 failed (the message is on
// stderr), 2 usage error (bad or missing option, unknown command). With --json, stdout holds only the JSON.
import { CommanderError } from 'commander';
import { ConfigError, readEnvFile } from '../../server/platform/config.js';
import { ApiError } from '../../server/platform/errors/api-error.js';
import { EXIT_FAILURE, EXIT_USAGE, UsageError } from './errors.js';
import { buildProgram } from './program.js';

function messageOf(error: unknown): string {
  // A refused posting names each bad field (errors[]); the operator needs those as much as a REST caller does.
  if (error instanceof ApiError) return error.errors?.length ? `${error.detail} ${error.errors.map((e) => `[${e.field}: ${e.message}]`).join(' ')}` : error.detail;
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
