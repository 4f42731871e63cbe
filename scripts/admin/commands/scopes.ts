// scopes: the scopes a key can hold (from the spec), for --scopes.
import type { Command } from 'commander';
import { scopeCatalogue } from '../../../server/platform/access/scopes.js';
import { printJson, printText, table } from '../output.js';

export function registerScopesCommand(program: Command): void {
  program.command('scopes')
    .description('list the scopes an API key can hold')
    .option('--json', 'print {"scope": "what it allows", ...}')
    .action((options: { json?: boolean }) => {
      const catalogue = scopeCatalogue();
      if (options.json) printJson(catalogue);
      else printText(...table(['SCOPE', 'ALLOWS'], Object.entries(catalogue)));
    });
}
