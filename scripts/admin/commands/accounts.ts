// accounts set | show: the organisation's accounting mapping (cash, default sales and promotions expense accounts by
// the accounting system's names, and the vendor of each supplier). QuickBooks postings use it; DMS documents that
// need a missing one are R03.
import { InvalidArgumentError, type Command } from 'commander';
import { getAccounts, setAccounts, type AccountMapping } from '../../../server/platform/access/accounts.js';
import { withDatabase } from '../database.js';
import { UsageError } from '../errors.js';
import { fields, printJson, printText } from '../output.js';

/** `CODE=Vendor name`, repeatable; `CODE=` removes the supplier's vendor. */
function collectVendor(raw: string, previous: Record<string, string | null> = {}): Record<string, string | null> {
  const at = raw.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError('Expected SUPPLIER_CODE=Vendor name (SUPPLIER_CODE= removes it).');
  const name = raw.slice(at + 1).trim();
  return { ...previous, [raw.slice(0, at).trim()]: name === '' ? null : name };
}

function describe(organizationId: string, mapping: AccountMapping): string[] {
  const vendors = Object.entries(mapping.vendors);
  return [
    `Accounts of ${organizationId}`,
    ...fields([
      ['cash', mapping.cashAccount ?? 'not set'],
      ['sales', mapping.salesAccount ?? 'not set'],
      ['promotions expense', mapping.promotionsExpenseAccount ?? 'not set'],
      ['vendors', vendors.length === 0 ? 'none' : vendors.map(([code, name]) => `${code}=${name}`).join(', ')],
    ]),
  ];
}

export function registerAccountsCommands(program: Command): void {
  const accounts = program
    .command('accounts')
    .description("the organisation's accounts and vendors in the accounting system: set, show");

  accounts
    .command('set')
    .description('map accounts and vendors (the options given change; "" unsets an account)')
    .requiredOption('--org <org-id>', 'the organisation')
    .option('--cash <account>', "the cash account (settlements' cash on hand, cash receipts)")
    .option('--sales <account>', 'the default sales (income) account')
    .option('--promotions <account>', 'the promotions expense account')
    .option('--vendor <code=name>', 'the vendor of a supplier code (repeatable; CODE= removes it)', collectVendor)
    .option('--json', 'print the mapping as JSON')
    .action(
      async (options: {
        org: string;
        cash?: string;
        sales?: string;
        promotions?: string;
        vendor?: Record<string, string | null>;
        json?: boolean;
      }) => {
        if ([options.cash, options.sales, options.promotions, options.vendor].every((value) => value === undefined))
          throw new UsageError('nothing to set: give --cash, --sales, --promotions and/or --vendor');
        const unset = (value: string | undefined) =>
          value === undefined ? undefined : value.trim() === '' ? null : value;
        const mapping = await withDatabase((db) =>
          setAccounts(db, options.org, {
            cashAccount: unset(options.cash),
            salesAccount: unset(options.sales),
            promotionsExpenseAccount: unset(options.promotions),
            vendors: options.vendor,
          }),
        );
        if (options.json) printJson(mapping);
        else printText(...describe(options.org, mapping));
      },
    );

  accounts
    .command('show')
    .description('show the mapping')
    .requiredOption('--org <org-id>', 'the organisation')
    .option('--json', 'print the mapping as JSON')
    .action(async (options: { org: string; json?: boolean }) => {
      const mapping = await withDatabase((db) => getAccounts(db, options.org));
      if (options.json) printJson(mapping);
      else printText(...describe(options.org, mapping));
    });
}
