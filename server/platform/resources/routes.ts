// The HTTP of every resource: list, read by id, read and upsert by external code, and (where the resource has
// them) create and update. A resource names its path and how its query becomes filters; nothing else.
import type { Router, Request } from 'express';
import { actorOf, callerOf } from '../access/context.js';
import type { Db } from '../database/transaction.js';
import { respondIdempotently } from '../http/idempotency.js';
import { listRequestOf, sendPage } from '../lists/http.js';
import type { Filter } from '../lists/page.js';
import type { ResourceService } from './service.js';
import { apiRouter } from '../http/router.js';

export interface ResourceRoutesOptions {
  /** `/customers` */
  path: string;
  /** The list's filters from its (validated) query. */
  filters(query: Record<string, string | undefined>): Record<string, Filter | undefined>;
  /** Resources created by POST (others are created by PUT by code only). */
  create?: boolean;
  /** Resources changed by PATCH /{id}. */
  update?: boolean;
}

export function resourceRoutes<Fields extends object, Body>(
  db: Db,
  service: ResourceService<Fields, Body>,
  options: ResourceRoutesOptions,
): Router {
  const router = apiRouter();
  const { path } = options;

  router.get(path, async (req, res) => {
    sendPage(
      res,
      await service.list(
        db,
        actorOf(res),
        listRequestOf(req),
        options.filters(req.query as Record<string, string | undefined>),
      ),
    );
  });

  if (options.create) {
    router.post(path, async (req, res) => {
      const caller = callerOf(res);
      const { externalCodes, ...fields } = req.body as Fields & { externalCodes?: Record<string, string> };
      await respondIdempotently(db, caller, req, res, async (tx) => ({
        status: 201,
        body: await service.create(tx, caller.actor, fields as Fields, externalCodes),
      }));
    });
  }

  router.get(`${path}/by-code/:system/:code`, async (req, res) => {
    res.json(await service.getByCode(db, actorOf(res), param(req, 'system'), param(req, 'code')));
  });

  router.put(`${path}/by-code/:system/:code`, async (req, res) => {
    const caller = callerOf(res);
    await respondIdempotently(db, caller, req, res, async (tx) => {
      const { created, body } = await service.upsertByCode(
        tx,
        caller.actor,
        param(req, 'system'),
        param(req, 'code'),
        req.body as Fields,
      );
      return { status: created ? 201 : 200, body };
    });
  });

  router.get(`${path}/:id`, async (req, res) => {
    res.json(await service.get(db, actorOf(res), param(req, 'id')));
  });

  if (options.update) {
    router.patch(`${path}/:id`, async (req, res) => {
      const caller = callerOf(res);
      const { externalCodes, ...fields } = req.body as Fields & { externalCodes?: Record<string, string | null> };
      await respondIdempotently(db, caller, req, res, async (tx) => ({
        status: 200,
        body: await service.change(tx, caller.actor, param(req, 'id'), fields as Fields, externalCodes),
      }));
    });
  }

  return router;
}

function param(req: Request, name: string): string {
  return req.params[name] as string;
}
