// The signed-in member's notifications with its own read state (decision 0033: one member reading does not mark it
// for another), through the notifications module's functions; CSV of the list.
import { Router, type Request, type Response } from 'express';
import type { Db } from '../../platform/database/transaction.js';
import { listMemberNotifications, markNotificationRead } from '../../platform/webhooks/notifications.js';
import { html } from '../html.js';
import { CONSOLE_PATH, when } from '../layout.js';
import { sendCsv } from '../csv.js';
import { recordAction, sendNotFound, sendPage, sessionOf, type ConsoleDeps } from '../context.js';
import type { ConsoleSession } from '../sessions.js';

export async function unreadCount(db: Db, session: ConsoleSession): Promise<number> {
  const row = await db
    .selectFrom('notification_recipients')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('organization_id', '=', session.organizationId)
    .where('member_id', '=', session.memberId)
    .where('read_at', 'is', null)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

export function notificationRoutes(deps: ConsoleDeps): Router {
  const router = Router();
  router.get('/notifications', async (req: Request, res: Response, next) => {
    try {
      const session = sessionOf(res);
      const unread = req.query.unread === '1';
      const list = await listMemberNotifications(deps.db, session.organizationId, session.memberId, {
        limit: 100,
        unread,
      });
      if (req.query.format === 'csv') {
        sendCsv(
          res,
          'notifications.csv',
          ['id', 'kind', 'message', 'createdAt', 'readAt'],
          list.map((n) => [n.id, n.kind, n.message, n.createdAt, n.readAt]),
        );
        return;
      }
      const token = html`<input type="hidden" name="_csrf" value="${session.csrfToken}">`;
      sendPage(
        res,
        'Notifications',
        html`
<p>${unread ? html`Unread only · <a href="${CONSOLE_PATH}/notifications">Show all</a>` : html`Newest first · <a href="${CONSOLE_PATH}/notifications?unread=1">Show unread only</a>`}
 · <a href="${CONSOLE_PATH}/notifications?${unread ? 'unread=1&' : ''}format=csv">Download as CSV</a></p>
${list.some((n) => n.readAt === null) ? html`<form method="post" action="${CONSOLE_PATH}/notifications/read-all">${token}<button type="submit" class="secondary">Mark all as read</button></form>` : ''}
${
  list.length === 0
    ? html`<p>No notifications${unread ? ' unread' : ''}. ${session.role === 'none' ? 'Notifications go to the owner and the members who manage settings.' : ''}</p>`
    : html`<table>
<thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Message</th><th scope="col">Read</th></tr></thead>
<tbody>${list.map((n) => html`<tr><td>${when(n.createdAt)}</td><td>${n.kind}</td><td>${n.readAt ? n.message : html`<strong>${n.message}</strong>`}</td><td>${n.readAt ? when(n.readAt) : html`<form class="inline" method="post" action="${CONSOLE_PATH}/notifications/${n.id}/read">${token}<button type="submit" class="secondary">Mark read<span class="vh">: ${n.message.slice(0, 60)}</span></button></form>`}</td></tr>`)}</tbody>
</table>`
}`,
      );
    } catch (error) {
      next(error);
    }
  });
  router.post('/notifications/:id/read', async (req, res, next) => {
    try {
      const session = sessionOf(res);
      try {
        await markNotificationRead(deps.db, session.organizationId, session.memberId, String(req.params.id));
      } catch {
        sendNotFound(res, `That notification did not go to you.`);
        return;
      }
      recordAction(deps, req, res, 303);
      res.redirect(303, `${CONSOLE_PATH}/notifications`);
    } catch (error) {
      next(error);
    }
  });
  router.post('/notifications/read-all', async (req, res, next) => {
    try {
      const session = sessionOf(res);
      // Each unread one through the module's own function, so the first read time is kept as the API keeps it.
      const unread = await listMemberNotifications(deps.db, session.organizationId, session.memberId, {
        limit: 100,
        unread: true,
      });
      for (const n of unread) await markNotificationRead(deps.db, session.organizationId, session.memberId, n.id);
      recordAction(deps, req, res, 303);
      res.redirect(303, `${CONSOLE_PATH}/notifications`);
    } catch (error) {
      next(error);
    }
  });
  return router;
}
