// The modules where a silent mistake costs money or security, each with the fast tests that hold it. A module is
// mutated alone and every mutant is run against its own tests only, so a survivor names a rule no test holds.
// Pure unit tests (test/unit/, no database) run through ava directly; a module whose rules live in SQL also runs
// its database tests through `npm test` (which starts a throwaway Postgres), and is slower for it.

export interface MutationModule {
  /** The name given to `npm run mutate -- <name>`. */
  name: string;
  /** The source file mutated. */
  file: string;
  /** The test files run against each mutant. */
  tests: string[];
  /** Whether the tests need the database (then they run through `npm test`). */
  database?: boolean;
}

export const MUTATION_MODULES: MutationModule[] = [
  { name: 'money', file: 'server/domain/money.ts', tests: ['test/unit/money.test.ts'] },
  { name: 'cursor', file: 'server/platform/lists/cursor.ts', tests: ['test/unit/cursor.test.ts'] },
  { name: 'destination', file: 'server/platform/webhooks/destination.ts', tests: ['test/unit/destination.test.ts'] },
  { name: 'rate-limit', file: 'server/platform/access/rate-limit.ts', tests: ['test/unit/rate-limit.test.ts', 'test/access/rate-limit-bucket.test.ts', 'test/access/rate-budget.test.ts'], database: true },
  { name: 'sdk-webhooks', file: 'client-sdk/src/webhooks.ts', tests: ['test/unit/sdk-webhooks.test.ts'] },
  { name: 'sdk-retry', file: 'client-sdk/src/retry.ts', tests: ['test/unit/sdk-retry.test.ts'] },
  { name: 'page', file: 'server/platform/lists/page.ts', tests: ['test/unit/page.test.ts'] },
  { name: 'stock-ledger', file: 'server/modules/stock/ledger.ts', tests: ['test/domain/stock-ledger.test.ts', 'test/domain/empties.test.ts'], database: true },
  { name: 'empties', file: 'server/modules/stock/empties.ts', tests: ['test/domain/empties.test.ts', 'test/admin/audit-cli.test.ts'], database: true },
  { name: 'customer-account', file: 'server/modules/customer-account/ledger.ts', tests: ['test/domain/payments.test.ts', 'test/domain/invoices.test.ts'], database: true },
  { name: 'postings', file: 'server/modules/postings/queue.ts', tests: ['test/domain/postings.test.ts'], database: true },
  { name: 'dms-canonical', file: 'server/modules/dms/canonical.ts', tests: ['test/unit/dms-canonical.test.ts'] },
  { name: 'dms-refusals', file: 'server/modules/dms/refusals.ts', tests: ['test/unit/dms-refusals.test.ts'] },
];

/** The command Stryker's command runner runs for each mutant (in its sandbox, where paths are the same). */
export function testCommand(module: MutationModule): string {
  const files = module.tests.join(' ');
  return module.database ? `node --import tsx scripts/test.ts ${files}` : `node node_modules/ava/entrypoints/cli.mjs --fail-fast ${files}`;
}
