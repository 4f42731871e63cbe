// Lists, proven on GET /customers: page size, keyset pages newest first, the updatedSince change feed, signed
// cursors bound to their filters, filters, tenancy, and the read budget of filtered pages.
import test from 'ava';
import { createHmac } from 'node:crypto';
import { ulid } from 'ulidx';
import { READ_BUDGET } from '../../server/platform/lists/page.js';
import { createCaller, type TestCaller } from '../support/callers.js';
import { useSharedService, type ApiResponse } from '../support/service.js';

const api = useSharedService(test);
const pool = () => api().pool;

interface Seed {
  status?: 'active' | 'inactive' | 'blocked';
  channel?: 'retail' | 'wholesale' | 'horeca' | 'supermarket' | 'kiosk';
  region?: string | null;
  routeId?: string | null;
  updatedAt?: Date;
}

// Every seeded row is a second newer than the one before it (ids are ULIDs of that time), so that "newest first"
// is the order of seeding, reversed.
let clock = Date.now() - 30 * 86_400_000;
let outlet = 0;

/** Inserts customers straight into the table, in one statement; answers their ids in seeding order. */
async function seed(organizationId: string, seeds: Seed[]): Promise<string[]> {
  const rows = seeds.map((s) => {
    const created = new Date((clock += 1_000));
    return {
      id: `cus_${ulid(created.getTime())}`,
      outletCode: `UG${String(++outlet).padStart(7, '0')}`,
      status: s.status ?? 'active',
      channel: s.channel ?? 'retail',
      region: s.region ?? null,
      routeId: s.routeId ?? null,
      createdAt: created.toISOString(),
      updatedAt: (s.updatedAt ?? created).toISOString(),
    };
  });
  // The routes the seeds name exist (customers.route_id is a foreign key to the organisation's routes).
  await pool().query(
    `INSERT INTO routes (organization_id, id, route_code, name, active)
     SELECT DISTINCT $1, r, r, 'Seeded route ' || r, true FROM unnest($2::text[]) AS r WHERE r IS NOT NULL ON CONFLICT DO NOTHING`,
    [organizationId, rows.map((r) => r.routeId)],
  );
  await pool().query(
    `INSERT INTO customers (organization_id, id, outlet_code, name, status, channel, region, route_id, created_at, updated_at)
     SELECT $1, id, outlet_code, 'Seeded Shop ' || outlet_code, status, channel, region, route_id, created_at, updated_at
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[], $9::timestamptz[])
         AS s(id, outlet_code, status, channel, region, route_id, created_at, updated_at)`,
    [
      organizationId,
      ...(['id', 'outletCode', 'status', 'channel', 'region', 'routeId', 'createdAt', 'updatedAt'] as const).map((f) =>
        rows.map((r) => r[f]),
      ),
    ],
  );
  return rows.map((r) => r.id);
}

const many = (n: number, s: Seed = {}) => Array.from({ length: n }, () => ({ ...s }));
const list = (caller: TestCaller, query = '') =>
  api().request('GET', `/customers${query ? `?${query}` : ''}`, { headers: caller.auth });
const ids = (res: ApiResponse): string[] => res.body.data.map((c: { id: string }) => c.id);
const fieldsOf = (res: ApiResponse) => (res.body.errors ?? []).map((e: { field: string }) => e.field);

/** Follows nextCursor from the first page of `query` to the last; answers every page. */
async function walk(caller: TestCaller, query: string, maxPages = 50): Promise<ApiResponse[]> {
  const pages: ApiResponse[] = [];
  let cursor: string | null = null;
  do {
    const res = await list(
      caller,
      [query, cursor ? `cursor=${encodeURIComponent(cursor)}` : ''].filter(Boolean).join('&'),
    );
    if (res.status !== 200) throw new Error(`page ${pages.length + 1}: ${res.status} ${res.text}`);
    pages.push(res);
    cursor = res.body.nextCursor;
    if (res.body.hasMore !== (cursor !== null))
      throw new Error(`page ${pages.length}: hasMore ${res.body.hasMore} with nextCursor ${cursor}`);
  } while (cursor !== null && pages.length < maxPages);
  return pages;
}

