// postings [list] | retry: where documents stand in the accounting and fiscal systems, and a retry of what failed.
import type { Command } from 'commander';
import { getOrganization } from '../../../server/platform/access/organizations.js';
import { listPostings, retryPostings, type PostingView } from '../../../server/modules/postings/operations.js';
import { withDatabase } from '../database.js';
import { listFormatOptions, printJson, printList, printText } from '../output.js';

const STATUSES = ['pending', 'posted', 'failed', 'cancelled'];
const line = (p: PostingView) =>
  `${p.documentNumber}\t${p.documentId}\t${p.system}${p.operation === 'reverse' ? ' (void)' : ''}\t${p.status}\t${p.attempts}\t${p.externalType ?? ''} ${p.externalRef ?? ''}\t${p.reason ?? ''}`;

export function registerPostingsCommands(program: Command): void {
  const postings = program
    .command('postings')
    .description('documents and their postings to the accounting and fiscal systems');

  listFormatOptions(
    postings
      .command('list', { isDefault: true })
      .description("an organisation's postings, newest change first (at most 100)")
      .requiredOption('--org <id>', 'organisation id')
      .option('--status <status>', STATUSES.join(', ')),
    'print {"postings": [...]}',
  ).action(async (options: { org: string; status?: string; json?: boolean; csv?: boolean }) => {
    if (options.status !== undefined && !STATUSES.includes(options.status))
      throw new Error(`--status must be one of ${STATUSES.join(', ')}.`);
    const rows = await withDatabase(async (db) => {
      await getOrganization(db, options.org);
      return listPostings(db, options.org, { status: options.status });
    });
    printList(
      options,
      rows,
      [
        { header: 'NUMBER', value: (p) => p.documentNumber },
        { header: 'DOCUMENT', value: (p) => p.documentId },
        { header: 'SYSTEM', value: (p) => `${p.system}${p.operation === 'reverse' ? ' (void)' : ''}` },
        { header: 'STATUS', value: (p) => p.status },
        { header: 'ATTEMPTS', value: (p) => p.attempts },
        { header: 'EXTERNAL', value: (p) => [p.externalType, p.externalRef].filter(Boolean).join(' ') },
        { header: 'REASON', value: (p) => p.reason ?? '' },
      ],
      { empty: 'No postings.', json: (postings) => ({ postings }) },
    );
  });

  postings
    .command('retry')
    .description('queue again the failed postings of a document (its id) or one posting (its xpo_ id)')
    .argument('<id>', 'a document id (inv_, pmt_, cn_) or a posting id (xpo_)')
    .requiredOption('--org <id>', 'organisation id')
    .option('--json', 'print {"retried": [...]}')
    .action(async (id: string, options: { org: string; json?: boolean }) => {
      const retried = await withDatabase(async (db) => {
        await getOrganization(db, options.org);
        return retryPostings(db, options.org, id);
      });
      if (retried.length === 0) throw new Error(`Nothing to retry: ${id} has no failed posting in ${options.org}.`);
      if (options.json) printJson({ retried });
      else for (const row of retried) printText(`queued again: ${line(row)}`);
    });
}
