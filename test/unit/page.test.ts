// Keyset pages (server/platform/lists/page.ts), pure: the database is Kysely over a stand-in driver that records each
// compiled statement and answers with the rows Postgres would return for it. Two halves are held here: the statement (its keyset
// condition, order, limit and parameter numbering, pinned exactly, since a `<` turned `>` or `t.id` turned `DESC`
// skips or repeats rows without any error) and what is made of the rows (the page, hasMore, the position the next
// cursor resumes after, the read budget of filtered pages, the cursor bound to its list, organisation and filters).
// What the statements mean against real rows is held against Postgres by test/http/lists.test.ts.
import test, { type ExecutionContext } from 'ava';
import {
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Driver,
  type Expression,
  type SqlBool,
} from 'kysely';
import type { DB } from '../../generated/kysely/types.js';
import { ApiError } from '../../server/platform/errors/api-error.js';
import { decodeCursor, encodeCursor } from '../../server/platform/lists/cursor.js';
import { readPage, type Filter, type ListQuery, type ListRequest } from '../../server/platform/lists/page.js';
import { tableExpressions } from '../../server/platform/resources/filters.js';

const ORG = 'org_01J000000000000000000000AA';
const OTHER_ORG = 'org_01J000000000000000000000BB';
const SINCE = '2025-06-01T00:00:00.000Z';

interface Row {
  id: string;
  name: string;
  updated_at: Date;
  matches?: boolean;
}
const row = (n: number, matches?: boolean): Row => ({
  id: `cus_${String(n).padStart(6, '0')}`,
  name: `Shop ${n}`,
  updated_at: new Date(Date.UTC(2025, 5, 1, 0, 0, n)),
  ...(matches === undefined ? {} : { matches }),
});
const rows = (count: number, matches?: (n: number) => boolean) =>
  Array.from({ length: count }, (_, i) => row(i + 1, matches?.(i + 1)));

interface Statement {
  sql: string;
  params: unknown[];
}
/** Kysely over a stand-in driver that answers every statement with `answer` (copies: the page may strip a column). */
function database(answer: Row[]): { db: Kysely<DB>; statements: Statement[] } {
  const statements: Statement[] = [];
  const connection: DatabaseConnection = {
    async executeQuery(compiled) {
      statements.push({ sql: compiled.sql.replace(/\s+/g, ' ').trim(), params: [...compiled.parameters] });
      return { rows: answer.map((r) => ({ ...r })) as never[] };
    },
    streamQuery() {
      throw new Error('not used');
    },
  };
  const driver: Driver = {
    init: async () => {},
    acquireConnection: async () => connection,
    beginTransaction: async () => {},
    commitTransaction: async () => {},
    rollbackTransaction: async () => {},
    releaseConnection: async () => {},
    destroy: async () => {},
  };
  const db = new Kysely<DB>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  return { db, statements };
}
/** The customers list's rows, as its module builds them: three columns of the organisation's customers. */
const LIST = (db: Kysely<DB>, organizationId: string): ListQuery<Row> =>
  db
    .selectFrom('customers as t')
    .select(['t.id', 't.name', 't.updated_at'])
    .where('t.organization_id', '=', organizationId) as unknown as ListQuery<Row>;
const page = (
  answer: Row[],
  request: ListRequest = {},
  filters: Record<string, Filter | undefined> = {},
  organizationId = ORG,
) => {
  const { db, statements } = database(answer);
  return readPage<Row>('customers', LIST(db, organizationId), organizationId, request, filters).then((result) => ({
    ...result,
    statements,
  }));
};
const t$ = tableExpressions<'customers'>();
const filter = (condition: Expression<SqlBool>, value: string): Filter => ({ condition, value });
const strip = (r: Row) => ({ id: r.id, name: r.name, updated_at: r.updated_at });
/** The position a cursor carries, read with the fingerprint it must have been issued for. */
const positionIn = (cursor: string | null, fingerprint: Record<string, unknown>) =>
  decodeCursor(cursor ?? '', 'customers', fingerprint);
const plain = { updatedSince: null, organizationId: ORG };

