// GET / (outside the API base, like the /docs redirect): a developer who opens the bare host learns where the
// reference page, the OpenAPI document and the health check are, instead of a 404. Deliberately not an operation of
// the spec: the spec's servers are /api/v1 and its paths live below that; this is a signpost to them, not part
// of the contract, so it carries no key, scope or version promise.
import type { RequestHandler } from 'express';
import { API_BASE_PATH, apiDocument } from '../spec.js';

/** Relative links, so they hold behind any proxy or host name. */
export const ROOT_LINKS = {
  name: apiDocument.info.title,
  version: apiDocument.info.version,
  docs: `${API_BASE_PATH}/docs`,
  openapi: `${API_BASE_PATH}/openapi.json`,
  health: `${API_BASE_PATH}/health`,
} as const;

export const rootLinks: RequestHandler = (_req, res) => {
  res.json(ROOT_LINKS);
};
