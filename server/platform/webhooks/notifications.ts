// In-app notifications to an organisation's administrators (for example: a webhook endpoint was disabled).
import type pg from 'pg';
import { newId } from '../ids.js';

type Db = pg.Pool | pg.PoolClient;

export interface NotificationSummary {
  id: string;
  kind: string;
  message: string;
  createdAt: string;
  readAt: string | null;
}

export async function notify(db: Db, organizationId: string, kind: string, message: string): Promise<string> {
  const id = newId('ntf');
  await db.query('INSERT INTO notifications (organization_id, id, kind, message) VALUES ($1, $2, $3, $4)', [organizationId, id, kind, message]);
  return id;
}

/** The organisation's notifications, newest first. */
export async function listNotifications(db: Db, organizationId: string, limit = 100): Promise<NotificationSummary[]> {
  const { rows } = await db.query<{ id: string; kind: string; message: string; created_at: Date; read_at: Date | null }>(
    'SELECT id, kind, message, created_at, read_at FROM notifications WHERE organization_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2',
    [organizationId, limit],
  );
  return rows.map((row) => ({ id: row.id, kind: row.kind, message: row.message, createdAt: row.created_at.toISOString(), readAt: row.read_at?.toISOString() ?? null }));
}