// ---- The default order: newest first, by id.

test('a first page reads limit + 1 rows of the organisation, newest id first (25 when no limit is given)', async (t) => {
  const result = await page(rows(3));
  t.deepEqual(result.statements, [
    {
      sql: 'select "t"."id", "t"."name", "t"."updated_at" from "customers" as "t" where "t"."organization_id" = $1 order by "t"."id" desc limit $2',
      params: [ORG, 26],
    },
  ]);
  t.deepEqual(result.rows, rows(3));
  t.false(result.hasMore);
  t.is(result.nextCursor, null);
  t.deepEqual((await page(rows(1), { limit: 3 })).statements[0]!.params, [ORG, 4]);
});

test('one row more than the limit means more: the page is the first `limit` rows and the cursor resumes after the last of them', async (t) => {
  const result = await page(rows(4), { limit: 3 });
  t.deepEqual(result.rows, rows(3));
  t.true(result.hasMore);
  t.deepEqual(positionIn(result.nextCursor, plain), { id: 'cus_000003' });
});

test('exactly `limit` rows is the last page: hasMore false, no cursor', async (t) => {
  const result = await page(rows(3), { limit: 3 });
  t.deepEqual(result.rows, rows(3));
  t.false(result.hasMore);
  t.is(result.nextCursor, null);
});

test("a next page reads the ids below the cursor's, in the same order", async (t) => {
  const cursor = encodeCursor('customers', plain, { id: 'cus_000003' });
  const result = await page(rows(2), { limit: 3, cursor });
  t.deepEqual(result.statements, [
    {
      sql: 'select "t"."id", "t"."name", "t"."updated_at" from "customers" as "t" where "t"."organization_id" = $1 and "t"."id" < $2 order by "t"."id" desc limit $3',
      params: [ORG, 'cus_000003', 4],
    },
  ]);
  t.false(result.hasMore);
});

test('an empty cursor is no cursor: the first page', async (t) => {
  const result = await page(rows(1), { cursor: '' });
  t.deepEqual(result.statements[0]!.params, [ORG, 26]);
});

// ---- The change feed: oldest change first, by (updatedAt, id).

test('with updatedSince, a first page reads the changes at or after it, oldest first, and its cursor carries updatedAt and id', async (t) => {
  const result = await page(rows(3), { limit: 2, updatedSince: SINCE });
  t.deepEqual(result.statements, [
    {
      sql: 'select "t"."id", "t"."name", "t"."updated_at" from "customers" as "t" where "t"."organization_id" = $1 and "t"."updated_at" >= $2 order by "t"."updated_at", "t"."id" limit $3',
      params: [ORG, new Date(SINCE), 3],
    },
  ]);
  t.deepEqual(result.rows, rows(2));
  t.true(result.hasMore);
  t.deepEqual(positionIn(result.nextCursor, { updatedSince: SINCE, organizationId: ORG }), {
    t: '2025-06-01T00:00:02.000Z',
    id: 'cus_000002',
  });
});

test("a next page of the feed reads after the cursor's (updatedAt, id), so rows changed in the same instant are neither skipped nor repeated", async (t) => {
  const cursor = encodeCursor(
    'customers',
    { updatedSince: SINCE, organizationId: ORG },
    { t: '2025-06-01T00:00:02.000Z', id: 'cus_000002' },
  );
  const result = await page(rows(1), { limit: 2, updatedSince: SINCE, cursor });
  t.deepEqual(result.statements, [
    {
      sql: 'select "t"."id", "t"."name", "t"."updated_at" from "customers" as "t" where "t"."organization_id" = $1 and ("t"."updated_at", "t"."id") > ($2, $3) order by "t"."updated_at", "t"."id" limit $4',
      params: [ORG, new Date('2025-06-01T00:00:02.000Z'), 'cus_000002', 3],
    },
  ]);
  t.false(result.hasMore);
  t.is(result.nextCursor, null);
});

// ---- A cursor belongs to its list, organisation and filters.

