// code-system add | list: the external code systems an organisation's partners use (dms is built in).
import type { Command } from 'commander';
import { withDatabase } from '../database.js';
import { getOrganization, listCodeSystems, registerCodeSystem } from '../../../server/platform/access/organizations.js';
import { listFormatOptions, printJson, printList, printText } from '../output.js';

export function registerCodeSystemCommands(program: Command): void {
  const codeSystem = program.command('code-system').description('external code systems of an organisation');

  codeSystem
    .command('add')
    .description('register a code system (doing it again changes nothing)')
    .requiredOption('--org <org-id>', 'the organisation')
    .requiredOption('--name <name>', '1 to 32 lowercase letters, digits, _ or -, starting with a letter')
    .option('--json', 'print {"organizationId", "name", "created"}')
    .action(async (options: { org: string; name: string; json?: boolean }) => {
      const created = await withDatabase(async (db) => {
        await getOrganization(db, options.org);
        return registerCodeSystem(db, options.org, options.name);
      });
      if (options.json) printJson({ organizationId: options.org, name: options.name, created });
      else
        printText(
          created
            ? `Code system ${options.name} registered for ${options.org}.`
            : `Code system ${options.name} was already registered for ${options.org}.`,
        );
    });

  codeSystem
    .command('list')
    .description("list an organisation's code systems (dms is built in and always there)")
    .requiredOption('--org <org-id>', 'the organisation');
  listFormatOptions(codeSystem.commands.at(-1)!, 'print a JSON array of names').action(
    async (options: { org: string; json?: boolean; csv?: boolean }) => {
      const names = await withDatabase(async (db) => {
        await getOrganization(db, options.org);
        return listCodeSystems(db, options.org);
      });
      printList(options, names, [
        { header: 'NAME', value: (name) => (name === 'dms' && !options.csv ? 'dms (built in)' : name) },
      ]);
    },
  );
}
