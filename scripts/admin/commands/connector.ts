// connector set | show | fail | clear: an organisation's connections to the accounting system (QuickBooks Online) and
// the tax authority's fiscal system (EFRIS), and, for connections to the simulators, failures on demand.
import { InvalidArgumentError, type Command } from 'commander';
import { getOrganization } from '../../../server/platform/access/organizations.js';
import { inTransaction } from '../../../server/platform/database/transaction.js';
import {
  checkBaseUrl,
  readConnection,
  readConnections,
  setConnection,
  SIMULATOR_BASE_URL,
  type Connection,
  type ExternalSystem,
} from '../../../server/connectors/connections.js';
import { migrateSimulators } from '../../../server/connectors/simulators/database.js';
import { clearFailures, injectFailure, listFailures } from '../../../server/connectors/simulators/failures.js';
import { QUICKBOOKS_FAILURE_MODES } from '../../../server/connectors/simulators/quickbooks/router.js';
import { EFRIS_FAILURE_MODES } from '../../../server/connectors/simulators/efris/router.js';
import { withDatabase } from '../database.js';
import { listFormatOptions, printJson, printList, printText } from '../output.js';

const system = (raw: string): ExternalSystem => {
  if (raw !== 'accounting' && raw !== 'fiscal') throw new InvalidArgumentError('Expected accounting or fiscal.');
  return raw;
};
const count = (raw: string): number => {
  if (!/^\d{1,6}$/.test(raw) || Number(raw) < 1)
    throw new InvalidArgumentError('Expected a whole number of requests from 1 to 999999.');
  return Number(raw);
};

/** A connection as printed: never its credentials. */
const shown = (connection: Connection) => ({
  system: connection.system,
  provider: connection.provider,
  enabled: connection.enabled,
  baseUrl: connection.baseUrl,
  account: connection.account,
  deviceNo: connection.deviceNo,
  hasCredentials: connection.credentialsCiphertext !== null,
  updatedAt: connection.updatedAt.toISOString(),
});

const modesOf = (which: ExternalSystem): readonly string[] =>
  which === 'accounting' ? QUICKBOOKS_FAILURE_MODES : EFRIS_FAILURE_MODES;

