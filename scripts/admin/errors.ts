// How the CLI fails: a UsageError is a mistake in the command line (exit 2); anything else thrown by a command is
// a failure to do it (exit 1). Option values are checked before the database is opened, so a usage error changes
// nothing.
export class UsageError extends Error {
  override name = 'UsageError';
}

export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
