// log: an organisation's API log, newest first.
import type { Command } from 'commander';
import { API_LOG_DEFAULT_LIMIT, API_LOG_MAX_LIMIT, readApiLog } from '../../../server/platform/http/api-log-query.js';
import { withDatabase } from '../database.js';
import { integerIn } from '../options.js';
import { getOrganization } from '../../../server/platform/access/organizations.js';
import { listFormatOptions, printList, printText } from '../output.js';

export function registerLogCommand(program: Command): void {
  program
    .command('log')
    .description("an organisation's API log, newest first")
    .requiredOption('--org <org-id>', 'the organisation')
    .option('--status <code>', 'only calls answered with this HTTP status', integerIn(100, 599))
    .option('--request-id <id>', 'only the call with this X-Request-Id')
    .option(
      '--limit <n>',
      `at most this many entries (1 to ${API_LOG_MAX_LIMIT})`,
      integerIn(1, API_LOG_MAX_LIMIT),
      API_LOG_DEFAULT_LIMIT,
    )
    .option('--bodies', 'include the logged request and response bodies (sandbox calls only; personal fields removed)');
  listFormatOptions(program.commands.at(-1)!, 'print a JSON array').action(
    async (options: {
      org: string;
      status?: number;
      requestId?: string;
      limit: number;
      bodies?: boolean;
      json?: boolean;
      csv?: boolean;
    }) => {
      const entries = await withDatabase(async (db) => {
        await getOrganization(db, options.org);
        return readApiLog(db, options.org, {
          status: options.status,
          requestId: options.requestId,
          limit: options.limit,
          includeBodies: options.bodies === true,
        });
      });
      printList(
        options,
        entries,
        [
          { header: 'TIME', value: (e) => e.time },
          { header: 'STATUS', value: (e) => e.status },
          { header: 'METHOD', value: (e) => e.method },
          { header: 'MS', value: (e) => e.durationMs.toFixed(1) },
          { header: 'KEY', value: (e) => e.keyPrefix },
          { header: 'REQUEST ID', value: (e) => e.requestId },
          { header: 'PATH', value: (e) => e.path },
          ...(options.bodies && options.csv
            ? [
                { header: 'REQUEST BODY', value: (e: (typeof entries)[number]) => e.requestBody ?? '' },
                { header: 'RESPONSE BODY', value: (e: (typeof entries)[number]) => e.responseBody ?? '' },
              ]
            : []),
        ],
        { empty: 'No matching API log entries.' },
      );
      if (options.bodies && !options.json && !options.csv) {
        for (const e of entries)
          printText(
            '',
            `${e.requestId} request:  ${e.requestBody ?? '-'}`,
            `${e.requestId} response: ${e.responseBody ?? '-'}`,
          );
      }
    },
  );
}
