// notifications --org ORG_ID: the in-app notifications to an organisation's administrators, newest first.
import type { Command } from 'commander';
import { getOrganization } from '../../../server/platform/access/organizations.js';
import { listNotifications } from '../../../server/platform/webhooks/notifications.js';
import { withDatabase } from '../database.js';
import { integerIn } from '../options.js';
import { printJson, printText, table } from '../output.js';

export function registerNotificationsCommand(program: Command): void {
  program.command('notifications')
    .description('an organisation\'s notifications (for example a webhook endpoint turned off), newest first')
    .requiredOption('--org <org-id>', 'the organisation')
    .option('--limit <n>', 'at most this many (1-1000)', integerIn(1, 1000), 100)
    .option('--json', 'print a JSON array')
    .action(async (options: { org: string; limit: number; json?: boolean }) => {
      const notifications = await withDatabase(async (db) => {
        await getOrganization(db, options.org);
        return listNotifications(db, options.org, options.limit);
      });
      if (options.json) return printJson(notifications);
      if (notifications.length === 0) return printText(`No notifications for ${options.org}.`);
      printText(...table(['CREATED', 'KIND', 'MESSAGE'], notifications.map((n) => [n.createdAt, n.kind, n.message])));
    });
}
