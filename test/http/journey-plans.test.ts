import test from 'ava';
import { newId } from '../../server/platform/ids.js';
import { createCaller, type TestCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';

const api = useSharedService(test);
const pool = () => api().pool;
let sequence = 0;

// Routes and customers are made by SQL, so that these tests depend on no other module's HTTP.
async function route(organizationId: string): Promise<string> {
  const id = newId('rte');
  await pool().query(
    'INSERT INTO routes (organization_id, id, route_code, name, active) VALUES ($1, $2, $3, $4, true)',
    [organizationId, id, `R${++sequence}`, `Route ${sequence}`],
  );
  return id;
}
async function customers(organizationId: string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => newId('cus'));
  await pool().query(
    `INSERT INTO customers (organization_id, id, outlet_code, name, status, channel)
     SELECT $1, id, 'UG' || lpad((4000000 + row_number() OVER () + $3)::text, 7, '0'), 'Outlet', 'active', 'retail' FROM unnest($2::text[]) AS id`,
    [organizationId, ids, (sequence += count)],
  );
  return ids;
}
const put = (caller: TestCaller, body: unknown, headers: Record<string, string> = {}) =>
  api().request('PUT', '/journey-plans', { headers: { ...caller.auth, ...headers }, json: body });
const events = async (recordId: string) =>
  (await pool().query('SELECT type FROM events WHERE record_id = $1 ORDER BY created_at, id', [recordId])).rows.map(
    (r) => r.type,
  );
const storedVisits = async (planId: string) =>
  (
    await pool().query(
      'SELECT customer_id, weekday, sequence, frequency, week_parity FROM journey_plan_visits WHERE journey_plan_id = $1 ORDER BY weekday, sequence',
      [planId],
    )
  ).rows;
const planCount = async (organizationId: string) =>
  (await pool().query('SELECT count(*)::int AS n FROM journey_plans WHERE organization_id = $1', [organizationId]))
    .rows[0].n as number;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('the first PUT of a route creates its plan (201), later ones replace the visits whole (200), move updatedAt and write journey_plan.updated', async (t) => {
  const caller = await createCaller(pool());
  const routeId = await route(caller.organizationId);
  const [a, b, c] = await customers(caller.organizationId, 3);
  const first = await put(caller, {
    routeId,
    visits: [
      { customerId: b, weekday: 2, sequence: 1, frequency: 'weekly' },
      { customerId: a, weekday: 1, sequence: 2, frequency: 'biweekly', weekParity: 1 },
      { customerId: c, weekday: 1, sequence: 1, frequency: 'weekly', weekParity: null },
    ],
  });
  t.is(first.status, 201);
  t.regex(first.body.id, /^jpl_[0-9A-HJKMNP-TV-Z]{26}$/);
  t.deepEqual(
    first.body.visits,
    [
      { customerId: c, weekday: 1, sequence: 1, frequency: 'weekly', weekParity: null },
      { customerId: a, weekday: 1, sequence: 2, frequency: 'biweekly', weekParity: 1 },
      { customerId: b, weekday: 2, sequence: 1, frequency: 'weekly', weekParity: null },
    ],
    'ordered by weekday then sequence; weekly visits have a null parity',
  );
  t.is(first.body.createdAt, first.body.updatedAt);
  t.deepEqual(
    (await api().request('GET', `/journey-plans/${first.body.id}`, { headers: caller.auth })).body,
    first.body,
  );

  await sleep(5);
  const second = await put(caller, {
    routeId,
    visits: [{ customerId: a, weekday: 5, sequence: 1, frequency: 'biweekly', weekParity: 0 }],
  });
  t.is(second.status, 200);
  t.like(second.body, { id: first.body.id, createdAt: first.body.createdAt });
  t.true(second.body.updatedAt > first.body.updatedAt);
  t.deepEqual(
    await storedVisits(first.body.id),
    [{ customer_id: a, weekday: 5, sequence: 1, frequency: 'biweekly', week_parity: 0 }],
    'the old visits are gone',
  );
  t.deepEqual(await events(first.body.id), ['journey_plan.updated', 'journey_plan.updated']);

  const cleared = await put(caller, { routeId, visits: [] });
  t.is(cleared.status, 200);
  t.deepEqual(cleared.body.visits, []);
  t.deepEqual(await storedVisits(first.body.id), []);
  t.is(await planCount(caller.organizationId), 1);
});

