import type { Request, Response } from 'express';
import { timestampProblem, toUtc } from '../dates.js';
import { ApiError } from '../errors/api-error.js';
import type { ListRequest, Page } from './page.js';

/** The shared list parameters of a request (already validated and coerced against the spec). */
export function listRequestOf(req: Request): ListRequest {
  const query = req.query as Record<string, unknown>;
  const updatedSince = query.updatedSince as string | undefined;
  const problem = updatedSince === undefined ? null : timestampProblem(updatedSince);
  if (problem)
    throw new ApiError('invalid_field', `updatedSince ${problem}.`, [
      { field: '/query/updatedSince', code: 'invalid_field', message: problem },
    ]);
  return {
    limit: query.limit === undefined ? undefined : Number(query.limit),
    cursor: query.cursor as string | undefined,
    // In UTC, whatever offset the caller wrote: the feed and its cursors compare instants.
    updatedSince: updatedSince === undefined ? undefined : toUtc(updatedSince),
  };
}

/** The page envelope of every list. */
export function sendPage(res: Response, page: Page<unknown>): void {
  res.json({ data: page.rows, nextCursor: page.nextCursor, hasMore: page.hasMore });
}
