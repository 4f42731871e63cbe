// The modules where a silent mistake costs money or security, each with the fast tests that hold it. A module is
// mutated alone and every mutant is run against its own tests only, so a survivor names a rule no test holds.
// Pure unit tests (test/unit/, no database) run compiled, once per sandbox (scripts/mutate/unit-tests.mjs); a module
// whose rules live in SQL also runs its database tests through `npm test` (which starts a throwaway Postgres), and
// is slower for it. Its unit tests run first and its database tests only when they pass: a mutant the unit tests
// kill costs a second, not a database. A module may be narrowed to line ranges of its file (the ledger or state
// machine proper, not the reads and documents around it), so that a run ends in minutes.

export interface MutationModule {
  /** The name given to `npm run mutate -- <name>`. */
  name: string;
  /** The source file mutated. */
  file: string;
  /** Only these line ranges of the file (`first-last`), when not all of it. */
  lines?: string[];
  /** The test files run against each mutant. */
  tests: string[];
  /** Whether some of its tests need the database (those outside test/unit/, run through `npm test`). */
  database?: boolean;
}

export const MUTATION_MODULES: MutationModule[] = [
  { name: 'money', file: 'server/domain/money.ts', tests: ['test/unit/money.test.ts'] },
  { name: 'cursor', file: 'server/platform/lists/cursor.ts', tests: ['test/unit/cursor.test.ts'] },
  { name: 'destination', file: 'server/platform/webhooks/destination.ts', tests: ['test/unit/destination.test.ts'] },
  {
    name: 'rate-limit',
    file: 'server/platform/access/rate-limit.ts',
    tests: ['test/unit/rate-limit.test.ts', 'test/access/rate-limit-bucket.test.ts', 'test/access/rate-budget.test.ts'],
    database: true,
  },
  { name: 'sdk-webhooks', file: 'client-sdk/src/webhooks.ts', tests: ['test/unit/sdk-webhooks.test.ts'] },
  { name: 'sdk-retry', file: 'client-sdk/src/retry.ts', tests: ['test/unit/sdk-retry.test.ts'] },
  { name: 'page', file: 'server/platform/lists/page.ts', tests: ['test/unit/page.test.ts'] },
  // The ledger proper: locks, plan, write and its invariants (not heldAt, a read).
  {
    name: 'stock-ledger',
    file: 'server/modules/stock/ledger.ts',
    lines: ['17-363'],
    tests: ['test/unit/stock-ledger-plan.test.ts', 'test/domain/stock-ledger.test.ts', 'test/domain/empties.test.ts'],
    database: true,
  },
  // The ledger proper: directions, invariants, plan, write and locks (not the supplier and adjustment documents).
  {
    name: 'empties',
    file: 'server/modules/stock/empties.ts',
    lines: ['45-200'],
    tests: ['test/unit/empties-plan.test.ts', 'test/domain/empties.test.ts'],
    database: true,
  },
  {
    name: 'customer-account',
    file: 'server/modules/customer-account/ledger.ts',
    tests: ['test/domain/payments.test.ts', 'test/domain/invoices.test.ts'],
    database: true,
  },
  {
    name: 'postings',
    file: 'server/modules/postings/queue.ts',
    tests: ['test/domain/postings.test.ts'],
    database: true,
  },
  { name: 'dms-canonical', file: 'server/modules/dms/canonical.ts', tests: ['test/unit/dms-canonical.test.ts'] },
  { name: 'dms-refusals', file: 'server/modules/dms/refusals.ts', tests: ['test/unit/dms-refusals.test.ts'] },
  // The DMS flag's transitions: the flag as the spec shows it per state, and the writers of a change (not the reads).
  {
    name: 'dms-flags',
    file: 'server/modules/dms/flags.ts',
    lines: ['37-180'],
    tests: ['test/unit/dms-flags.test.ts', 'test/dms/flags.test.ts'],
    database: true,
  },
];

/** The command Stryker's command runner runs for each mutant (in its sandbox, where paths are the same). */
export function testCommand(module: MutationModule): string {
  const unit = module.tests.filter((file) => file.startsWith('test/unit/'));
  const database = module.tests.filter((file) => !file.startsWith('test/unit/'));
  return [
    ...(unit.length > 0 ? [`node scripts/mutate/unit-tests.mjs ${unit.join(' ')}`] : []),
    ...(database.length > 0 ? [`node --import tsx scripts/test.ts ${database.join(' ')}`] : []),
  ].join(' && ');
}

/** What Stryker mutates: the file, or its line ranges. */
export function mutateGlobs(module: MutationModule): string[] {
  return module.lines ? module.lines.map((range) => `${module.file}:${range}`) : [module.file];
}