test('a retry with the same Idempotency-Key replays the first answer; with a new key it finds the same plan', async (t) => {
  const caller = await createCaller(pool());
  const routeId = await route(caller.organizationId);
  const [a] = await customers(caller.organizationId, 1);
  const body = { routeId, visits: [{ customerId: a, weekday: 3, sequence: 1, frequency: 'weekly' }] };
  const first = await put(caller, body, { 'Idempotency-Key': 'plan-1' });
  const replay = await put(caller, body, { 'Idempotency-Key': 'plan-1' });
  t.is(replay.status, 201);
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  t.is(replay.text, first.text);
  const retry = await put(caller, body, { 'Idempotency-Key': 'plan-2' });
  t.is(retry.status, 200);
  t.is(retry.body.id, first.body.id);
  t.is(await planCount(caller.organizationId), 1);
  t.deepEqual(await events(first.body.id), ['journey_plan.updated', 'journey_plan.updated']);
});

test('concurrent first PUTs of one route make exactly one plan', async (t) => {
  const caller = await createCaller(pool());
  const routeId = await route(caller.organizationId);
  const [a] = await customers(caller.organizationId, 1);
  const answers = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      put(caller, { routeId, visits: [{ customerId: a, weekday: 1 + (i % 7), sequence: 1, frequency: 'weekly' }] }),
    ),
  );
  t.deepEqual(answers.map((a) => a.status).sort(), [200, 200, 200, 200, 200, 200, 200, 201]);
  t.is(new Set(answers.map((a) => a.body.id)).size, 1);
  t.is(await planCount(caller.organizationId), 1);
  t.is((await storedVisits(answers[0]!.body.id)).length, 1, 'the last replacement wins whole');
});

test('an unknown route and unknown customers are all reported at once (422, /routeId and each /visits/N/customerId) and nothing changes', async (t) => {
  const caller = await createCaller(pool());
  const other = await createCaller(pool());
  const routeId = await route(caller.organizationId);
  const [mine] = await customers(caller.organizationId, 1);
  const [theirs] = await customers(other.organizationId, 1);
  const existing = await put(caller, {
    routeId,
    visits: [{ customerId: mine, weekday: 1, sequence: 1, frequency: 'weekly' }],
  });

  const badCustomers = await put(caller, {
    routeId,
    visits: [
      { customerId: mine, weekday: 2, sequence: 1, frequency: 'weekly' },
      { customerId: theirs, weekday: 2, sequence: 2, frequency: 'weekly' },
      { customerId: 'cus_nothere', weekday: 3, sequence: 1, frequency: 'weekly' },
    ],
  });
  t.is(badCustomers.status, 422);
  t.is(badCustomers.body.code, 'customer_not_found');
  t.deepEqual(
    badCustomers.body.errors.map((e: { field: string; code: string }) => [e.field, e.code]),
    [
      ['/visits/1/customerId', 'customer_not_found'],
      ['/visits/2/customerId', 'customer_not_found'],
    ],
  );

  const theirRoute = await route(other.organizationId);
  const badRoute = await put(caller, {
    routeId: theirRoute,
    visits: [{ customerId: mine, weekday: 2, sequence: 1, frequency: 'weekly' }],
  });
  t.is(badRoute.status, 422);
  t.like(badRoute.body, { code: 'business_rule', errors: [{ field: '/routeId', code: 'route_not_found' }] });
  t.is(badRoute.body.errors.length, 1);

  const both = await put(caller, {
    routeId: 'rte_nothere',
    visits: [{ customerId: theirs, weekday: 1, sequence: 1, frequency: 'weekly' }],
  });
  t.deepEqual(
    both.body.errors.map((e: { field: string }) => e.field),
    ['/routeId', '/visits/0/customerId'],
  );

  t.is(await planCount(caller.organizationId), 1);
  t.deepEqual(await storedVisits(existing.body.id), [
    { customer_id: mine, weekday: 1, sequence: 1, frequency: 'weekly', week_parity: null },
  ]);
  t.deepEqual(await events(existing.body.id), ['journey_plan.updated']);
});

