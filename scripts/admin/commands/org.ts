// org create | update | show | list
import type { Command } from 'commander';
import {
  createOrganization,
  getOrganization,
  listOrganizations,
  updateOrganization,
  type Module,
  type OrganizationRecord,
} from '../../../server/platform/access/organizations.js';
import { withDatabase } from '../database.js';
import { UsageError } from '../errors.js';
import { parseModules, parseOnOff, parseTimeZone } from '../options.js';
import { fields, listFormatOptions, printJson, printList, printText } from '../output.js';

function modulesOf(organization: OrganizationRecord): string {
  const on = [
    organization.deliveryModuleEnabled && 'delivery',
    organization.fieldSalesModuleEnabled && 'field-sales',
  ].filter(Boolean);
  return on.length > 0 ? on.join(', ') : 'none';
}

function describe(organization: OrganizationRecord): string[] {
  return [
    `Organisation ${organization.id}`,
    ...fields([
      ['name', organization.name],
      ['currency', organization.baseCurrency],
      ['API access', organization.apiAccessEnabled ? 'on' : 'off'],
      ['modules', modulesOf(organization)],
      ['time zone', organization.timeZone],
    ]),
  ];
}

export function registerOrgCommands(program: Command): void {
  const org = program.command('org').description('organisations (tenants): create, switch API access and modules');

  org
    .command('create')
    .description('create an organisation with API access on; prints its id')
    .requiredOption('--name <name>', "the distributor's name")
    .option('--currency <code>', 'base currency, ISO 4217', 'UGX')
    .option('--modules <list>', 'modules to switch on: delivery,field-sales', parseModules)
    .option('--json', 'print {"id": ...} only')
    .action(async (options: { name: string; currency: string; modules?: Module[]; json?: boolean }) => {
      const created = await withDatabase((db) =>
        createOrganization(db, {
          name: options.name,
          baseCurrency: options.currency,
          apiAccessEnabled: true,
          modules: options.modules ?? [],
        }),
      );
      if (options.json) printJson({ id: created.id });
      else printText(...describe(created));
    });

  org
    .command('update')
    .description('switch API access and modules of an organisation, set its time zone')
    .argument('<org-id>', 'the organisation')
    .option('--api-access <on|off>', "allow calls with the organisation's keys", parseOnOff)
    .option(
      '--modules <list>',
      'the modules that are on afterwards: delivery,field-sales ("" switches both off)',
      parseModules,
    )
    .option(
      '--time-zone <iana-name>',
      "the distributor's IANA time zone (Africa/Kampala, Europe/London, UTC): business dates and DMS cut-offs are its local time",
      parseTimeZone,
    )
    .option('--json', 'print the organisation as JSON')
    .action(
      async (id: string, options: { apiAccess?: boolean; modules?: Module[]; timeZone?: string; json?: boolean }) => {
        if (options.apiAccess === undefined && options.modules === undefined && options.timeZone === undefined)
          throw new UsageError('nothing to change: give --api-access on|off, --modules and/or --time-zone');
        const updated = await withDatabase((db) =>
          updateOrganization(db, id, {
            apiAccessEnabled: options.apiAccess,
            modules: options.modules,
            timeZone: options.timeZone,
          }),
        );
        if (options.json) printJson(updated);
        else printText(...describe(updated));
      },
    );

  org
    .command('show')
    .description('show one organisation')
    .argument('<org-id>', 'the organisation')
    .option('--json', 'print the organisation as JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      const organization = await withDatabase((db) => getOrganization(db, id));
      if (options.json) printJson(organization);
      else printText(...describe(organization));
    });

  listFormatOptions(org.command('list').description('list every organisation'), 'print a JSON array').action(
    async (options: { json?: boolean; csv?: boolean }) => {
      const organizations = await withDatabase((db) => listOrganizations(db));
      printList(
        options,
        organizations,
        [
          { header: 'ID', value: (o) => o.id },
          { header: 'NAME', value: (o) => o.name },
          { header: 'CURRENCY', value: (o) => o.baseCurrency },
          { header: 'API', value: (o) => (o.apiAccessEnabled ? 'on' : 'off') },
          { header: 'MODULES', value: (o) => modulesOf(o) },
        ],
        { empty: 'No organisations.' },
      );
    },
  );
}
