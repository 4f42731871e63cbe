// GET /health, /openapi.json, /docs (and its script), /errors, /errors/{code} (no key) and GET /me (any valid key).
import type { Router } from 'express';
import type { Environment } from '../../platform/config.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { catalogueEntry } from '../../platform/errors/catalogue.js';
import { apiDocumentText, apiVersion } from '../../platform/spec.js';
import { precompressed } from '../../platform/http/precompressed.js';
import { apiReferencePage, apiReferenceScript } from './api-reference.js';
import { errorCodeList, errorCodeRepresentation, keyIntrospection } from './representation.js';
import { callerOf } from '../../platform/access/context.js';
import { apiRouter } from '../../platform/http/router.js';
import { workerHealth } from '../../platform/jobs/processes.js';
import type { Db } from '../../platform/database/transaction.js';

/** 750 KB of JSON: compressed once, with its ETag (see precompressed.ts). */
const openApiDocument = precompressed(apiDocumentText, 'application/json; charset=utf-8');

export function systemRoutes(options: { environment: Environment; db: Db }): Router {
  const router = apiRouter();

  // The workers' state as read at most once a second per process (the heartbeats move once a second anyway): a
  // probe or a load balancer polling /health costs one small query a second, not one per call.
  let workersRead: { at: number; value: Promise<{ alive: number; lastHeartbeatAt: Date | null }> } | null = null;
  const workersNow = () => {
    if (!workersRead || Date.now() - workersRead.at >= 1_000) {
      const value = workerHealth(options.db);
      workersRead = { at: Date.now(), value };
      value.catch(() => {
        if (workersRead?.value === value) workersRead = null;
      }); // a failed read is not kept
    }
    return workersRead.value;
  };

  router.get('/health', async (_req, res) => {
    const workers = await workersNow();
    res.json({
      status: 'ok',
      version: apiVersion,
      environment: options.environment,
      time: new Date().toISOString(),
      workers: { alive: workers.alive, lastHeartbeatAt: workers.lastHeartbeatAt?.toISOString() ?? null },
    });
  });

  router.get('/openapi.json', async (req, res) => {
    await openApiDocument.send(req, res);
  });

  router.get('/docs', apiReferencePage);
  router.get('/docs/scalar/:version/api-reference.js', apiReferenceScript);

  router.get('/errors', (_req, res) => {
    res.json(errorCodeList());
  });

  router.get('/errors/:code', (req, res) => {
    const code = req.params.code!;
    const entry = catalogueEntry(code);
    if (!entry) throw new ApiError('not_found', `There is no error code ${code}. GET /api/v1/errors lists them all.`);
    res.json(errorCodeRepresentation(code, entry));
  });

  router.get('/me', (_req, res) => {
    res.json(keyIntrospection(callerOf(res)));
  });

  return router;
}
