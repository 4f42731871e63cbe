// The trips reads over HTTP (the rules of moving trips are proved in test/domain/trips.test.ts): lists and their
// filters, the change feed, reads by id, 403 module_disabled, 404 for a filter id of another organisation, the GPS
// trail's position only with customers:pii, the trail's `since` feed resuming from its cursor, and trip.closed
// delivered as a webhook.
import test from 'ava';
import { operatorActor, type Actor, type OperatorActor } from '../../server/platform/access/actor.js';
import { locations } from '../../server/modules/locations/service.js';
import { products } from '../../server/modules/products/service.js';
import { routes } from '../../server/modules/routes/service.js';
import { salespeople } from '../../server/modules/salespeople/service.js';
import { postStockAdjustment } from '../../server/modules/stock/documents.js';
import {
  departTrip,
  loadTrip,
  openTrip,
  recordTripLocations,
  returnTrip,
} from '../../server/modules/trips/documents.js';
import { getTrip } from '../../server/modules/trips/service.js';
import { closeTripWithNothingToSettle } from '../../server/modules/settlements/documents.js';
import { actingOrganization, getOrganization } from '../../server/platform/access/organizations.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { inTransaction, type Tx } from '../../server/platform/database/transaction.js';
import { createCaller, type TestCaller } from '../support/callers.js';
import { useTestService } from '../support/service.js';
import { addEndpoint } from '../../server/platform/webhooks/endpoints.js';
import { webhookEventTypes } from '../../server/composition/modules.js';
import { sleep, startReceiver, verifySignature } from '../webhooks/receiver.js';

/** A trip closes with its settlement; these trips sell nothing, so each closes with a settlement of zero. */
async function closeTrip(tx: Tx, actor: Actor, tripId: string) {
  await closeTripWithNothingToSettle(tx, actor, tripId);
  return getTrip(tx, actor, tripId);
}

const api = useTestService(test, 'trips', { env: { WEBHOOK_ALLOW_LOOPBACK: 'true' } });
const db = () => kyselyOver(api().service.database.pool);
const get = (caller: TestCaller, path: string) => api().request('GET', path, { headers: caller.auth });

interface Organisation {
  caller: TestCaller;
  operator: OperatorActor;
  soda: string;
  warehouse: string;
  /** Route code -> its route, salesperson and van. */
  routes: Map<string, { route: string; salesperson: string; van: string }>;
}

/** An organisation with the delivery module, a stocked warehouse and two routes, each with its salesperson and van. */
async function organisation(): Promise<Organisation> {
  const caller = await createCaller(api().service.database.pool, { modules: ['delivery'] });
  const operator = operatorActor(
    actingOrganization(await getOrganization(db(), caller.organizationId)),
    'trips http test',
  );
  return inTransaction(db(), async (tx) => {
    const soda = await products.create(tx, operator, {
      productCode: '400001',
      name: 'Soda 300ml',
      packSize: 24,
      sellingUnits: ['case', 'bottle'],
    });
    const warehouse = await locations.create(tx, operator, { code: 'M01', name: 'Main' });
    await postStockAdjustment(tx, operator, {
      reasonCode: 'OPENING',
      lines: [{ productId: soda.id, locationId: warehouse.id, unit: 'case', quantity: 50, unitCost: '24000' }],
    });
    const byCode = new Map<string, { route: string; salesperson: string; van: string }>();
    for (const code of ['R01', 'R02']) {
      const route = await routes.create(tx, operator, { routeCode: code, name: code });
      const salesperson = await salespeople.create(tx, operator, {
        salesmanCode: `S${code}`,
        name: `Salesman ${code}`,
        routeId: route.id,
      });
      const van = await locations.create(tx, operator, { code: `V_${code}-G`, name: `Van ${code}`, routeId: route.id });
      await routes.change(tx, operator, route.id, { salespersonId: salesperson.id, vanLocationId: van.id });
      byCode.set(code, { route: route.id, salesperson: salesperson.id, van: van.id });
    }
    return { caller, operator, soda: soda.id, warehouse: warehouse.id, routes: byCode };
  });
}

