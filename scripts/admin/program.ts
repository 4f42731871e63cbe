// The command tree of the operator CLI. Each group lives in commands/; this file only assembles them.
import { Command } from 'commander';
import { io } from './io.js';
import { registerAuditCommand } from './commands/audit.js';
import { registerEmptiesCommands } from './commands/empties.js';
import { registerCodeSystemCommands } from './commands/code-system.js';
import { registerFieldCommands } from './commands/field.js';
import { registerKeyCommands } from './commands/key.js';
import { registerMemberCommands } from './commands/member.js';
import { registerAccountsCommands } from './commands/accounts.js';
import { registerLogCommand } from './commands/log.js';
import { registerOrgCommands } from './commands/org.js';
import { registerScopesCommand } from './commands/scopes.js';
import { registerNotificationsCommand } from './commands/notifications.js';
import { registerWebhookCommands } from './commands/webhook.js';
import { registerTripCommands } from './commands/trip.js';
import { registerPeriodCommands } from './commands/period.js';
import { registerHealthCommand } from './commands/health.js';
import { registerConnectorCommands } from './commands/connector.js';
import { registerPostingsCommands } from './commands/postings.js';
import { registerDmsCommands } from './commands/dms.js';
import { registerConsoleCommands } from './commands/console.js';
import { registerSimulatorsCommand } from './commands/simulators.js';

export function buildProgram(): Command {
  const program = new Command('admin')
    .description(
      'Operator CLI of the ERP integration API. Works on the database of `npm start` (DATABASE_URL, or the embedded PostgreSQL under DATA_DIR).',
    )
    .usage('<command> [options]   (npm run --silent admin -- <command> ...)')
    // Settings set before .command() are inherited by every subcommand.
    .exitOverride()
    // commander's own messages (usage errors, --help) go where the run's output goes, not to process.stdout.
    .configureOutput({ writeOut: (text) => io().stdout(text), writeErr: (text) => io().stderr(text) })
    .showHelpAfterError('(add --help for usage)')
    .allowExcessArguments(false);
  registerOrgCommands(program);
  registerMemberCommands(program);
  registerAccountsCommands(program);
  registerKeyCommands(program);
  registerCodeSystemCommands(program);
  registerLogCommand(program);
  registerScopesCommand(program);
  registerWebhookCommands(program);
  registerNotificationsCommand(program);
  registerAuditCommand(program);
  registerEmptiesCommands(program);
  registerTripCommands(program);
  registerFieldCommands(program);
  registerPeriodCommands(program);
  registerHealthCommand(program);
  registerConnectorCommands(program);
  registerPostingsCommands(program);
  registerDmsCommands(program);
  registerConsoleCommands(program);
  registerSimulatorsCommand(program);
  return program;
}
