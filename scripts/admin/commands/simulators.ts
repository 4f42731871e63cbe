// simulators --org ORG_ID: what the QuickBooks and EFRIS simulators hold for an organisation (the records its
// postings made there, their status, and the failures still waiting), for its connections that go to `simulator`.
import { InvalidArgumentError, type Command } from 'commander';
import { getOrganization } from '../../../server/platform/access/organizations.js';
import { readConnections, SIMULATOR_BASE_URL } from '../../../server/connectors/connections.js';
import { migrateSimulators } from '../../../server/connectors/simulators/database.js';
import { withDatabase } from '../database.js';
import { listFormatOptions, printList, printText, table } from '../output.js';
import { simulatorState } from '../reads/simulators.js';

export function registerSimulatorsCommand(program: Command): void {
  listFormatOptions(
    program
      .command('simulators')
      .description(
        'what the QuickBooks (accounting) and EFRIS (fiscal) simulators hold for an organisation: each record its postings made there, and the failures waiting',
      )
      .requiredOption('--org <org-id>', 'the organisation')
      .option('--system <system>', 'accounting or fiscal (both by default)', (raw: string) => {
        if (raw !== 'accounting' && raw !== 'fiscal') throw new InvalidArgumentError('Expected accounting or fiscal.');
        return raw;
      }),
    'print {"connections", "records", "failures", "bookCloseDate"}',
  ).action(async (options: { org: string; system?: 'accounting' | 'fiscal'; json?: boolean; csv?: boolean }) => {
    const { simulated, state } = await withDatabase(async (db) => {
      await getOrganization(db, options.org);
      const connections = (await readConnections(db, options.org)).filter(
        (c) => c.baseUrl === SIMULATOR_BASE_URL && (options.system === undefined || c.system === options.system),
      );
      await migrateSimulators(db); // a database where the simulators never ran has their empty tables
      const account = (system: string) => connections.find((c) => c.system === system)?.account ?? null;
      return {
        simulated: connections.map((c) => ({ system: c.system, account: c.account })),
        state: await simulatorState(db, account('accounting'), account('fiscal')),
      };
    });
    if (simulated.length === 0)
      throw new Error(
        `${options.org} has no ${options.system ?? 'accounting or fiscal'} connection to the simulators (\`admin connector show --org ${options.org}\`).`,
      );
    printList(
      options,
      state.records,
      [
        { header: 'SYSTEM', value: (r) => r.system },
        { header: 'ACCOUNT', value: (r) => r.account },
        { header: 'KIND', value: (r) => r.kind },
        { header: 'ID', value: (r) => r.id },
        { header: 'NUMBER', value: (r) => r.number },
        { header: 'DATE', value: (r) => r.date },
        { header: 'STATUS', value: (r) => r.status },
        { header: 'CURRENCY', value: (r) => r.currency },
        { header: 'TOTAL', value: (r) => r.total },
        { header: 'DETAIL', value: (r) => r.detail },
      ],
      {
        empty: `The simulators hold nothing for ${simulated.map((c) => `${c.system} ${c.account}`).join(' and ')} yet.`,
        json: (records) => ({
          connections: simulated,
          records,
          failures: state.failures,
          bookCloseDate: state.bookCloseDate,
        }),
      },
    );
    if (!options.json && !options.csv) {
      if (state.bookCloseDate) printText('', `QuickBooks books closed through ${state.bookCloseDate}.`);
      if (state.failures.length > 0) {
        printText(
          '',
          'Failures waiting (admin connector clear removes them):',
          ...table(
            ['SYSTEM', 'ACCOUNT', 'MODE', 'REMAINING', 'DELAY MS'],
            state.failures.map((f) => [
              f.system,
              f.account,
              f.mode,
              f.remaining === null ? 'until cleared' : String(f.remaining),
              String(f.delayMs),
            ]),
          ),
        );
      }
    }
  });
}
