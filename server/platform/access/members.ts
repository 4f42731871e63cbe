// An organisation's members: its users (a name and an e-mail) with a role. The owner and the members who manage
// settings receive the in-app notifications; keys record the member who had them made; a salesman is linked to the
// member he is. Operator actions (`admin member`), like the organisations'.
import type { Selectable } from 'kysely';
import type { Member } from '../../../generated/kysely/types.js';
import { inTransaction, type Db, type Tx } from '../database/transaction.js';
import { newId } from '../ids.js';

export const MEMBER_ROLES = ['owner', 'manage-settings', 'none'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];
/** The roles whose members receive every notification. */
export const NOTIFIED_ROLES: readonly MemberRole[] = ['owner', 'manage-settings'];

export interface MemberRecord {
  id: string;
  name: string;
  email: string;
  role: MemberRole;
  createdAt: string;
  updatedAt: string;
}

/**
 * A change to the members refused for a reason the person asking can act on (a bad field, a taken e-mail, a second
 * owner, a member still named by a key or a salesman). The CLI prints its message as any error's; the console
 * answers it on the form's page instead of as a failure of its own.
 */
export class MemberRefusal extends Error {}

// A plain shape check, not RFC 5322: one @, no spaces, a dot in the domain. The address is a label for people.
const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]+$/;

function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > 200) throw new MemberRefusal('--name must be 1 to 200 characters');
  return trimmed;
}

function checkEmail(email: string): string {
  const trimmed = email.trim().toLowerCase();
  if (!EMAIL.test(trimmed) || trimmed.length > 254)
    throw new MemberRefusal(`--email ${email} is not an e-mail address (name@example.com)`);
  return trimmed;
}

function checkRole(role: string): MemberRole {
  if (!(MEMBER_ROLES as readonly string[]).includes(role))
    throw new MemberRefusal(`--role must be one of ${MEMBER_ROLES.join(', ')}, not ${role}`);
  return role as MemberRole;
}

/**
 * An organisation has one owner: making a second is refused (give the role away first with `member update`). The
 * organisation's row is locked first, so two adds of an owner racing cannot both pass the check.
 */
async function refuseSecondOwner(tx: Tx, organizationId: string, exceptId: string | null): Promise<void> {
  await tx.selectFrom('organizations').select('id').where('id', '=', organizationId).forUpdate().execute();
  let query = tx
    .selectFrom('members')
    .select(['id', 'email'])
    .where('organization_id', '=', organizationId)
    .where('role', '=', 'owner');
  if (exceptId) query = query.where('id', '<>', exceptId);
  const owner = await query.executeTakeFirst();
  if (owner)
    throw new MemberRefusal(
      `the organisation already has an owner, ${owner.id} (${owner.email}); change that member's role first`,
    );
}

async function refuseTakenEmail(tx: Tx, organizationId: string, email: string, exceptId: string | null): Promise<void> {
  let query = tx
    .selectFrom('members')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('email', '=', email);
  if (exceptId) query = query.where('id', '<>', exceptId);
  const taken = await query.executeTakeFirst();
  if (taken) throw new MemberRefusal(`${email} is already member ${taken.id} of this organisation`);
}

export async function addMember(
  db: Db,
  organizationId: string,
  input: { name: string; email: string; role: string },
): Promise<MemberRecord> {
  return inTransaction(db, (tx) => addMemberIn(tx, organizationId, input));
}

/** addMember in the caller's transaction (the sandbox bootstrap makes its distributor's members in its own). */
export async function addMemberIn(
  tx: Tx,
  organizationId: string,
  input: { name: string; email: string; role: string },
): Promise<MemberRecord> {
  const name = checkName(input.name);
  const email = checkEmail(input.email);
  const role = checkRole(input.role);
  const organization = await tx
    .selectFrom('organizations')
    .select('id')
    .where('id', '=', organizationId)
    .executeTakeFirst();
  if (!organization) throw new MemberRefusal(`no organisation ${organizationId} (org list shows them)`);
  if (role === 'owner') await refuseSecondOwner(tx, organizationId, null);
  await refuseTakenEmail(tx, organizationId, email, null);
  const row = await tx
    .insertInto('members')
    .values({ organization_id: organizationId, id: newId('mbr'), name, email, role })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toRecord(row);
}

export async function updateMember(
  db: Db,
  organizationId: string,
  id: string,
  change: { name?: string; email?: string; role?: string },
): Promise<MemberRecord> {
  const name = change.name === undefined ? undefined : checkName(change.name);
  const email = change.email === undefined ? undefined : checkEmail(change.email);
  const role = change.role === undefined ? undefined : checkRole(change.role);
  return inTransaction(db, async (tx) => {
    if (role === 'owner') await refuseSecondOwner(tx, organizationId, id);
    if (email !== undefined) await refuseTakenEmail(tx, organizationId, email, id);
    const row = await tx
      .updateTable('members')
      .set((eb) => ({
        ...(name === undefined ? {} : { name }),
        ...(email === undefined ? {} : { email }),
        ...(role === undefined ? {} : { role }),
        updated_at: eb.fn('now'),
      }))
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new MemberRefusal(`no member ${id} in ${organizationId} (member list --org shows them)`);
    return toRecord(row);
  });
}

/**
 * Removes a member and its inbox (its notification rows). Refused while a key records it as its maker or a salesman
 * is linked to it: those records keep the member's id, so the member stays (set its role to none instead, or
 * unlink the salesman first).
 */
export async function removeMember(db: Db, organizationId: string, id: string): Promise<void> {
  await inTransaction(db, async (tx) => {
    const member = await tx
      .selectFrom('members')
      .select('id')
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
    if (!member) throw new MemberRefusal(`no member ${id} in ${organizationId} (member list --org shows them)`);
    const keys = await tx
      .selectFrom('api_keys')
      .select('id')
      .where('organization_id', '=', organizationId)
      .where('created_by_member_id', '=', id)
      .execute();
    if (keys.length > 0)
      throw new MemberRefusal(
        `member ${id} made the key(s) ${keys.map((k) => k.id).join(', ')}, which keep its id; set its role to none instead`,
      );
    const salesmen = await tx
      .selectFrom('salespeople')
      .select('salesman_code')
      .where('organization_id', '=', organizationId)
      .where('member_id', '=', id)
      .execute();
    if (salesmen.length > 0)
      throw new MemberRefusal(
        `salesman ${salesmen.map((s) => s.salesman_code).join(', ')} is linked to member ${id}; unlink it first (salespeople API memberId: null)`,
      );
    await tx
      .deleteFrom('notification_recipients')
      .where('organization_id', '=', organizationId)
      .where('member_id', '=', id)
      .execute();
    await tx.deleteFrom('members').where('organization_id', '=', organizationId).where('id', '=', id).execute();
  });
}

export async function listMembers(db: Db, organizationId: string): Promise<MemberRecord[]> {
  const rows = await db
    .selectFrom('members')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toRecord);
}

/** Whether the id is a member of the organisation. */
export async function isMember(db: Db, organizationId: string, id: string): Promise<boolean> {
  const row = await db
    .selectFrom('members')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row !== undefined;
}

function toRecord(row: Selectable<Member>): MemberRecord {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    role: row.role as MemberRole,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
