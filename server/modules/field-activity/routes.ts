// GET /visits, /outlet-activities, /competitor-observations (trips:read) and GET /photos/{id}, which takes no key:
// its signed URL is the permission (photos.ts; docs/decisions/0015-signed-photo-urls.md).
import type { Request, Router } from 'express';
import { actorOf } from '../../platform/access/context.js';
import type { Db } from '../../platform/database/transaction.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { apiRouter } from '../../platform/http/router.js';
import { listRequestOf, sendPage } from '../../platform/lists/http.js';
import { PHOTO_URL_SECONDS, type PhotoUrlSigner } from './photos.js';
import { findPhoto } from './repository.js';
import { listCompetitorObservations, listOutletActivities, listVisits } from './service.js';

const queryOf = (req: Request) => req.query as Record<string, string | undefined>;

/** `publicBaseUrl`: where clients reach the API (PUBLIC_BASE_URL, or the listen address in the sandbox). */
export function fieldActivityRoutes(db: Db, signer: PhotoUrlSigner, publicBaseUrl: () => string): Router {
  const router = apiRouter();

  router.get('/visits', async (req, res) => {
    sendPage(res, await listVisits(db, actorOf(res), listRequestOf(req), queryOf(req)));
  });

  router.get('/outlet-activities', async (req, res) => {
    sendPage(res, await listOutletActivities(db, actorOf(res), listRequestOf(req), queryOf(req)));
  });

  router.get('/competitor-observations', async (req, res) => {
    // The configured public address, never the request's Host header: a caller (or a proxy passing Host through)
    // could otherwise have the service sign URLs on a host of its choosing, where a client would send the photo's
    // signed URL along.
    const origin = publicBaseUrl();
    sendPage(
      res,
      await listCompetitorObservations(db, actorOf(res), listRequestOf(req), queryOf(req), (organizationId, photoId) =>
        signer.url(origin, organizationId, photoId),
      ),
    );
  });

  router.get('/photos/:id', async (req, res) => {
    const id = req.params.id as string;
    const query = req.query as Record<string, unknown>;
    const organizationId = String(query.organizationId);
    // On every answer, before the checks: a browser must never guess a type other than the one sent.
    res.set('X-Content-Type-Options', 'nosniff');
    signer.check(organizationId, id, Number(query.expires), String(query.signature));
    const photo = await findPhoto(db, organizationId, id);
    if (!photo) throw new ApiError('not_found', `There is no photo ${id}.`);
    res.set('Cache-Control', `private, max-age=${PHOTO_URL_SECONDS}`).type(photo.content_type).send(photo.bytes);
  });

  return router;
}