test('two visits on one weekday and sequence, or one customer twice on a weekday, are 422 business_rule naming both rows', async (t) => {
  const caller = await createCaller(pool());
  const routeId = await route(caller.organizationId);
  const [a, b, c] = await customers(caller.organizationId, 3);
  const slot = await put(caller, {
    routeId,
    visits: [
      { customerId: a, weekday: 1, sequence: 1, frequency: 'weekly' },
      { customerId: b, weekday: 2, sequence: 1, frequency: 'weekly' },
      { customerId: c, weekday: 1, sequence: 1, frequency: 'weekly' },
    ],
  });
  t.is(slot.status, 422);
  t.is(slot.body.code, 'business_rule');
  t.deepEqual(
    slot.body.errors.map((e: { field: string; code: string }) => [e.field, e.code]),
    [
      ['/visits/0/sequence', 'duplicate_visit'],
      ['/visits/2/sequence', 'duplicate_visit'],
    ],
  );

  const twice = await put(caller, {
    routeId,
    visits: [
      { customerId: a, weekday: 4, sequence: 1, frequency: 'weekly' },
      { customerId: a, weekday: 5, sequence: 1, frequency: 'weekly' },
      { customerId: a, weekday: 4, sequence: 2, frequency: 'biweekly', weekParity: 0 },
    ],
  });
  t.is(twice.status, 422);
  t.deepEqual(
    twice.body.errors.map((e: { field: string }) => e.field),
    ['/visits/0/customerId', '/visits/2/customerId'],
  );
  t.is(await planCount(caller.organizationId), 0, 'nothing was written');
});

test('biweekly needs weekParity and weekly must not have one (400); unknown and over-long fields are 400', async (t) => {
  const caller = await createCaller(pool());
  const routeId = await route(caller.organizationId);
  const [a] = await customers(caller.organizationId, 1);
  const missing = await put(caller, {
    routeId,
    visits: [{ customerId: a, weekday: 1, sequence: 1, frequency: 'biweekly' }],
  });
  t.is(missing.status, 400);
  t.is(missing.body.code, 'required_field');
  t.true(
    missing.body.errors.some(
      (e: { field: string; code: string }) => e.field === '/visits/0/weekParity' && e.code === 'required_field',
    ),
    JSON.stringify(missing.body.errors),
  );
  const extra = await put(caller, {
    routeId,
    visits: [{ customerId: a, weekday: 1, sequence: 1, frequency: 'weekly', weekParity: 1 }],
  });
  t.is(extra.status, 400);
  t.is(extra.body.code, 'invalid_field');
  t.true(
    extra.body.errors.some(
      (e: { field: string; code: string }) => e.field === '/visits/0/weekParity' && e.code === 'invalid_field',
    ),
    JSON.stringify(extra.body.errors),
  );
  const nullParity = await put(caller, {
    routeId,
    visits: [{ customerId: a, weekday: 1, sequence: 1, frequency: 'biweekly', weekParity: null }],
  });
  t.is(nullParity.status, 400);
  const badDay = await put(caller, {
    routeId,
    visits: [{ customerId: a, weekday: 8, sequence: 0, frequency: 'daily' }],
  });
  t.is(badDay.status, 400);
  t.deepEqual(
    new Set(badDay.body.errors.map((e: { field: string }) => e.field)),
    new Set(['/visits/0/weekday', '/visits/0/sequence', '/visits/0/frequency']),
  );
  const unknown = await put(caller, { routeId, visits: [], note: 'x' });
  t.like(unknown.body, { code: 'unknown_field', errors: [{ field: '/note' }] });
  const longRoute = await put(caller, { routeId: 'r'.repeat(65), visits: [] });
  t.like(longRoute.body, { code: 'invalid_field', errors: [{ field: '/routeId' }] });
  t.is(await planCount(caller.organizationId), 0);
});