async function refused(
  t: ExecutionContext,
  request: ListRequest,
  filters: Record<string, Filter | undefined>,
  organizationId: string,
  why: string,
): Promise<void> {
  const { db, statements } = database(rows(1));
  const error = await t.throwsAsync(
    readPage<Row>('customers', LIST(db, organizationId), organizationId, request, filters),
    { instanceOf: ApiError },
    why,
  );
  t.deepEqual(
    error?.errors?.map((e) => [e.field, e.message]),
    [['/query/cursor', why]],
    why,
  );
  t.is(statements.length, 0, `${why}: nothing is read`);
}

test('a cursor is refused, before anything is read, by another organisation, with other filters, with another updatedSince, or by another list', async (t) => {
  const retail: Record<string, Filter> = { channel: filter(t$('t.channel', '=', 'retail'), 'retail') };
  const cursor = encodeCursor(
    'customers',
    { channel: 'retail', updatedSince: null, organizationId: ORG },
    { id: 'cus_000003' },
  );
  await refused(t, { cursor }, retail, OTHER_ORG, 'issued for other filters');
  await refused(
    t,
    { cursor },
    { channel: filter(t$('t.channel', '=', 'wholesale'), 'wholesale') },
    ORG,
    'issued for other filters',
  );
  await refused(t, { cursor }, {}, ORG, 'issued for other filters');
  await refused(t, { cursor, updatedSince: SINCE }, retail, ORG, 'issued for other filters');
  await refused(
    t,
    { cursor: encodeCursor('products', { channel: 'retail', updatedSince: null, organizationId: ORG }, { id: 'x' }) },
    retail,
    ORG,
    'issued by another list',
  );
  // The same cursor with its own filters, organisation and no updatedSince is accepted.
  t.is((await page(rows(1), { cursor }, retail)).statements.length, 1);
});

// ---- Filtered pages: a bounded read.

const channel = filter(t$('t.channel', '=', 'retail'), 'retail');
const route = filter(t$('t.route_id', '=', 'rte_1'), 'rte_1');

test('a filtered page reads at most 1000 rows in key order, marking which match; filters given as undefined are not applied', async (t) => {
  const result = await page(
    rows(2, () => true),
    { limit: 5 },
    { channel, route, status: undefined },
  );
  t.deepEqual(result.statements, [
    {
      sql: 'select "t"."id", "t"."name", "t"."updated_at", ("t"."channel" = $1 and "t"."route_id" = $2) as "matches" from "customers" as "t" where "t"."organization_id" = $3 order by "t"."id" desc limit $4',
      params: ['retail', 'rte_1', ORG, 1000],
    },
  ]);
  t.deepEqual(result.rows, rows(2), 'the matches column is not handed on');
  t.false(result.hasMore);
  t.is(result.nextCursor, null);
});

test("a filtered next page binds the filter, the organisation and the cursor's position each to its own parameter", async (t) => {
  const cursor = encodeCursor(
    'customers',
    { channel: 'retail', updatedSince: SINCE, organizationId: ORG },
    { t: '2025-06-01T00:00:02.000Z', id: 'cus_000002' },
  );
  const result = await page([], { updatedSince: SINCE, cursor }, { channel });
  t.deepEqual(result.statements, [
    {
      sql: 'select "t"."id", "t"."name", "t"."updated_at", "t"."channel" = $1 as "matches" from "customers" as "t" where "t"."organization_id" = $2 and ("t"."updated_at", "t"."id") > ($3, $4) order by "t"."updated_at", "t"."id" limit $5',
      params: ['retail', ORG, new Date('2025-06-01T00:00:02.000Z'), 'cus_000002', 1000],
    },
  ]);
});

test('a filtered page keeps the matching rows; one match more than the limit means more, and the cursor resumes after the last row of the page', async (t) => {
  const read = rows(8, (n) => n % 2 === 1); // 1, 3, 5, 7 match
  const result = await page(read, { limit: 2 }, { channel });
  t.deepEqual(result.rows, [row(1), row(3)]);
  t.true(result.hasMore);
  t.deepEqual(positionIn(result.nextCursor, { channel: 'retail', ...plain }), { id: 'cus_000003' });
});

