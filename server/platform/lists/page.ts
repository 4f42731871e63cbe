// One mechanism for every list: keyset pages in the default order (newest first, by id: ids are ULIDs, or by a
// list's own order key and then id, both newest first) or, with updatedSince, as a change feed ordered by
// (updatedAt, id), oldest change first. Filtered pages read at most
// READ_BUDGET rows and may stop early with hasMore true, so a rare filter never turns into a long scan.
import { expressionBuilder, type Expression, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { ApiError } from '../errors/api-error.js';
import { decodeCursor, encodeCursor, type CursorPosition } from './cursor.js';

export const DEFAULT_LIMIT = 25;
export const MAX_LIMIT = 100;
export const READ_BUDGET = 1_000;

export interface ListRequest {
  limit?: number;
  cursor?: string;
  updatedSince?: string;
}

/** A condition on the list's table (aliased `t`), built by its module with Kysely's typed expression builder. */
export interface Filter {
  condition: Expression<SqlBool>;
  /** The caller's value, which binds the list's cursors to the filter. */
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

/**
 * The rows of a list: a select over its table aliased `t`, already limited to one organisation, typed by the
 * module that built it. The page machinery adds only conditions on `t.id` and `t.updated_at`, which every listed
 * table has, so it takes the query with its row type and leaves the table's own type to the module.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ListQuery<Row> = SelectQueryBuilder<any, 't', Row>;

/**
 * Adds the columns that cost a lookup per row (a record's external codes) to a page's query. `onlyWhere`, on a
 * filtered page, is the filter's condition: those columns are needed only for the rows that match, and a filtered
 * page reads up to READ_BUDGET rows to find them, so they should be computed under it (a CASE evaluates its
 * branch only when the condition holds).
 */
/**
 * A list whose default order is not its ids' (competitor observations: newest observation date first): the
 * column of `t` it leads with, newest first, ties by id newest first, and that column's value in a row as the
 * cursor keeps it. The column must compare correctly with that value sent back as a parameter (a DATE with its
 * `YYYY-MM-DD`). The change feed ignores it: every feed is ordered by (updatedAt, id).
 */
export interface OrderKey<Row> {
  column: `t.${string}`;
  valueOf(row: Row): string;
}

export type PageColumns<Row> = (query: ListQuery<Row>, onlyWhere?: Expression<SqlBool>) => ListQuery<Row>;

export async function readPage<Row extends KeyedRow>(
  name: string,
  query: ListQuery<Row>,
  organizationId: string,
  request: ListRequest,
  filters: Record<string, Filter | undefined>,
  columns: PageColumns<Row> = (q) => q,
  order?: OrderKey<Row>,
): Promise<Page<Row>> {
  const limit = request.limit ?? DEFAULT_LIMIT;
  const feed = request.updatedSince !== undefined;
  const active = Object.entries(filters).filter((entry): entry is [string, Filter] => entry[1] !== undefined);
  // A cursor is bound to its organisation too: handed to another one, it is refused rather than reinterpreted.
  const fingerprint = {
    ...Object.fromEntries(active.map(([key, f]) => [key, f.value])),
    updatedSince: request.updatedSince ?? null,
    organizationId,
  };
  const position = request.cursor ? decodeCursor(request.cursor, name, fingerprint) : null;

  let keyed = query;
  if (feed) {
    // The row comparison, not `a > x OR (a = x AND b > y)`: it stays inside the (organization_id, updated_at, id) index.
    keyed = position
      ? keyed.where((eb) => eb(eb.refTuple('t.updated_at', 't.id'), '>', eb.tuple(new Date(position.t!), position.id)))
      : keyed.where('t.updated_at', '>=', new Date(request.updatedSince!));
    keyed = keyed.orderBy('t.updated_at').orderBy('t.id');
  } else if (order) {
    if (position && position.k === undefined)
      throw new ApiError('invalid_field', 'The cursor is not one this list issued (no order key).', [
        { field: '/query/cursor', code: 'invalid_field', message: 'no order key' },
      ]);
    // The row comparison again, over (key, id), both descending.
    if (position)
      keyed = keyed.where((eb) =>
        eb(eb.refTuple(order.column as 't.id', 't.id'), '<', eb.tuple(position.k!, position.id)),
      );
    keyed = keyed.orderBy(order.column as 't.id', 'desc').orderBy('t.id', 'desc');
  } else {
    if (position) keyed = keyed.where('t.id', '<', position.id);
    keyed = keyed.orderBy('t.id', 'desc');
  }

  let rows: Row[];
  let budgetSpent = false;
  let lastRead: Row | undefined;
  if (active.length === 0) {
    rows = await columns(keyed)
      .limit(limit + 1)
      .execute();
  } else {
    // Read at most READ_BUDGET rows in key order; keep the matching ones, and remember the last row read so
    // that the next page resumes after it even when none matched.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the list query is typed by its module (ListQuery)
    const matches = () => expressionBuilder<any, 't'>().and(active.map(([, f]) => f.condition));
    const read = (await columns(keyed, matches())
      .select(matches().as('matches'))
      .limit(READ_BUDGET)
      .execute()) as (Row & { matches: boolean })[];
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
  const nextCursor =
    hasMore && resumeAfter ? encodeCursor(name, fingerprint, positionOf(resumeAfter, feed, order)) : null;
  return { rows: page, nextCursor, hasMore };
}

function positionOf<Row extends KeyedRow>(row: Row, feed: boolean, order?: OrderKey<Row>): CursorPosition {
  if (feed) return { t: row.updated_at.toISOString(), id: row.id };
  return order ? { k: order.valueOf(row), id: row.id } : { id: row.id };
}