test('GET /journey-plans filters by routeId, lists newest first, and with updatedSince is a feed by updatedAt; visits come with each plan', async (t) => {
  const caller = await createCaller(pool());
  const [a, b] = await customers(caller.organizationId, 2);
  const routes = [
    await route(caller.organizationId),
    await route(caller.organizationId),
    await route(caller.organizationId),
  ];
  const since = new Date().toISOString();
  const plans = [];
  for (const routeId of routes) {
    plans.push(
      (
        await put(caller, {
          routeId,
          visits: [
            { customerId: b, weekday: 2, sequence: 1, frequency: 'weekly' },
            { customerId: a, weekday: 1, sequence: 1, frequency: 'weekly' },
          ],
        })
      ).body,
    );
    await sleep(5);
  }
  await put(caller, { routeId: routes[0], visits: [{ customerId: a, weekday: 6, sequence: 1, frequency: 'weekly' }] });

  const newest = await api().request('GET', '/journey-plans?limit=2', { headers: caller.auth });
  t.deepEqual(
    newest.body.data.map((p: { id: string }) => p.id),
    [plans[2].id, plans[1].id],
  );
  t.true(newest.body.hasMore);
  t.deepEqual(
    newest.body.data[0].visits.map((v: { weekday: number }) => v.weekday),
    [1, 2],
  );
  const rest = await api().request(
    'GET',
    `/journey-plans?limit=2&cursor=${encodeURIComponent(newest.body.nextCursor)}`,
    { headers: caller.auth },
  );
  t.deepEqual(
    rest.body.data.map((p: { id: string }) => p.id),
    [plans[0].id],
  );

  const feed = await api().request('GET', `/journey-plans?updatedSince=${encodeURIComponent(since)}`, {
    headers: caller.auth,
  });
  t.deepEqual(
    feed.body.data.map((p: { id: string }) => p.id),
    [plans[1].id, plans[2].id, plans[0].id],
    'the replaced plan comes last',
  );
  t.deepEqual(feed.body.data[2].visits, [
    { customerId: a, weekday: 6, sequence: 1, frequency: 'weekly', weekParity: null },
  ]);

  const byRoute = await api().request('GET', `/journey-plans?routeId=${routes[1]}`, { headers: caller.auth });
  t.deepEqual(
    byRoute.body.data.map((p: { id: string }) => p.id),
    [plans[1].id],
  );
});

test("another organisation's plan is 404 by id and absent from lists", async (t) => {
  const owner = await createCaller(pool());
  const other = await createCaller(pool());
  const routeId = await route(owner.organizationId);
  const plan = (await put(owner, { routeId, visits: [] })).body;
  const byId = await api().request('GET', `/journey-plans/${plan.id}`, { headers: other.auth });
  t.is(byId.status, 404);
  t.is(byId.body.code, 'not_found');
  const list = await api().request('GET', `/journey-plans?routeId=${routeId}`, { headers: other.auth });
  t.deepEqual(list.body.data, []);
  const takeOver = await put(other, { routeId, visits: [] });
  t.is(takeOver.status, 422, 'a route of another organisation cannot be planned');
});

test('reading needs journey-plans:read and replacing needs journey-plans:write (403 insufficient_scope)', async (t) => {
  const owner = await createCaller(pool());
  const reader = await createCaller(pool(), { organizationId: owner.organizationId, scopes: ['journey-plans:read'] });
  const writer = await createCaller(pool(), { organizationId: owner.organizationId, scopes: ['journey-plans:write'] });
  const routeId = await route(owner.organizationId);
  const refused = await put(reader, { routeId, visits: [] });
  t.is(refused.status, 403);
  t.is(refused.body.code, 'insufficient_scope');
  t.is(await planCount(owner.organizationId), 0);
  const written = await put(writer, { routeId, visits: [] });
  t.is(written.status, 201);
  t.is((await api().request('GET', '/journey-plans', { headers: writer.auth })).status, 403);
  t.is((await api().request('GET', `/journey-plans/${written.body.id}`, { headers: reader.auth })).status, 200);
});

test('a plan of 5000 visits is replaced in one request', async (t) => {
  const caller = await createCaller(pool());
  const routeId = await route(caller.organizationId);
  const ids = await customers(caller.organizationId, 1000);
  const visits = Array.from({ length: 5000 }, (_, i) => ({
    customerId: ids[i % 1000]!,
    weekday: 1 + Math.floor(i / 1000),
    sequence: 1 + (i % 1000),
    frequency: 'weekly',
  }));
  const res = await put(caller, { routeId, visits });
  t.is(res.status, 201);
  t.is(res.body.visits.length, 5000);
  t.is((await storedVisits(res.body.id)).length, 5000);
  const tooMany = await put(caller, {
    routeId,
    visits: [...visits, { customerId: ids[0]!, weekday: 6, sequence: 1, frequency: 'weekly' }],
  });
  t.like(tooMany.body, { code: 'invalid_field', errors: [{ field: '/visits' }] });
});
