// In-app notifications to an organisation's administrators (for example: a webhook endpoint was disabled).
import type { Db } from '../database/transaction.js';
import { newId } from '../ids.js';

export interface NotificationSummary {
  id: string;
  kind: string;
  message: string;
  createdAt: string;
  readAt: string | null;
}

export async function notify(db: Db, organizationId: string, kind: string, message: string): Promise<string> {
  const id = newId('ntf');
  await db.insertInto('notifications').values({ organization_id: organizationId, id, kind, message }).execute();
  return id;
}

/** The organisation's notifications, newest first. */
export async function listNotifications(db: Db, organizationId: string, limit = 100): Promise<NotificationSummary[]> {
  const rows = await db.selectFrom('notifications').select(['id', 'kind', 'message', 'created_at', 'read_at'])
    .where('organization_id', '=', organizationId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit)
    .execute();
  return rows.map((row) => ({ id: row.id, kind: row.kind, message: row.message, createdAt: row.created_at.toISOString(), readAt: row.read_at?.toISOString() ?? null }));
}
