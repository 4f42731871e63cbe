// notifications --org ORG_ID [--member MEMBER_ID]: the in-app notifications, newest first. With --member, those that
// went to that member (the owner and the members who manage settings receive them) with its own read state, and
// --read ID marks one read for it.
import type { Command } from 'commander';
import { getOrganization } from '../../../server/platform/access/organizations.js';
import {
  listMemberNotifications,
  listNotifications,
  markNotificationRead,
} from '../../../server/platform/webhooks/notifications.js';
import { withDatabase } from '../database.js';
import { UsageError } from '../errors.js';
import { integerIn } from '../options.js';
import { listFormatOptions, printList } from '../output.js';

export function registerNotificationsCommand(program: Command): void {
  program
    .command('notifications')
    .description(
      "an organisation's notifications (for example a webhook endpoint turned off), newest first; per member with --member",
    )
    .requiredOption('--org <org-id>', 'the organisation')
    .option('--member <member-id>', 'only the notifications that went to this member, with its read state')
    .option('--unread', 'with --member: only those it has not read')
    .option('--read <notification-id>', 'with --member: mark this notification read for the member first')
    .option('--limit <n>', 'at most this many (1-1000)', integerIn(1, 1000), 100);
  listFormatOptions(program.commands.at(-1)!, 'print a JSON array').action(
    async (options: {
      org: string;
      member?: string;
      unread?: boolean;
      read?: string;
      limit: number;
      json?: boolean;
      csv?: boolean;
    }) => {
      if (!options.member && (options.unread || options.read))
        throw new UsageError('--unread and --read need --member (the read state is per member)');
      const notifications = await withDatabase(async (db) => {
        await getOrganization(db, options.org);
        if (!options.member) return listNotifications(db, options.org, options.limit);
        if (options.read) await markNotificationRead(db, options.org, options.member, options.read);
        return listMemberNotifications(db, options.org, options.member, {
          limit: options.limit,
          unread: options.unread,
        });
      });
      printList(
        options,
        notifications,
        [
          { header: 'ID', value: (n) => n.id },
          { header: 'CREATED', value: (n) => n.createdAt },
          { header: 'READ', value: (n) => n.readAt ?? 'unread' },
          { header: 'KIND', value: (n) => n.kind },
          { header: 'MESSAGE', value: (n) => n.message },
        ],
        { empty: `No notifications for ${options.member ?? options.org}.` },
      );
    },
  );
}
