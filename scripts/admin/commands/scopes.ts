// scopes: the scopes a key can hold (from the spec), for --scopes.
import type { Command } from 'commander';
import { scopeCatalogue } from '../../../server/platform/access/scopes.js';
import { listFormatOptions, printList } from '../output.js';

export function registerScopesCommand(program: Command): void {
  program.command('scopes').description('list the scopes an API key can hold');
  listFormatOptions(program.commands.at(-1)!, 'print {"scope": "what it allows", ...}').action(
    (options: { json?: boolean; csv?: boolean }) => {
      const catalogue = scopeCatalogue();
      printList(
        options,
        Object.entries(catalogue),
        [
          { header: 'SCOPE', value: ([scope]) => scope },
          { header: 'ALLOWS', value: ([, allows]) => allows },
        ],
        { json: () => catalogue },
      );
    },
  );
}
