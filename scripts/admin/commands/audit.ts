// audit: the ledger checker. Recomputes every balance from the ledger rows and lists each difference; exit 1 when
// there is any, so that scripts and CI can rely on the exit code.
import type { Command } from 'commander';
import { getOrganization } from '../../../server/platform/access/organizations.js';
import { auditCustomerAccount } from '../../../server/modules/customer-account/audit.js';
import { auditStock } from '../../../server/modules/stock/audit.js';
import { withDatabase } from '../database.js';
import { failWithoutError } from '../io.js';
import { listFormatOptions, printList } from '../output.js';

export function registerAuditCommand(program: Command): void {
  program
    .command('audit')
    .description(
      "recompute the organisation's balances (stock levels and valuations, customers' empties, invoice and customer balances) from its ledgers; exit 1 listing each difference",
    )
    .requiredOption('--org <id>', 'organisation id');
  listFormatOptions(program.commands.at(-1)!, 'print {"differences": [...]}').action(
    async (options: { org: string; json?: boolean; csv?: boolean }) => {
      const differences = await withDatabase(async (db) => {
        await getOrganization(db, options.org);
        return [...(await auditStock(db, options.org)), ...(await auditCustomerAccount(db, options.org))];
      });
      printList(
        options,
        differences,
        [
          { header: 'KIND', value: (d) => d.kind },
          { header: 'SUBJECT', value: (d) => d.subject },
          { header: 'LEDGER SAYS', value: (d) => d.expected },
          { header: 'KEPT', value: (d) => d.actual },
        ],
        { empty: 'no differences: every balance agrees with its ledger', json: (rows) => ({ differences: rows }) },
      );
      if (differences.length > 0) failWithoutError();
    },
  );
}