test('limit defaults to 25 and must be 1 to 100: 0 and 101 are 400 invalid_field naming /query/limit', async (t) => {
  const caller = await createCaller(pool());
  const seeded = await seed(caller.organizationId, many(30));

  const byDefault = await list(caller);
  t.is(byDefault.status, 200);
  t.is(byDefault.body.data.length, 25);
  t.true(byDefault.body.hasMore);
  t.is(typeof byDefault.body.nextCursor, 'string');
  t.deepEqual(ids(byDefault), [...seeded].reverse().slice(0, 25));

  const one = await list(caller, 'limit=1');
  t.deepEqual(ids(one), [seeded[29]]);
  t.true(one.body.hasMore);

  const hundred = await list(caller, 'limit=100');
  t.is(hundred.body.data.length, 30);
  t.false(hundred.body.hasMore);
  t.is(hundred.body.nextCursor, null);

  for (const bad of ['0', '101', '-1', '2.5', 'ten']) {
    const res = await list(caller, `limit=${bad}`);
    t.is(res.status, 400, `limit=${bad}`);
    t.is(res.body.code, 'invalid_field', `limit=${bad}`);
    t.deepEqual(fieldsOf(res), ['/query/limit'], `limit=${bad}`);
  }
});

test('walking every page with nextCursor returns each customer exactly once, newest first, and the last page has hasMore false and nextCursor null', async (t) => {
  const caller = await createCaller(pool());
  const seeded = await seed(caller.organizationId, many(57, { status: 'active' }));
  const { rows } = await pool().query<{ id: string }>(
    'SELECT id FROM customers WHERE organization_id = $1 ORDER BY created_at DESC',
    [caller.organizationId],
  );
  const newestFirst = rows.map((row) => row.id);
  t.deepEqual(newestFirst, [...seeded].reverse());

  const pages = await walk(caller, 'limit=10');
  t.deepEqual(
    pages.map((page) => page.body.data.length),
    [10, 10, 10, 10, 10, 7],
  );
  const walked = pages.flatMap(ids);
  t.is(new Set(walked).size, walked.length, 'no customer twice');
  t.deepEqual(walked, newestFirst);
  const last = pages.at(-1)!.body;
  t.false(last.hasMore);
  t.is(last.nextCursor, null);
  for (const page of pages.slice(0, -1)) t.true(page.body.hasMore);
  // Each page's createdAt is not later than the one before it.
  const created = pages.flatMap((page) => page.body.data.map((c: { createdAt: string }) => Date.parse(c.createdAt)));
  t.deepEqual(
    created,
    [...created].sort((a, b) => b - a),
  );

  // When the last page is exactly full there is no empty page after it.
  const exact = await walk(caller, 'limit=19');
  t.deepEqual(
    exact.map((page) => page.body.data.length),
    [19, 19, 19],
  );
  t.deepEqual(exact.flatMap(ids), newestFirst);

  // The limit may change from page to page; the cursor only carries the position.
  const first = await list(caller, 'limit=5');
  const next = await list(caller, `limit=7&cursor=${encodeURIComponent(first.body.nextCursor)}`);
  t.deepEqual([...ids(first), ...ids(next)], newestFirst.slice(0, 12));
});

