// console owner | password: sign-in to the operator console (server/console/). `owner` makes the organisation's first
// owner (a member with the owner role) with a console password, or gives the existing owner a password; `password`
// sets a member's password. The password is generated and printed once unless --password-stdin gives it.
import type { Command } from 'commander';
import { addMember, listMembers } from '../../../server/platform/access/members.js';
import { getOrganization } from '../../../server/platform/access/organizations.js';
import { generatePassword } from '../../../server/console/passwords.js';
import { setPassword } from '../../../server/console/sessions.js';
import { withDatabase } from '../database.js';
import { UsageError } from '../errors.js';
import { readStdin } from '../io.js';
import { printJson, printText } from '../output.js';

async function passwordOf(options: { passwordStdin?: boolean }): Promise<{ password: string; generated: boolean }> {
  if (!options.passwordStdin) return { password: generatePassword(), generated: true };
  // The run's stdin (runCli's, injectable by tests; the process's for the binary), without the line's end.
  const password = (await readStdin()).replace(/\r?\n$/, '');
  if (password === '') throw new UsageError('--password-stdin: no password on standard input');
  return { password, generated: false };
}

function report(
  json: boolean | undefined,
  result: { organizationId: string; memberId: string; email: string; role: string; password: string | null },
): void {
  if (json) {
    printJson(result);
    return;
  }
  printText(
    `Member ${result.memberId} (${result.email}, ${result.role}) can sign in to the console at /console.`,
    ...(result.password ? [`Password (shown once, not stored): ${result.password}`] : []),
  );
}

export function registerConsoleCommands(program: Command): void {
  const group = program
    .command('console')
    .description("the operator console's sign-in: the first owner, members' passwords");

  group
    .command('owner')
    .description(
      "make the organisation's owner (or take the existing owner) and set its console password; prints the password once",
    )
    .requiredOption('--org <org-id>', 'the organisation')
    .requiredOption('--email <address>', "the owner's e-mail address (the sign-in name)")
    .option('--name <name>', "the owner's name (when the owner is made)")
    .option('--password-stdin', 'read the password from standard input instead of generating one')
    .option('--json', 'print {organizationId, memberId, email, role, password}')
    .action(async (options: { org: string; email: string; name?: string; passwordStdin?: boolean; json?: boolean }) => {
      const { password, generated } = await passwordOf(options);
      const result = await withDatabase(async (db) => {
        await getOrganization(db, options.org);
        const members = await listMembers(db, options.org);
        const email = options.email.trim().toLowerCase();
        const owner = members.find((m) => m.role === 'owner');
        if (owner && owner.email !== email)
          throw new Error(
            `the organisation's owner is ${owner.id} (${owner.email}); give that e-mail, or \`console password\` for another member`,
          );
        const member =
          owner ?? (await addMember(db, options.org, { name: options.name ?? email, email, role: 'owner' }));
        await setPassword(db, options.org, member.id, password);
        return {
          organizationId: options.org,
          memberId: member.id,
          email: member.email,
          role: member.role,
          password: generated ? password : null,
        };
      });
      report(options.json, result);
    });

  group
    .command('password')
    .description(
      "set a member's console password (ends its sessions); prints the password once unless --password-stdin",
    )
    .argument('<member-id>', 'the member')
    .requiredOption('--org <org-id>', 'the organisation')
    .option('--password-stdin', 'read the password from standard input instead of generating one')
    .option('--json', 'print {organizationId, memberId, email, role, password}')
    .action(async (memberId: string, options: { org: string; passwordStdin?: boolean; json?: boolean }) => {
      const { password, generated } = await passwordOf(options);
      const result = await withDatabase(async (db) => {
        const member = (await listMembers(db, options.org)).find((m) => m.id === memberId);
        if (!member) throw new Error(`no member ${memberId} in ${options.org} (member list --org shows them)`);
        await setPassword(db, options.org, member.id, password);
        return {
          organizationId: options.org,
          memberId: member.id,
          email: member.email,
          role: member.role,
          password: generated ? password : null,
        };
      });
      report(options.json, result);
    });
}
