// One mechanism for every list: keyset pages in the default order (newest first, by id: ids are ULIDs) or, with
// updatedSince, as a change feed ordered by (updatedAt, id), oldest change first. Filtered pages read at most
// READ_BUDGET rows and may stop early with hasMore true, so a rare filter never turns into a long scan.
import { expressionBuilder, type Expression, type SelectQueryBuilder, type SqlBool } from 'kysely';
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
export type PageColumns<Row> = (query: ListQuery<Row>, onlyWhere?: Expression<SqlBool>) => ListQuery<Row>;

export async function readPage<Row extends KeyedRow>(
  name: string,
  query: ListQuery<Row>,
  organizationId: string,
  request: ListRequest,
  filters: Record<string, Filter | undefined>,
  columns: PageColumns<Row> = (q) => q,
): Promise<Page<Row>> {
  const limit = request.limit ?? DEFAULT_LIMIT;
  const feed = request.updatedSince !== undefined;
  const active = Object.entries(filters).filter((entry): entry is [string, Filter] => entry[1] !== undefined);
  // A cursor is bound to its organisation too: handed to another one, it is refused rather than reinterpreted.
  const fingerprint = { ...Object.fromEntries(active.map(([key, f]) => [key, f.value])), updatedSince: request.updatedSince ?? null, organizationId };
  const position = request.cursor ? decodeCursor(request.cursor, name, fingerprint) : null;

  let keyed = query;
  if (feed) {
    // The row comparison, not `a > x OR (a = x AND b > y)`: it stays inside the (organization_id, updated_at, id) index.
    keyed = position
      ? keyed.where((eb) => eb(eb.refTuple('t.updated_at', 't.id'), '>', eb.tuple(new Date(position.t!), position.id)))
      : keyed.where('t.updated_at', '>=', new Date(request.updatedSince!));
    keyed = keyed.orderBy('t.updated_at').orderBy('t.id');
  } else {
    if (position) keyed = keyed.where('t.id', '<', position.id);
    keyed = keyed.orderBy('t.id', 'desc');
  }

  let rows: Row[];
  let budgetSpent = false;
  let lastRead: Row | undefined;
  if (active.length === 0) {
    rows = await columns(keyed).limit(limit + 1).execute();
  } else {
    // Read at most READ_BUDGET rows in key order; keep the matching ones, and remember the last row read so
    // that the next page resumes after it even when none matched.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the list query is typed by its module (ListQuery)
    const matches = () => expressionBuilder<any, 't'>().and(active.map(([, f]) => f.condition));
    const read = await columns(keyed, matches()).select(matches().as('matches')).limit(READ_BUDGET).execute() as (Row & { matches: boolean })[];
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
  const nextCursor = hasMore && resumeAfter ? encodeCursor(name, fingerprint, positionOf(resumeAfter, feed)) : null;
  return { rows: page, nextCursor, hasMore };
}

function positionOf(row: KeyedRow, feed: boolean): CursorPosition {
  return feed ? { t: row.updated_at.toISOString(), id: row.id } : { id: row.id };
}
