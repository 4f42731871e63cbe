// period close | reopen: accounting periods. The organisation's books are closed through a date; a document dated
// on or before it, and a cancel, void or reverse of one, is refused with 422 period_closed
// (server/domain/periods.ts). `close` moves the date forward (never back: that is `reopen`); `reopen` moves it back
// to an earlier date, or clears it. The date is checked before the database is opened (exit 2, nothing changed).
import { InvalidArgumentError, type Command } from 'commander';
import { closePeriod, reopenPeriod, booksClosedThrough } from '../../../server/domain/periods.js';
import { getOrganization } from '../../../server/platform/access/organizations.js';
import { inTransaction } from '../../../server/platform/database/transaction.js';
import { withDatabase } from '../database.js';
import { printJson, printText } from '../output.js';

function parseDate(raw: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(raw) || new Date(`${raw}T00:00:00Z`).toISOString().slice(0, 10) !== raw) {
    throw new InvalidArgumentError('Expected a calendar date YYYY-MM-DD.');
  }
  return raw;
}

function report(
  json: boolean | undefined,
  organizationId: string,
  previous: string | null,
  through: string | null,
): void {
  if (json) printJson({ organizationId, booksClosedThrough: through, previous });
  else
    printText(
      through === null
        ? `Books of ${organizationId} are open: no period is closed (they were closed through ${previous ?? 'nothing'}).`
        : `Books of ${organizationId} are closed through ${through} (were ${previous === null ? 'open' : `closed through ${previous}`}).`,
    );
}

export function registerPeriodCommands(program: Command): void {
  const period = program
    .command('period')
    .description('accounting periods: close the books through a date, or reopen them');

  period
    .command('close')
    .description(
      'close the books through a date (inclusive): documents dated on or before it, and their cancels, voids and reversals, are refused with 422 period_closed',
    )
    .requiredOption('--org <id>', 'organisation id')
    .requiredOption('--through <date>', 'the last closed day, YYYY-MM-DD', parseDate)
    .option('--json', 'print {"organizationId", "booksClosedThrough", "previous"}')
    .action(async (options: { org: string; through: string; json?: boolean }) => {
      const previous = await withDatabase(async (db) => {
        await getOrganization(db, options.org);
        return inTransaction(db, async (tx) => {
          const current = await booksClosedThrough(tx, options.org);
          if (current !== null && options.through < current) {
            throw new Error(
              `The books are closed through ${current}; closing through ${options.through} would reopen days. Use \`admin period reopen --through ${options.through}\`.`,
            );
          }
          return (await closePeriod(tx, options.org, options.through)).previous;
        });
      });
      report(options.json, options.org, previous, options.through);
    });

  period
    .command('reopen')
    .description(
      'reopen the books: closed through an earlier date with --through, or no period closed at all without it',
    )
    .requiredOption('--org <id>', 'organisation id')
    .option('--through <date>', 'the new last closed day, YYYY-MM-DD, before the current one', parseDate)
    .option('--json', 'print {"organizationId", "booksClosedThrough", "previous"}')
    .action(async (options: { org: string; through?: string; json?: boolean }) => {
      const through = options.through ?? null;
      const previous = await withDatabase(async (db) => {
        await getOrganization(db, options.org);
        return inTransaction(db, async (tx) => {
          const current = await booksClosedThrough(tx, options.org);
          if (current === null) throw new Error('No period is closed: there is nothing to reopen.');
          if (through !== null && through >= current) {
            throw new Error(
              `The books are closed through ${current}; reopening through ${through} would close days. Use \`admin period close --through ${through}\`.`,
            );
          }
          return (await reopenPeriod(tx, options.org, through)).previous;
        });
      });
      report(options.json, options.org, previous, through);
    });
}