test('with updatedSince the list is a change feed ordered by updatedAt then id, oldest first; a PATCH moves the customer to the end; older changes are excluded', async (t) => {
  const caller = await createCaller(pool());
  const since = new Date(Date.now() - 2 * 3_600_000);
  const at = (seconds: number) => new Date(since.getTime() + seconds * 1_000);
  const [before, exactlyAt, a, b, tieFirst, tieSecond, newestRecord] = await seed(caller.organizationId, [
    { updatedAt: at(-60) }, // changed before updatedSince: not in the feed
    { updatedAt: at(0) }, // at updatedSince: in the feed
    { updatedAt: at(10) },
    { updatedAt: at(20) },
    { updatedAt: at(30) },
    { updatedAt: at(30) }, // same updatedAt: the larger id comes second
    { updatedAt: at(5) }, // the newest record (largest id), changed early: ordered by updatedAt, not id
  ]);
  const expected = [exactlyAt, newestRecord, a, b, tieFirst, tieSecond];

  const feed = await list(caller, `updatedSince=${encodeURIComponent(since.toISOString())}`);
  t.is(feed.status, 200);
  t.deepEqual(ids(feed), expected);
  t.false(ids(feed).includes(before!));
  t.false(feed.body.hasMore);
  t.is(feed.body.nextCursor, null);
  const times = feed.body.data.map((c: { updatedAt: string }) => c.updatedAt);
  t.deepEqual(times, [...times].sort());

  // The same feed two at a time, by cursor.
  const paged = await walk(caller, `updatedSince=${encodeURIComponent(since.toISOString())}&limit=2`);
  t.deepEqual(
    paged.map((page) => page.body.data.length),
    [2, 2, 2],
  );
  t.deepEqual(paged.flatMap(ids), expected);

  const patched = await api().request('PATCH', `/customers/${a}`, {
    headers: caller.auth,
    json: { name: 'Renamed Shop' },
  });
  t.is(patched.status, 200);
  const { rows } = await pool().query<{ updated_at: Date }>(
    'SELECT updated_at FROM customers WHERE organization_id = $1 AND id = $2',
    [caller.organizationId, a],
  );
  t.is(rows[0]!.updated_at.toISOString(), patched.body.updatedAt);

  const after = await list(caller, `updatedSince=${encodeURIComponent(since.toISOString())}`);
  t.deepEqual(ids(after), [exactlyAt, newestRecord, b, tieFirst, tieSecond, a]);
  t.like(after.body.data.at(-1), { id: a, name: 'Renamed Shop', updatedAt: patched.body.updatedAt });

  // A poller resuming from a later checkpoint sees only what changed since.
  const checkpoint = await list(caller, `updatedSince=${encodeURIComponent(at(25).toISOString())}`);
  t.deepEqual(ids(checkpoint), [tieFirst, tieSecond, a]);
  // Without updatedSince the same records come newest first (by id), whatever their updatedAt.
  t.deepEqual(ids(await list(caller)), [newestRecord, tieSecond, tieFirst, b, a, exactlyAt, before]);
});

test('an edited cursor, a cursor reused with other filters and a cursor of a retired format are 400 invalid_field naming /query/cursor', async (t) => {
  const caller = await createCaller(pool());
  const seeded = await seed(caller.organizationId, many(4, { status: 'active' }));
  const first = await list(caller, 'limit=1');
  const cursor: string = first.body.nextCursor;
  t.is(typeof cursor, 'string');
  t.deepEqual(
    ids(await list(caller, `limit=1&cursor=${encodeURIComponent(cursor)}`)),
    [seeded[2]],
    'the cursor as issued works',
  );

  const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
  const dot = cursor.indexOf('.');
  const [payload] = cursor.split('.');
  const v1 = Buffer.from(JSON.stringify({ v: 1, l: 'customers', o: 25 })).toString('base64url');
  const v1Signed = `${v1}.${createHmac('sha256', api().config.cursorSecret).update(v1).digest('base64url').slice(0, 22)}`;
  const feedCursor: string = (
    await list(caller, `limit=1&updatedSince=${encodeURIComponent('2020-01-01T00:00:00.000Z')}`)
  ).body.nextCursor;
  const cases: Record<string, string> = {
    'edited payload': `limit=1&cursor=${encodeURIComponent(flip(cursor, 3))}`,
    'edited signature': `limit=1&cursor=${encodeURIComponent(flip(cursor, dot + 2))}`,
    'payload without its signature': `limit=1&cursor=${encodeURIComponent(payload!)}`,
    'other filters (status added)': `limit=1&status=active&cursor=${encodeURIComponent(cursor)}`,
    'other filters (updatedSince added)': `limit=1&updatedSince=${encodeURIComponent('2020-01-01T00:00:00.000Z')}&cursor=${encodeURIComponent(cursor)}`,
    'a feed cursor without its updatedSince': `limit=1&cursor=${encodeURIComponent(feedCursor)}`,
    'retired format': `limit=1&cursor=${encodeURIComponent(`${v1}.anything`)}`,
    'retired format, properly signed': `limit=1&cursor=${encodeURIComponent(v1Signed)}`,
  };
  for (const [name, query] of Object.entries(cases)) {
    const res = await list(caller, query);
    t.is(res.status, 400, name);
    t.is(res.body.code, 'invalid_field', name);
    t.deepEqual(fieldsOf(res), ['/query/cursor'], name);
  }
  const retired = await list(caller, cases['retired format, properly signed']!);
  t.regex(retired.body.errors[0].message, /format/);
  const reused = await list(caller, cases['other filters (status added)']!);
  t.regex(reused.body.errors[0].message, /other filters/);
});

