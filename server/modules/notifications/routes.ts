// GET /notifications?member= and POST /notifications/{id}/read?member=: a member's in-app notifications and its own
// read state. The member is named by the caller (a key belongs to the organisation, not to a person); without one,
// the organisation's view, so a partner's key with no member behind it can still read and clear the inbox.
import type { Router } from 'express';
import { callerOf } from '../../platform/access/context.js';
import type { Db } from '../../platform/database/transaction.js';
import { apiRouter } from '../../platform/http/router.js';
import { listMemberNotifications, markNotificationRead } from '../../platform/webhooks/notifications.js';

export function notificationRoutes(db: Db): Router {
  const router = apiRouter();

  router.get('/notifications', async (req, res) => {
    const query = req.query as Record<string, unknown>;
    const unread = query.unread === true || query.unread === 'true';
    const limit = query.limit === undefined ? 25 : Number(query.limit);
    res.json({
      data: await listMemberNotifications(
        db,
        callerOf(res).organizationId,
        query.member === undefined ? undefined : String(query.member),
        { limit, unread },
      ),
    });
  });

  router.post('/notifications/:id/read', async (req, res) => {
    const query = req.query as Record<string, unknown>;
    res.json(
      await markNotificationRead(
        db,
        callerOf(res).organizationId,
        query.member === undefined ? undefined : String(query.member),
        req.params.id as string,
      ),
    );
  });

  return router;
}