/** A trip of the route's van, moved as far as `until`. */
async function trip(
  o: Organisation,
  routeCode: string,
  businessDate: string,
  until: 'loading' | 'in_transit' | 'closed',
): Promise<string> {
  const { van } = o.routes.get(routeCode)!;
  return inTransaction(db(), async (tx) => {
    const opened = await openTrip(tx, o.operator, {
      vanLocationId: van,
      warehouseLocationId: o.warehouse,
      businessDate,
    });
    if (until === 'loading') return opened.id;
    await loadTrip(tx, o.operator, { tripId: opened.id, lines: [{ productId: o.soda, unit: 'case', quantity: 2 }] });
    await departTrip(tx, o.operator, opened.id);
    if (until === 'in_transit') return opened.id;
    await returnTrip(tx, o.operator, {
      tripId: opened.id,
      lines: [{ productId: o.soda, unit: 'case', countedQuantity: 2 }],
    });
    await closeTrip(tx, o.operator, opened.id);
    return opened.id;
  });
}

const ids = (body: { data: { id: string }[] }) => body.data.map((record) => record.id);

test('GET /trips lists newest first; status, salespersonId, routeId, vanLocationId and businessDate narrow it; GET /trips/{id} reads one', async (t) => {
  const o = await organisation();
  const closed = await trip(o, 'R01', '2026-11-20', 'closed');
  const out = await trip(o, 'R01', '2026-11-23', 'in_transit');
  const loading = await trip(o, 'R02', '2026-11-23', 'loading');
  const r01 = o.routes.get('R01')!;

  const all = await get(o.caller, '/trips');
  t.is(all.status, 200);
  t.deepEqual(ids(all.body), [loading, out, closed]);
  t.like(all.body.data[2], {
    id: closed,
    number: 'TRP-000001',
    status: 'closed',
    routeId: r01.route,
    salespersonId: r01.salesperson,
    vanLocationId: r01.van,
    businessDate: '2026-11-20',
  });

  const filtered = async (query: string) => ids((await get(o.caller, `/trips?${query}`)).body);
  t.deepEqual(await filtered('status=in_transit'), [out]);
  t.deepEqual(await filtered('status=closed'), [closed]);
  t.deepEqual(await filtered(`salespersonId=${r01.salesperson}`), [out, closed]);
  t.deepEqual(await filtered(`routeId=${o.routes.get('R02')!.route}`), [loading]);
  t.deepEqual(await filtered(`vanLocationId=${r01.van}`), [out, closed]);
  t.deepEqual(await filtered('businessDate=2026-11-23'), [loading, out]);
  t.deepEqual(await filtered(`businessDate=2026-11-23&routeId=${r01.route}`), [out], 'filters combine');

  const one = await get(o.caller, `/trips/${out}`);
  t.is(one.status, 200);
  t.like(one.body, { id: out, status: 'in_transit', returnedAt: null, closedAt: null });
  t.truthy(one.body.departedAt);

  const other = await organisation();
  const foreign = await get(other.caller, `/trips/${out}`);
  t.is(foreign.status, 404);
  t.is(foreign.body.code, 'not_found');
});

test('GET /trips?updatedSince= is a change feed, oldest change first: a trip that moves comes after the others', async (t) => {
  const o = await organisation();
  const first = await trip(o, 'R01', '2026-11-23', 'loading');
  const second = await trip(o, 'R02', '2026-11-23', 'loading');
  const epoch = '2000-01-01T00:00:00.000Z';
  t.deepEqual(ids((await get(o.caller, `/trips?updatedSince=${epoch}`)).body), [first, second]);
  await inTransaction(db(), (tx) => departTrip(tx, o.operator, first));
  const feed = await get(o.caller, `/trips?updatedSince=${epoch}&limit=1`);
  t.deepEqual(ids(feed.body), [second]);
  t.true(feed.body.hasMore);
  const next = await get(o.caller, `/trips?updatedSince=${epoch}&limit=1&cursor=${feed.body.nextCursor}`);
  t.deepEqual(ids(next.body), [first]);
  t.is(next.body.data[0].status, 'in_transit');
});