test('the status, channel, region, routeId and externalCode filters apply, alone and together', async (t) => {
  const caller = await createCaller(pool());
  const [activeRetailCentral, inactiveRetailCentral, activeKioskWest, blockedHorecaCentral, activeRetailRouted] =
    await seed(caller.organizationId, [
      { status: 'active', channel: 'retail', region: 'Central' },
      { status: 'inactive', channel: 'retail', region: 'Central' },
      { status: 'active', channel: 'kiosk', region: 'Western' },
      { status: 'blocked', channel: 'horeca', region: 'Central' },
      { status: 'active', channel: 'retail', region: null, routeId: 'rte_7' },
    ]);
  await pool().query(
    "INSERT INTO external_codes (organization_id, resource, code_system, code, record_id) VALUES ($1, 'customer', 'dms', 'DMS-77', $2), ($1, 'customer', 'dms', 'DMS-78', $3)",
    [caller.organizationId, activeKioskWest, blockedHorecaCentral],
  );
  const newestFirst = (...list: (string | undefined)[]) => [...list].reverse();

  const expectations: [string, (string | undefined)[]][] = [
    ['status=active', newestFirst(activeRetailCentral, activeKioskWest, activeRetailRouted)],
    ['status=inactive', [inactiveRetailCentral]],
    ['status=blocked', [blockedHorecaCentral]],
    ['channel=retail', newestFirst(activeRetailCentral, inactiveRetailCentral, activeRetailRouted)],
    ['channel=supermarket', []],
    ['region=Central', newestFirst(activeRetailCentral, inactiveRetailCentral, blockedHorecaCentral)],
    ['routeId=rte_7', [activeRetailRouted]],
    ['externalCode=DMS-77', [activeKioskWest]],
    ['externalCode=%20DMS-78%20', [blockedHorecaCentral]], // trimmed
    ['externalCode=dms-77', []], // case-sensitive
    ['status=active&channel=retail', newestFirst(activeRetailCentral, activeRetailRouted)],
    ['status=active&channel=retail&region=Central', [activeRetailCentral]],
    ['status=blocked&externalCode=DMS-77', []],
  ];
  for (const [query, expected] of expectations) {
    const res = await list(caller, query);
    t.is(res.status, 200, query);
    t.deepEqual(ids(res), expected, query);
    t.false(res.body.hasMore, query);
  }
  const coded = await list(caller, 'externalCode=DMS-77');
  t.deepEqual(coded.body.data[0].externalCodes, { dms: 'DMS-77' });

  const bad = await list(caller, 'status=closed');
  t.is(bad.status, 400);
  t.deepEqual(fieldsOf(bad), ['/query/status']);
});

