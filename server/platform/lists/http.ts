import type { Request, Response } from 'express';
import type { ListRequest, Page } from './page.js';

/** The shared list parameters of a request (already validated and coerced against the spec). */
export function listRequestOf(req: Request): ListRequest {
  const query = req.query as Record<string, unknown>;
  return {
    limit: query.limit === undefined ? undefined : Number(query.limit),
    cursor: query.cursor as string | undefined,
    updatedSince: query.updatedSince as string | undefined,
  };
}

/** The page envelope of every list. */
export function sendPage(res: Response, page: Page<unknown>): void {
  res.json({ data: page.rows, nextCursor: page.nextCursor, hasMore: page.hasMore });
}
