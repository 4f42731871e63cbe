// member add | list | update | remove: an organisation's users (name, e-mail) with a role (owner, manage-settings or
// none). --salesman links the salesman with that code to the member, through the salespeople module (its rule and
// its salesperson.updated event), as the salespeople API's memberId does.
import { Option, type Command } from 'commander';
import { operatorActor } from '../../../server/platform/access/actor.js';
import { actingOrganization, getOrganization } from '../../../server/platform/access/organizations.js';
import {
  addMember,
  listMembers,
  MEMBER_ROLES,
  removeMember,
  updateMember,
  type MemberRecord,
} from '../../../server/platform/access/members.js';
import { inTransaction, type Db } from '../../../server/platform/database/transaction.js';
import { salespeople } from '../../../server/modules/salespeople/service.js';
import { withDatabase } from '../database.js';
import { UsageError } from '../errors.js';
import { fields, listFormatOptions, printJson, printList, printText } from '../output.js';

const roleOption = () =>
  new Option(
    '--role <role>',
    'owner (one per organisation), manage-settings (receives the notifications, as the owner does) or none',
  ).choices([...MEMBER_ROLES]);

async function linkSalesman(db: Db, organizationId: string, salesmanCode: string, memberId: string): Promise<void> {
  const actor = operatorActor(actingOrganization(await getOrganization(db, organizationId)), 'admin member');
  await inTransaction(db, async (tx) => {
    const row = await tx
      .selectFrom('salespeople')
      .select('id')
      .where('organization_id', '=', organizationId)
      .where('salesman_code', '=', salesmanCode)
      .executeTakeFirst();
    if (!row) throw new Error(`no salesman ${salesmanCode} in ${organizationId}`);
    await salespeople.change(tx, actor, row.id, { memberId });
  });
}

async function salesmenOf(db: Db, organizationId: string): Promise<Map<string, string[]>> {
  const rows = await db
    .selectFrom('salespeople')
    .select(['member_id', 'salesman_code'])
    .where('organization_id', '=', organizationId)
    .where('member_id', 'is not', null)
    .orderBy('salesman_code')
    .execute();
  const byMember = new Map<string, string[]>();
  for (const row of rows) byMember.set(row.member_id!, [...(byMember.get(row.member_id!) ?? []), row.salesman_code]);
  return byMember;
}

function describe(member: MemberRecord, salesmen: string[]): string[] {
  return [
    `Member ${member.id}`,
    ...fields([
      ['name', member.name],
      ['e-mail', member.email],
      ['role', member.role],
      ['salesman', salesmen.join(', ') || 'none'],
    ]),
  ];
}

export function registerMemberCommands(program: Command): void {
  const member = program
    .command('member')
    .description("an organisation's members (users with a role): add, list, update, remove");

  member
    .command('add')
    .description('add a member; prints its id')
    .requiredOption('--org <org-id>', 'the organisation')
    .requiredOption('--name <name>', "the person's name")
    .requiredOption('--email <address>', "the person's e-mail address (unique in the organisation)")
    .addOption(roleOption().default('none'))
    .option('--salesman <code>', 'link the salesman with this code to the member')
    .option('--json', 'print the member as JSON')
    .action(
      async (options: {
        org: string;
        name: string;
        email: string;
        role: string;
        salesman?: string;
        json?: boolean;
      }) => {
        const added = await withDatabase(async (db) => {
          const created = await addMember(db, options.org, options);
          if (options.salesman) await linkSalesman(db, options.org, options.salesman, created.id);
          return created;
        });
        if (options.json) printJson(added);
        else printText(...describe(added, options.salesman ? [options.salesman] : []));
      },
    );

  listFormatOptions(
    member
      .command('list')
      .description("list an organisation's members")
      .requiredOption('--org <org-id>', 'the organisation'),
    'print a JSON array',
  ).action(async (options: { org: string; json?: boolean; csv?: boolean }) => {
    const [members, salesmen] = await withDatabase(async (db) => {
      await getOrganization(db, options.org);
      return [await listMembers(db, options.org), await salesmenOf(db, options.org)] as const;
    });
    printList(
      options,
      members.map((m) => ({ ...m, salesmanCodes: salesmen.get(m.id) ?? [] })),
      [
        { header: 'ID', value: (m) => m.id },
        { header: 'NAME', value: (m) => m.name },
        { header: 'E-MAIL', value: (m) => m.email },
        { header: 'ROLE', value: (m) => m.role },
        { header: 'SALESMAN', value: (m) => m.salesmanCodes.join(',') || '-' },
      ],
      { empty: `No members of ${options.org}.` },
    );
  });

  member
    .command('update')
    .description("change a member's name, e-mail or role, or link a salesman to it")
    .argument('<member-id>', 'the member')
    .requiredOption('--org <org-id>', 'the organisation')
    .option('--name <name>', "the person's name")
    .option('--email <address>', "the person's e-mail address")
    .addOption(roleOption())
    .option('--salesman <code>', 'link the salesman with this code to the member')
    .option('--json', 'print the member as JSON')
    .action(
      async (
        id: string,
        options: { org: string; name?: string; email?: string; role?: string; salesman?: string; json?: boolean },
      ) => {
        if ([options.name, options.email, options.role, options.salesman].every((value) => value === undefined))
          throw new UsageError('nothing to change: give --name, --email, --role and/or --salesman');
        const [updated, salesmen] = await withDatabase(async (db) => {
          const changed = await updateMember(db, options.org, id, {
            name: options.name,
            email: options.email,
            role: options.role,
          });
          if (options.salesman) await linkSalesman(db, options.org, options.salesman, id);
          return [changed, (await salesmenOf(db, options.org)).get(id) ?? []] as const;
        });
        if (options.json) printJson({ ...updated, salesmanCodes: salesmen });
        else printText(...describe(updated, salesmen));
      },
    );

  member
    .command('remove')
    .description('remove a member and its notifications (refused while a key or a salesman keeps its id)')
    .argument('<member-id>', 'the member')
    .requiredOption('--org <org-id>', 'the organisation')
    .option('--json', 'print {"id", "removed": true}')
    .action(async (id: string, options: { org: string; json?: boolean }) => {
      await withDatabase((db) => removeMember(db, options.org, id));
      if (options.json) printJson({ id, removed: true });
      else printText(`Member ${id} removed.`);
    });
}