test('a filter id of another organisation (or of none) is 404 not_found naming the filter; the trips of another organisation never show', async (t) => {
  const o = await organisation();
  const other = await organisation();
  await trip(other, 'R01', '2026-11-23', 'loading');
  const foreign = other.routes.get('R01')!;
  for (const [filter, id] of [
    ['salespersonId', foreign.salesperson],
    ['routeId', foreign.route],
    ['vanLocationId', foreign.van],
    ['routeId', 'rte_01JD4R7Q8S6T9V3X5Z7B9D1F3H'],
  ] as const) {
    const res = await get(o.caller, `/trips?${filter}=${id}`);
    t.is(res.status, 404, filter);
    t.like(res.body, { code: 'not_found', errors: [{ field: `/query/${filter}` }] });
  }
  t.deepEqual((await get(o.caller, '/trips')).body.data, []);
  t.is(
    (await get(o.caller, `/trips?routeId=${o.routes.get('R01')!.route}`)).status,
    200,
    "the organisation's own id is fine",
  );
});

test('with the delivery module off, every trips read is 403 module_disabled', async (t) => {
  const o = await organisation();
  const id = await trip(o, 'R01', '2026-11-23', 'loading');
  await db()
    .updateTable('organizations')
    .set({ delivery_module_enabled: false })
    .where('id', '=', o.caller.organizationId)
    .execute();
  // The key cache hears of the change by NOTIFY; wait until the service sees it.
  for (let i = 0; i < 50 && (await get(o.caller, '/trips')).status === 200; i += 1)
    await new Promise((resolve) => setTimeout(resolve, 50));
  for (const path of ['/trips', `/trips/${id}`, `/trips/${id}/locations`]) {
    const res = await get(o.caller, path);
    t.is(res.status, 403, path);
    t.is(res.body.code, 'module_disabled', path);
  }
});

test("the sandbox API log never keeps a trip's GPS fixes (latitude, longitude, accuracy are x-personal), though the customers:pii caller read them", async (t) => {
  const o = await organisation();
  const id = await trip(o, 'R01', '2026-11-23', 'in_transit');
  await inTransaction(db(), (tx) =>
    recordTripLocations(tx, o.operator, id, [
      { recordedAt: '2026-11-23T06:00:00Z', latitude: 0.314159, longitude: 32.581234, accuracyMeters: 7.5 },
    ]),
  );
  const read = await get(o.caller, `/trips/${id}/locations`);
  t.like(read.body.data[0], { latitude: 0.314159, longitude: 32.581234, accuracyMeters: 7.5 });
  await api().service.apiLog.flush();
  const { rows } = await api().service.database.pool.query(
    'SELECT response_body FROM api_log WHERE organization_id = $1 AND path = $2',
    [o.caller.organizationId, `/api/v1/trips/${id}/locations`],
  );
  t.is(rows.length, 1);
  const logged = JSON.parse(rows[0].response_body as string);
  t.deepEqual(Object.keys(logged.data[0]).sort(), ['createdAt', 'id', 'recordedAt', 'tripId', 'updatedAt']);
  for (const value of ['0.314159', '32.581234', '7.5'])
    t.false((rows[0].response_body as string).includes(value), value);
});