export function registerConnectorCommands(program: Command): void {
  const connector = program
    .command('connector')
    .description(
      'connections to the accounting system (QuickBooks Online) and the fiscal system (EFRIS); failures on demand in their simulators',
    );

  connector
    .command('set')
    .description('create or change a connection; documents posted from then on are queued for it')
    .requiredOption('--org <id>', 'organisation id')
    .requiredOption('--system <system>', 'accounting or fiscal', system)
    .option(
      '--base-url <url>',
      `the system's base URL, or "${SIMULATOR_BASE_URL}" for the simulators the service runs in the sandbox`,
    )
    .option('--account <id>', 'the QuickBooks company (realm id) or the EFRIS TIN')
    .option('--device-no <no>', 'EFRIS: the device number')
    .option('--token <token>', 'QuickBooks: the OAuth access token (stored sealed)')
    .option('--enable', 'queue documents for it (the default of a new connection)')
    .option('--disable', 'queue nothing more for it (what is queued still goes)')
    .option('--json', 'print the connection as JSON')
    .action(
      async (options: {
        org: string;
        system: ExternalSystem;
        baseUrl?: string;
        account?: string;
        deviceNo?: string;
        token?: string;
        enable?: boolean;
        disable?: boolean;
        json?: boolean;
      }) => {
        if (options.enable && options.disable) throw new Error('Give --enable or --disable, not both.');
        const connection = await withDatabase(async (db, config) => {
          await getOrganization(db, options.org);
          // The webhook destination rules, as at every call (guarded-fetch.ts): refused here with the reason, before
          // anything is stored, rather than at the first posting.
          if (options.baseUrl !== undefined)
            await checkBaseUrl(options.baseUrl, {
              simulators: config.simulators,
              allowLoopback: config.webhookAllowLoopback,
            });
          return inTransaction(db, (tx) =>
            setConnection(
              tx,
              options.org,
              options.system,
              {
                baseUrl: options.baseUrl,
                account: options.account,
                deviceNo: options.deviceNo,
                credentials: options.token,
                enabled: options.enable ? true : options.disable ? false : undefined,
              },
              config.webhookSecretKey,
            ),
          );
        });
        if (options.json) printJson(shown(connection));
        else
          printText(
            `${connection.system} connection of ${options.org}: ${connection.provider} at ${connection.baseUrl}, account ${connection.account}, ${connection.enabled ? 'enabled' : 'disabled'}.`,
          );
      },
    );

  connector
    .command('show')
    .description("an organisation's connections (never their credentials)")
    .requiredOption('--org <id>', 'organisation id');
  listFormatOptions(connector.commands.at(-1)!, 'print {"connections": [...]}').action(
    async (options: { org: string; json?: boolean; csv?: boolean }) => {
      const connections = await withDatabase(async (db) => {
        await getOrganization(db, options.org);
        return readConnections(db, options.org);
      });
      printList(
        options,
        connections.map(shown),
        [
          { header: 'SYSTEM', value: (c) => c.system },
          { header: 'PROVIDER', value: (c) => c.provider },
          { header: 'STATUS', value: (c) => (c.enabled ? 'enabled' : 'disabled') },
          { header: 'BASE URL', value: (c) => c.baseUrl },
          { header: 'ACCOUNT', value: (c) => c.account },
          { header: 'DEVICE', value: (c) => c.deviceNo ?? '' },
        ],
        {
          empty: `${options.org} has no connection: nothing is posted to an accounting or fiscal system.`,
          json: (rows) => ({ connections: rows }),
        },
      );
    },
  );

  connector
    .command('fail')
    .description(
      'make the simulator behind a connection fail: the next N requests (--for) or every request until `connector clear`',
    )
    .requiredOption('--org <id>', 'organisation id')
    .requiredOption('--system <system>', 'accounting or fiscal', system)
    .requiredOption(
      '--mode <mode>',
      'accounting: outage, rate_limit, slow, timeout, period_closed, duplicate, stale, redirect; fiscal: outage, slow, timeout, unknown_error, rejected, redirect',
    )
    .option('--for <n>', 'this many requests (default: until cleared)', count)
    .option('--delay-ms <ms>', 'slow: how long each answer waits', (raw) => {
      if (!/^\d{1,6}$/.test(raw) || Number(raw) > 120_000)
        throw new InvalidArgumentError('Expected milliseconds from 0 to 120000.');
      return Number(raw);
    })
    .option('--json', 'print {"system", "account", "failures": [...]}')
    .action(
      async (options: {
        org: string;
        system: ExternalSystem;
        mode: string;
        for?: number;
        delayMs?: number;
        json?: boolean;
      }) => {
        if (!modesOf(options.system).includes(options.mode))
          throw new Error(
            `--mode ${options.mode} is not a mode of the ${options.system} simulator; it has ${modesOf(options.system).join(', ')}.`,
          );
        const result = await withDatabase(async (db) => {
          const connection = await simulatedConnection(db, options.org, options.system);
          await migrateSimulators(db);
          await injectFailure(
            db,
            options.system,
            connection.account,
            options.mode,
            options.for ?? null,
            options.delayMs ?? (options.mode === 'slow' ? 2_000 : 0),
          );
          return {
            system: options.system,
            account: connection.account,
            failures: await listFailures(db, options.system, connection.account),
          };
        });
        if (options.json) printJson(result);
        else
          printText(
            `The ${options.system} simulator fails ${options.for === undefined ? 'every request' : `the next ${options.for} request(s)`} of ${result.account} with ${options.mode}.`,
          );
      },
    );

  connector
    .command('clear')
    .description('remove every failure waiting in the simulator behind a connection')
    .requiredOption('--org <id>', 'organisation id')
    .requiredOption('--system <system>', 'accounting or fiscal', system)
    .option('--json', 'print {"cleared": n}')
    .action(async (options: { org: string; system: ExternalSystem; json?: boolean }) => {
      const cleared = await withDatabase(async (db) => {
        const connection = await simulatedConnection(db, options.org, options.system);
        await migrateSimulators(db);
        return clearFailures(db, options.system, connection.account);
      });
      if (options.json) printJson({ cleared });
      else printText(`Cleared ${cleared} failure(s).`);
    });
}

async function simulatedConnection(
  db: Parameters<typeof readConnection>[0],
  organizationId: string,
  which: ExternalSystem,
): Promise<Connection> {
  await getOrganization(db as never, organizationId);
  const connection = await readConnection(db, organizationId, which);
  if (!connection)
    throw new Error(
      `${organizationId} has no ${which} connection; set one with \`admin connector set --org ${organizationId} --system ${which} --base-url simulator --account ...\`.`,
    );
  if (connection.baseUrl !== SIMULATOR_BASE_URL)
    throw new Error(
      `The ${which} connection of ${organizationId} goes to ${connection.baseUrl}, not to the simulators: failures on demand exist only there.`,
    );
  return connection;
}