test('a filtered read that ends before the budget with at most `limit` matches is the last page', async (t) => {
  const result = await page(
    rows(999, (n) => n === 500 || n === 999),
    { limit: 2 },
    { channel },
  );
  t.deepEqual(result.rows, [row(500), row(999)]);
  t.false(result.hasMore);
  t.is(result.nextCursor, null);
});

test('a filtered read that spends the whole budget stops early with hasMore true, resuming after the last row read even when none matched', async (t) => {
  const none = await page(
    rows(1000, () => false),
    { limit: 2 },
    { channel },
  );
  t.deepEqual(none.rows, []);
  t.true(none.hasMore);
  t.deepEqual(positionIn(none.nextCursor, { channel: 'retail', ...plain }), { id: 'cus_001000' });

  const full = await page(
    rows(1000, (n) => n === 10 || n === 20),
    { limit: 2, updatedSince: SINCE },
    { channel },
  );
  t.deepEqual(full.rows, [row(10), row(20)], 'exactly `limit` matches: the budget still decides');
  t.true(full.hasMore);
  t.deepEqual(positionIn(full.nextCursor, { channel: 'retail', updatedSince: SINCE, organizationId: ORG }), {
    t: row(1000).updated_at.toISOString(),
    id: 'cus_001000',
  });
});

test('a filtered read of the whole budget that finds more than `limit` matches resumes after the page, not after the last row read', async (t) => {
  const result = await page(
    rows(1000, (n) => n <= 3),
    { limit: 2 },
    { channel },
  );
  t.deepEqual(result.rows, [row(1), row(2)]);
  t.true(result.hasMore);
  t.deepEqual(positionIn(result.nextCursor, { channel: 'retail', ...plain }), { id: 'cus_000002' });
});

test("rows handed on carry only the list's columns", async (t) => {
  const result = await page(
    rows(3, () => true),
    { limit: 2 },
    { channel },
  );
  t.deepEqual(
    result.rows.map((r) => Object.keys(r)),
    [
      ['id', 'name', 'updated_at'],
      ['id', 'name', 'updated_at'],
    ],
  );
  t.deepEqual(result.rows, rows(2).map(strip));
});

// ---- A list's own order key (competitor observations: newest observation date first).

test('with an order key, pages go by (key, id) descending, the cursor carries the key, and the feed ignores the key', async (t) => {
  const order = { column: 't.name' as const, valueOf: (r: Row) => r.name };
  const keyed = (answer: Row[], request: ListRequest = {}) => {
    const { db, statements } = database(answer);
    return readPage<Row>('customers', LIST(db, ORG), ORG, request, {}, undefined, order).then((result) => ({
      ...result,
      statements,
    }));
  };
  const first = await keyed(rows(3), { limit: 2 });
  t.deepEqual(first.statements, [
    {
      sql: 'select "t"."id", "t"."name", "t"."updated_at" from "customers" as "t" where "t"."organization_id" = $1 order by "t"."name" desc, "t"."id" desc limit $2',
      params: [ORG, 3],
    },
  ]);
  t.deepEqual(positionIn(first.nextCursor, plain), { k: 'Shop 2', id: 'cus_000002' });
  const next = await keyed(rows(1), { limit: 2, cursor: first.nextCursor! });
  t.deepEqual(next.statements, [
    {
      sql: 'select "t"."id", "t"."name", "t"."updated_at" from "customers" as "t" where "t"."organization_id" = $1 and ("t"."name", "t"."id") < ($2, $3) order by "t"."name" desc, "t"."id" desc limit $4',
      params: [ORG, 'Shop 2', 'cus_000002', 3],
    },
  ]);
  // A cursor of the plain order has no key: refused, not read as the start.
  const plainCursor = encodeCursor('customers', plain, { id: 'cus_000002' });
  const refused = await t.throwsAsync(keyed(rows(1), { cursor: plainCursor }), { instanceOf: ApiError });
  t.is(refused?.code, 'invalid_field');
  const feed = await keyed(rows(1), { updatedSince: SINCE });
  t.regex(feed.statements[0]!.sql, /order by "t"\."updated_at", "t"\."id" limit/);
});
