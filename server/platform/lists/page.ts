// One mechanism for every list: keyset pages in the default order (newest first, by id: ids are ULIDs) or, with
// updatedSince, as a change feed ordered by (updatedAt, id), oldest change first. Filtered pages read at most
// READ_BUDGET rows and may stop early with hasMore true, so a rare filter never turns into a long scan.
import type pg from 'pg';
import { decodeCursor, encodeCursor, type CursorPosition } from './cursor.js';

export const DEFAULT_LIMIT = 25;
export const MAX_LIMIT = 100;
export const READ_BUDGET = 1_000;

export interface ListRequest {
  limit?: number;
  cursor?: string;
  updatedSince?: string;
}

export interface ListDefinition {
  /** Names the list inside its cursors. */
  name: string;
  table: string;
  /** The select list (columns of `table`, which the query aliases as `t`). */
  columns: string;
}

/** A condition on `t`, with `$?` where its single value goes. */
export interface Filter {
  sql: string;
  value: unknown;
}

export interface Page<Row> {
  rows: Row[];
  nextCursor: string | null;
  hasMore: boolean;
}

interface KeyedRow {
  id: string;
  updated_at: Date;
}

export async function readPage<Row extends KeyedRow>(
  db: pg.Pool | pg.PoolClient,
  definition: ListDefinition,
  organizationId: string,
  request: ListRequest,
  filters: Record<string, Filter | undefined>,
): Promise<Page<Row>> {
  const limit = request.limit ?? DEFAULT_LIMIT;
  const feed = request.updatedSince !== undefined;
  const active = Object.entries(filters).filter((entry): entry is [string, Filter] => entry[1] !== undefined);
  // A cursor is bound to its organisation too: handed to another one, it is refused rather than reinterpreted.
  const fingerprint = { ...Object.fromEntries(active.map(([name, f]) => [name, f.value])), updatedSince: request.updatedSince ?? null, organizationId };
  const position = request.cursor ? decodeCursor(request.cursor, definition.name, fingerprint) : null;

  const params: unknown[] = [organizationId];
  const param = (value: unknown) => `$${params.push(value)}`;
  const where = ['t.organization_id = $1'];
  if (feed) {
    if (position) where.push(`(t.updated_at, t.id) > (${param(position.t)}::timestamptz, ${param(position.id)})`);
    else where.push(`t.updated_at >= ${param(request.updatedSince)}::timestamptz`);
  } else if (position) {
    where.push(`t.id < ${param(position.id)}`);
  }
  const order = feed ? 't.updated_at, t.id' : 't.id DESC';
  const conditions = active.map(([, f]) => f.sql.replace('$?', param(f.value)));

  let rows: Row[];
  let budgetSpent = false;
  let lastRead: Row | undefined;
  if (conditions.length === 0) {
    ({ rows } = await db.query<Row>(`SELECT ${definition.columns} FROM ${definition.table} t WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ${limit + 1}`, params));
  } else {
    // Read at most READ_BUDGET rows in key order; keep the matching ones, and remember the last row read so
    // that the next page resumes after it even when none matched.
    const { rows: read } = await db.query<Row & { matches: boolean }>(
      `SELECT ${definition.columns}, (${conditions.join(' AND ')}) AS matches FROM ${definition.table} t
        WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ${READ_BUDGET}`,
      params,
    );
    rows = [];
    for (const row of read) {
      lastRead = row;
      if (row.matches) rows.push(row);
      if (rows.length > limit) break;
    }
    budgetSpent = read.length === READ_BUDGET && rows.length <= limit;
    for (const row of rows) delete (row as { matches?: boolean }).matches;
  }

  const hasMore = rows.length > limit || budgetSpent;
  const page = rows.slice(0, limit);
  const resumeAfter = rows.length > limit ? page[page.length - 1] : budgetSpent ? lastRead : undefined;
  const nextCursor = hasMore && resumeAfter ? encodeCursor(definition.name, fingerprint, positionOf(resumeAfter, feed)) : null;
  return { rows: page, nextCursor, hasMore };
}

function positionOf(row: KeyedRow, feed: boolean): CursorPosition {
  return feed ? { t: row.updated_at.toISOString(), id: row.id } : { id: row.id };
}