test('the GPS trail: the position only with customers:pii (omitted, not null, without it); a since feed, oldest first, that resumes from its cursor', async (t) => {
  const o = await organisation();
  const id = await trip(o, 'R01', '2026-11-23', 'in_transit');
  const record = (points: [string, number, number][]) =>
    inTransaction(db(), (tx) =>
      recordTripLocations(
        tx,
        o.operator,
        id,
        points.map(([recordedAt, latitude, longitude]) => ({ recordedAt, latitude, longitude, accuracyMeters: 10 })),
      ),
    );
  await record([
    ['2026-11-23T06:00:00Z', 0.31, 32.58],
    ['2026-11-23T06:10:00Z', 0.32, 32.59],
    ['2026-11-23T06:20:00Z', 0.33, 32.6],
  ]);
  const between = new Date().toISOString();
  await new Promise((resolve) => setTimeout(resolve, 20));
  await record([
    ['2026-11-23T06:30:00Z', 0.34, 32.61],
    ['2026-11-23T06:40:00Z', 0.35, 32.62],
  ]);

  const withPii = await get(o.caller, `/trips/${id}/locations?limit=100`);
  t.is(withPii.status, 200);
  t.is(withPii.body.data.length, 5);
  t.like(
    withPii.body.data.find((p: { recordedAt: string }) => p.recordedAt === '2026-11-23T06:00:00.000Z'),
    { tripId: id, latitude: 0.31, longitude: 32.58, accuracyMeters: 10 },
  );

  const reader = await createCaller(api().service.database.pool, {
    organizationId: o.caller.organizationId,
    scopes: ['trips:read'],
  });
  const withoutPii = await get(reader, `/trips/${id}/locations?limit=100`);
  t.is(withoutPii.status, 200);
  t.deepEqual(ids(withoutPii.body), ids(withPii.body));
  for (const point of withoutPii.body.data) {
    t.false('latitude' in point || 'longitude' in point || 'accuracyMeters' in point);
  }

  // Oldest change first, by (updatedAt, id); pages of two resume from nextCursor without a repeat or a gap.
  const sorted = [...withPii.body.data].sort((a, b) =>
    a.updatedAt === b.updatedAt ? (a.id < b.id ? -1 : 1) : a.updatedAt < b.updatedAt ? -1 : 1,
  );
  t.deepEqual(
    ids(withPii.body),
    sorted.map((p) => p.id),
  );
  const walked: string[] = [];
  let cursor: string | null = null;
  do {
    const page: { body: { data: { id: string }[]; nextCursor: string | null } } = await get(
      o.caller,
      `/trips/${id}/locations?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
    );
    walked.push(...ids(page.body));
    cursor = page.body.nextCursor;
  } while (cursor);
  t.deepEqual(walked, ids(withPii.body));

  const later = await get(o.caller, `/trips/${id}/locations?since=${between}`);
  t.deepEqual(later.body.data.map((p: { recordedAt: string }) => p.recordedAt).sort(), [
    '2026-11-23T06:30:00.000Z',
    '2026-11-23T06:40:00.000Z',
  ]);

  // A cursor of one trip's trail is refused on another's; a trip of another organisation is 404.
  const otherTrip = await trip(o, 'R02', '2026-11-23', 'loading');
  const firstPage = await get(o.caller, `/trips/${id}/locations?limit=2`);
  const misused = await get(o.caller, `/trips/${otherTrip}/locations?limit=2&cursor=${firstPage.body.nextCursor}`);
  t.is(misused.status, 400);
  t.like(misused.body, { code: 'invalid_field', errors: [{ field: '/query/cursor' }] });
  const stranger = await organisation();
  t.is((await get(stranger.caller, `/trips/${id}/locations`)).status, 404);
});

test('bad query values are 400 naming the parameter: an unknown status, a date that is not one, a since that is not a timestamp', async (t) => {
  const o = await organisation();
  const id = await trip(o, 'R01', '2026-11-23', 'loading');
  for (const [path, field] of [
    ['/trips?status=lost', '/query/status'],
    ['/trips?businessDate=23-11-2026', '/query/businessDate'],
    [`/trips/${id}/locations?since=yesterday`, '/query/since'],
  ] as const) {
    const res = await get(o.caller, path);
    t.is(res.status, 400, path);
    t.like(res.body, { code: 'invalid_field', errors: [{ field }] });
  }
});

test('trip.closed is delivered as a webhook whose object is the trip as GET /trips/{id} returns it; the other moves are not', async (t) => {
  const o = await organisation();
  const hook = await startReceiver();
  t.teardown(() => hook.close());
  const endpoint = await addEndpoint(
    db(),
    { policy: { allowLoopback: true }, secretKey: api().config.webhookSecretKey, eventTypes: webhookEventTypes },
    { organizationId: o.caller.organizationId, url: hook.url, events: ['*'] },
  );
  const id = await trip(o, 'R01', '2026-11-23', 'closed');
  const deliveries = async () => hook.received.filter((r) => String(r.body?.type).startsWith('trip.'));
  for (let i = 0; i < 100 && (await deliveries()).length === 0; i += 1) await sleep(100);
  await sleep(500); // any other trip event would have come by now
  const trips = await deliveries();
  t.deepEqual(
    trips.map((r) => r.body.type),
    ['trip.closed'],
  );
  const [delivery] = trips;
  t.true(verifySignature(delivery!.headers['service-signature'] as string, delivery!.raw, endpoint.secret).valid);
  const read = await get(o.caller, `/trips/${id}`);
  t.deepEqual(delivery!.body.data.object, read.body);
  t.is(delivery!.body.data.object.status, 'closed');
});
