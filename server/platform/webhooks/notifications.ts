// In-app notifications (for example: a webhook endpoint was disabled, a DMS day reconciled with differences). Each
// goes to the members who hold the owner or manage-settings role when it is written (notification_recipients), each
// with a read state of its own: one member reading it does not mark it read for the others.
import { sql, type ExpressionBuilder } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';
import type { Db } from '../database/transaction.js';
import { ApiError } from '../errors/api-error.js';
import { newId } from '../ids.js';
import { NOTIFIED_ROLES } from '../access/members.js';

export interface NotificationSummary {
  id: string;
  kind: string;
  message: string;
  createdAt: string;
  readAt: string | null;
}

/** Writes the notification and one unread row per member it goes to, in the caller's transaction when given one. */
export async function notify(db: Db, organizationId: string, kind: string, message: string): Promise<string> {
  const id = newId('ntf');
  await db.insertInto('notifications').values({ organization_id: organizationId, id, kind, message }).execute();
  // INSERT ... SELECT: the recipients are whoever holds the role now, in one statement whatever their number.
  await db
    .insertInto('notification_recipients')
    .columns(['organization_id', 'member_id', 'notification_id'])
    .expression((eb) =>
      eb
        .selectFrom('members')
        .select(['organization_id', 'id', sql.lit(id).as('notification_id')])
        .where('organization_id', '=', organizationId)
        .where('role', 'in', [...NOTIFIED_ROLES]),
    )
    .execute();
  return id;
}

/** The organisation's notifications, newest first (the operator's view: read is when any member read it first). */
export async function listNotifications(
  db: Db,
  organizationId: string,
  limit = 100,
  options: { unread?: boolean; id?: string } = {},
): Promise<NotificationSummary[]> {
  const readBy = (eb: ExpressionBuilder<DB & { n: DB['notifications'] }, 'n'>) =>
    eb
      .selectFrom('notification_recipients as r')
      .whereRef('r.organization_id', '=', 'n.organization_id')
      .whereRef('r.notification_id', '=', 'n.id');
  let query = db
    .selectFrom('notifications as n')
    .select(['n.id', 'n.kind', 'n.message', 'n.created_at'])
    .select((eb) =>
      readBy(eb)
        .select((r) => r.fn.min('r.read_at').as('first'))
        .as('read_at'),
    )
    .where('n.organization_id', '=', organizationId);
  if (options.id !== undefined) query = query.where('n.id', '=', options.id);
  // Unread in this view: no member it went to has read it (in SQL, so that `limit` counts unread ones only).
  if (options.unread)
    query = query.where((eb) =>
      eb.not(eb.exists(readBy(eb).select('r.notification_id').where('r.read_at', 'is not', null))),
    );
  const rows = await query.orderBy('n.created_at', 'desc').orderBy('n.id', 'desc').limit(limit).execute();
  return rows.map((row) => ({
    id: row.id,
    kind: row.kind,
    message: row.message,
    createdAt: row.created_at.toISOString(),
    readAt: row.read_at?.toISOString() ?? null,
  }));
}

async function requireMember(db: Db, organizationId: string, memberId: string): Promise<void> {
  const member = await db
    .selectFrom('members')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('id', '=', memberId)
    .executeTakeFirst();
  if (!member)
    throw new ApiError('not_found', `There is no member ${memberId} in this organisation.`, [
      { field: '/query/member', code: 'not_found', message: `no member ${memberId}` },
    ]);
}

/**
 * The notifications that went to a member, newest first, with that member's read state; without a member, the
 * organisation's view (every notification, read once any member read it).
 */
export async function listMemberNotifications(
  db: Db,
  organizationId: string,
  memberId: string | undefined,
  options: { limit?: number; unread?: boolean } = {},
): Promise<NotificationSummary[]> {
  if (memberId === undefined)
    return listNotifications(db, organizationId, options.limit ?? 100, { unread: options.unread });
  await requireMember(db, organizationId, memberId);
  let query = db
    .selectFrom('notification_recipients as r')
    .innerJoin('notifications as n', (join) =>
      join.onRef('n.organization_id', '=', 'r.organization_id').onRef('n.id', '=', 'r.notification_id'),
    )
    .select(['n.id', 'n.kind', 'n.message', 'n.created_at', 'r.read_at'])
    .where('r.organization_id', '=', organizationId)
    .where('r.member_id', '=', memberId);
  if (options.unread) query = query.where('r.read_at', 'is', null);
  const rows = await query
    .orderBy('n.created_at', 'desc')
    .orderBy('n.id', 'desc')
    .limit(options.limit ?? 100)
    .execute();
  return rows.map((row) => ({
    id: row.id,
    kind: row.kind,
    message: row.message,
    createdAt: row.created_at.toISOString(),
    readAt: row.read_at?.toISOString() ?? null,
  }));
}

/**
 * Marks the notification read for the member (without one: for every member it went to); again keeps the first
 * time. Not one of the member's (not the organisation's): not_found.
 */
export async function markNotificationRead(
  db: Db,
  organizationId: string,
  memberId: string | undefined,
  notificationId: string,
): Promise<NotificationSummary> {
  if (memberId === undefined) {
    // Every recipient's first read time kept (coalesce), by the database's clock: a bare now() has no builder form.
    await db
      .updateTable('notification_recipients')
      .set((eb) => ({ read_at: eb.fn.coalesce('read_at', sql<Date>`now()`) }))
      .where('organization_id', '=', organizationId)
      .where('notification_id', '=', notificationId)
      .execute();
    const [found] = await listNotifications(db, organizationId, 1, { id: notificationId });
    if (!found) throw new ApiError('not_found', `There is no notification ${notificationId} in this organisation.`);
    return found;
  }
  await requireMember(db, organizationId, memberId);
  // The first read time kept (coalesce), by the database's clock: a bare now() has no builder form.
  await db
    .updateTable('notification_recipients')
    .set((eb) => ({ read_at: eb.fn.coalesce('read_at', sql<Date>`now()`) }))
    .where('organization_id', '=', organizationId)
    .where('member_id', '=', memberId)
    .where('notification_id', '=', notificationId)
    .execute();
  const [found] = await db
    .selectFrom('notification_recipients as r')
    .innerJoin('notifications as n', (join) =>
      join.onRef('n.organization_id', '=', 'r.organization_id').onRef('n.id', '=', 'r.notification_id'),
    )
    .select(['n.id', 'n.kind', 'n.message', 'n.created_at', 'r.read_at'])
    .where('r.organization_id', '=', organizationId)
    .where('r.member_id', '=', memberId)
    .where('r.notification_id', '=', notificationId)
    .execute();
  if (!found) throw new ApiError('not_found', `No notification ${notificationId} went to member ${memberId}.`);
  return {
    id: found.id,
    kind: found.kind,
    message: found.message,
    createdAt: found.created_at.toISOString(),
    readAt: found.read_at?.toISOString() ?? null,
  };
}