test("an organisation never sees another organisation's customers, with or without filters and cursors", async (t) => {
  const mine = await createCaller(pool());
  const theirs = await createCaller(pool());
  const myIds = await seed(mine.organizationId, many(6, { status: 'active' }));
  const theirIds = await seed(theirs.organizationId, many(6, { status: 'active' }));
  await pool().query(
    "INSERT INTO external_codes (organization_id, resource, code_system, code, record_id) VALUES ($1, 'customer', 'dms', 'SHARED-1', $2), ($3, 'customer', 'dms', 'SHARED-1', $4)",
    [mine.organizationId, myIds[0], theirs.organizationId, theirIds[0]],
  );

  t.deepEqual((await walk(mine, 'limit=4')).flatMap(ids), [...myIds].reverse());
  t.deepEqual((await walk(theirs, 'limit=4')).flatMap(ids), [...theirIds].reverse());
  t.deepEqual(ids(await list(mine, 'status=active&limit=100')), [...myIds].reverse());
  t.deepEqual(ids(await list(mine, 'externalCode=SHARED-1')), [myIds[0]]);
  t.deepEqual(ids(await list(theirs, 'externalCode=SHARED-1')), [theirIds[0]]);
  t.deepEqual(ids(await list(mine, `updatedSince=${encodeURIComponent('2000-01-01T00:00:00.000Z')}&limit=100`)), myIds);

  // A cursor handed from one organisation to the other is refused.
  const theirCursor: string = (await list(theirs, 'limit=1')).body.nextCursor;
  const crossed = await list(mine, `limit=100&cursor=${encodeURIComponent(theirCursor)}`);
  t.like(crossed.body, { status: 400, code: 'invalid_field', errors: [{ field: '/query/cursor' }] });
});

test('a filtered page stops within the read budget: it may come back empty with hasMore true, and following the cursors finds the rare matches', async (t) => {
  const caller = await createCaller(pool());
  const matching = await seed(caller.organizationId, many(2, { status: 'active' })); // older than the rest
  await seed(caller.organizationId, many(READ_BUDGET + 50, { status: 'inactive' }));

  const first = await list(caller, 'status=active&limit=10');
  t.is(first.status, 200);
  t.deepEqual(first.body.data, [], 'the first page read its budget of non-matching rows');
  t.true(first.body.hasMore);
  t.is(typeof first.body.nextCursor, 'string');

  const pages = await walk(caller, 'status=active&limit=10', 10);
  t.deepEqual(pages.flatMap(ids), [...matching].reverse());
  t.false(pages.at(-1)!.body.hasMore);
  t.is(pages.at(-1)!.body.nextCursor, null);
  t.true(pages.length <= Math.ceil((READ_BUDGET + 52) / READ_BUDGET) + 1, `${pages.length} pages`);
  t.true(pages.flatMap((page) => page.body.data).every((c: { status: string }) => c.status === 'active'));

  // Unfiltered, the same table pages normally: the budget is only for filtered pages.
  const unfiltered = await list(caller, 'limit=100');
  t.is(unfiltered.body.data.length, 100);
  t.true(unfiltered.body.hasMore);
});

test('updatedSince may be sent with its colons as they are, not percent-encoded', async (t) => {
  const caller = await createCaller(api().pool);
  const res = await api().request('GET', '/customers?updatedSince=2000-01-01T00:00:00.000Z&limit=1', {
    headers: caller.auth,
  });
  t.is(res.status, 200);
});

test('a cursor from another list is refused: a /customers cursor sent to /products (or /routes) is 400 invalid_field naming /query/cursor, "issued by another list"', async (t) => {
  const caller = await createCaller(pool());
  await seed(caller.organizationId, many(3));
  const cursor: string = (await list(caller, 'limit=1')).body.nextCursor;
  t.is(typeof cursor, 'string');
  for (const path of ['/products', '/routes']) {
    const res = await api().request('GET', `${path}?limit=1&cursor=${encodeURIComponent(cursor)}`, {
      headers: caller.auth,
    });
    t.is(res.status, 400, path);
    t.like(res.body, { status: 400, code: 'invalid_field' }, path);
    t.deepEqual(
      res.body.errors,
      [{ field: '/query/cursor', code: 'invalid_field', message: 'issued by another list' }],
      path,
    );
  }
});
