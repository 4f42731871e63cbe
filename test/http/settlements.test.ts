// The settlement reads over HTTP (the rules of the sheet and of settling are proved in
// test/domain/settlements.test.ts): GET /trips/{id}/settlement before and after the settlement is closed, GET
// /settlements with at most 5 sheets a page and its filters and change feed, trips:read, 403 module_disabled, 404 for
// another organisation's trip or filter id, and settlement.closed delivered as a webhook carrying the sheet.
import test from 'ava';
import { operatorActor, type OperatorActor } from '../../server/platform/access/actor.js';
import { webhookEventTypes } from '../../server/composition/modules.js';
import { locations } from '../../server/modules/locations/service.js';
import { products } from '../../server/modules/products/service.js';
import { routes } from '../../server/modules/routes/service.js';
import { salespeople } from '../../server/modules/salespeople/service.js';
import { closeTripWithNothingToSettle, settleTrip } from '../../server/modules/settlements/documents.js';
import { postStockAdjustment } from '../../server/modules/stock/documents.js';
import { departTrip, loadTrip, openTrip, returnTrip } from '../../server/modules/trips/documents.js';
import { actingOrganization, getOrganization } from '../../server/platform/access/organizations.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { inTransaction } from '../../server/platform/database/transaction.js';
import { addEndpoint } from '../../server/platform/webhooks/endpoints.js';
import { createCaller, ALL_SCOPES, type TestCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';
import { sleep, startReceiver, verifySignature } from '../webhooks/receiver.js';

const api = useSharedService(test);
const db = () => kyselyOver(api().pool);
const get = (caller: TestCaller, path: string) => api().request('GET', path, { headers: caller.auth });

interface Organisation {
  caller: TestCaller;
  operator: OperatorActor;
  soda: string;
  warehouse: string;
  /** Route code -> its salesperson and van. */
  routes: Map<string, { salesperson: string; van: string }>;
}

/** An organisation with the delivery module, a stocked warehouse and two routes, each with its salesperson and van. */
async function organisation(): Promise<Organisation> {
  const caller = await createCaller(api().pool, { modules: ['delivery'] });
  const operator = operatorActor(
    actingOrganization(await getOrganization(db(), caller.organizationId)),
    'settlements http test',
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
    const byCode = new Map<string, { salesperson: string; van: string }>();
    for (const code of ['R01', 'R02']) {
      const route = await routes.create(tx, operator, { routeCode: code, name: code });
      const salesperson = await salespeople.create(tx, operator, {
        salesmanCode: `S${code}`,
        name: `Salesman ${code}`,
        routeId: route.id,
      });
      const van = await locations.create(tx, operator, { code: `V_${code}-G`, name: `Van ${code}`, routeId: route.id });
      await routes.change(tx, operator, route.id, { salespersonId: salesperson.id, vanLocationId: van.id });
      byCode.set(code, { salesperson: salesperson.id, van: van.id });
    }
    return { caller, operator, soda: soda.id, warehouse: warehouse.id, routes: byCode };
  });
}

/** A trip of the route's van loaded with 2 cases, out and back with 47 bottles counted (one missing); settled unless `open`. */
async function trip(
  o: Organisation,
  routeCode: string,
  businessDate: string,
  settle: 'zero' | 'expenses' | 'open' = 'zero',
): Promise<string> {
  const { van } = o.routes.get(routeCode)!;
  return inTransaction(db(), async (tx) => {
    const opened = await openTrip(tx, o.operator, {
      vanLocationId: van,
      warehouseLocationId: o.warehouse,
      businessDate,
    });
    await loadTrip(tx, o.operator, { tripId: opened.id, lines: [{ productId: o.soda, unit: 'case', quantity: 2 }] });
    await departTrip(tx, o.operator, opened.id);
    await returnTrip(tx, o.operator, {
      tripId: opened.id,
      lines: [{ productId: o.soda, unit: 'bottle', countedQuantity: 47 }],
    });
    if (settle === 'zero') await closeTripWithNothingToSettle(tx, o.operator, opened.id);
    if (settle === 'expenses') {
      await settleTrip(tx, o.operator, {
        tripId: opened.id,
        handedIn: '1000',
        expenses: [{ kind: 'allowance', amount: '15000', description: 'Crew lunch allowance' }],
      });
    }
    return opened.id;
  });
}

const tripIds = (body: { data: { tripId: string }[] }) => body.data.map((sheet) => sheet.tripId);

test('GET /trips/{id}/settlement: open (no handedIn, variance or expenses) until the settlement is closed, then closed with its figures; the van stock counted', async (t) => {
  const o = await organisation();
  const id = await trip(o, 'R01', '2026-11-23', 'open');
  const open = await get(o.caller, `/trips/${id}/settlement`);
  t.is(open.status, 200);
  t.like(open.body, {
    id: null,
    status: 'open',
    tripId: id,
    tripNumber: 'TRP-000001',
    tripStatus: 'returned',
    currency: 'UGX',
    handedIn: null,
    variance: null,
    closedAt: null,
    cashExpenses: { amount: '0', currency: 'UGX' },
    cashExpected: { amount: '0', currency: 'UGX' },
    expenses: [],
  });
  t.deepEqual(open.body.stock, [
    {
      productId: o.soda,
      unit: 'bottle',
      loaded: 48,
      sold: 0,
      returned: 0,
      returnedDamaged: 0,
      counted: 47,
      difference: -1,
    },
  ]);

  await inTransaction(db(), (tx) =>
    settleTrip(tx, o.operator, {
      tripId: id,
      handedIn: '1000',
      expenses: [{ kind: 'allowance', amount: '15000', description: 'Crew lunch allowance' }],
    }),
  );
  const closed = await get(o.caller, `/trips/${id}/settlement`);
  t.like(closed.body, {
    status: 'closed',
    tripStatus: 'closed',
    cashExpenses: { amount: '15000', currency: 'UGX' },
    cashExpected: { amount: '-15000', currency: 'UGX' },
    handedIn: { amount: '1000', currency: 'UGX' },
    variance: { amount: '16000', currency: 'UGX' },
  });
  t.regex(closed.body.id, /^stl_/);
  t.is(closed.body.expenses.length, 1);
  t.deepEqual((await get(o.caller, `/trips/${id}`)).body.status, 'closed', 'settling closed the trip');
});

test('GET /settlements: the closed settlements, 5 sheets a page at most (limit 1 to 5), newest first; tripId and salespersonId narrow it; updatedSince is a feed, oldest first', async (t) => {
  const o = await organisation();
  const r01: string[] = [];
  for (let day = 1; day <= 6; day += 1) r01.push(await trip(o, 'R01', `2026-11-0${day}`));
  const r02 = await trip(o, 'R02', '2026-11-10', 'expenses');
  const unsettled = await trip(o, 'R02', '2026-11-11', 'open');
  const newestFirst = [r02, ...[...r01].reverse()];

  const first = await get(o.caller, '/settlements');
  t.is(first.status, 200);
  t.deepEqual(tripIds(first.body), newestFirst.slice(0, 5), '5 sheets when no limit is given');
  t.true(first.body.hasMore);
  const second = await get(o.caller, `/settlements?cursor=${first.body.nextCursor}`);
  t.deepEqual(tripIds(second.body), newestFirst.slice(5));
  t.false(second.body.hasMore);
  t.false(tripIds(second.body).includes(unsettled), 'an open settlement is not listed');
  t.like(first.body.data[0], { status: 'closed', tripId: r02, variance: { amount: '16000', currency: 'UGX' } });

  const pages: string[][] = [];
  let cursor: string | null = null;
  do {
    const page = await get(o.caller, `/settlements?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
    pages.push(tripIds(page.body));
    cursor = page.body.nextCursor;
  } while (cursor);
  t.deepEqual(pages, [newestFirst.slice(0, 2), newestFirst.slice(2, 4), newestFirst.slice(4, 6), newestFirst.slice(6)]);

  const tooMany = await get(o.caller, '/settlements?limit=6');
  t.is(tooMany.status, 400);
  t.like(tooMany.body, { code: 'invalid_field', errors: [{ field: '/query/limit' }] });

  t.deepEqual(tripIds((await get(o.caller, `/settlements?tripId=${r01[2]}`)).body), [r01[2]]);
  t.deepEqual(
    tripIds((await get(o.caller, `/settlements?tripId=${unsettled}`)).body),
    [],
    'a trip of the organisation not settled yet: an empty page',
  );
  t.deepEqual(tripIds((await get(o.caller, `/settlements?salespersonId=${o.routes.get('R02')!.salesperson}`)).body), [
    r02,
  ]);

  await db()
    .updateTable('settlements')
    .set({ updated_at: new Date(Date.now() + 60_000) })
    .where('trip_id', '=', r01[0]!)
    .execute();
  const since = encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString());
  const feed = await get(o.caller, `/settlements?updatedSince=${since}`);
  const rest = await get(o.caller, `/settlements?updatedSince=${since}&cursor=${feed.body.nextCursor}`);
  t.deepEqual(
    [...tripIds(feed.body), ...tripIds(rest.body)],
    [...r01.slice(1), r02, r01[0]],
    'the feed is oldest change first: the settlement changed last comes last',
  );
});

test("404 for another organisation's trip and for a filter id of another organisation (naming the filter); 403 without trips:read; 403 module_disabled with the delivery module off", async (t) => {
  const o = await organisation();
  const other = await organisation();
  const foreign = await trip(other, 'R01', '2026-11-23');
  const own = await trip(o, 'R01', '2026-11-23');
  const notHers = await get(o.caller, `/trips/${foreign}/settlement`);
  t.is(notHers.status, 404);
  t.is(notHers.body.code, 'not_found');
  for (const [filter, id] of [
    ['tripId', foreign],
    ['salespersonId', other.routes.get('R01')!.salesperson],
    ['tripId', 'trp_01JD4T1A3C5E7G9J1K3M5P7R9T'],
  ] as const) {
    const res = await get(o.caller, `/settlements?${filter}=${id}`);
    t.is(res.status, 404, filter);
    t.like(res.body, { code: 'not_found', errors: [{ field: `/query/${filter}` }] });
  }
  t.deepEqual(
    tripIds((await get(o.caller, '/settlements')).body),
    [own],
    "another organisation's settlements never show",
  );

  const noTrips = await createCaller(api().pool, {
    organizationId: o.caller.organizationId,
    scopes: ALL_SCOPES.filter((scope) => scope !== 'trips:read'),
  });
  for (const path of [`/trips/${own}/settlement`, '/settlements']) {
    const res = await get(noTrips, path);
    t.is(res.status, 403, path);
    t.is(res.body.code, 'insufficient_scope', path);
  }

  await db()
    .updateTable('organizations')
    .set({ delivery_module_enabled: false })
    .where('id', '=', o.caller.organizationId)
    .execute();
  // The key cache hears of the change by NOTIFY; wait until the service sees it.
  for (let i = 0; i < 50 && (await get(o.caller, '/settlements')).status === 200; i += 1) await sleep(50);
  for (const path of [`/trips/${own}/settlement`, '/settlements']) {
    const res = await get(o.caller, path);
    t.is(res.status, 403, path);
    t.is(res.body.code, 'module_disabled', path);
  }
});

test('settlement.closed is delivered as a webhook whose object is the sheet as GET /trips/{id}/settlement returns it, with trip.closed', async (t) => {
  const o = await organisation();
  const hook = await startReceiver();
  t.teardown(() => hook.close());
  const endpoint = await addEndpoint(
    db(),
    { policy: { allowLoopback: true }, secretKey: api().config.webhookSecretKey, eventTypes: webhookEventTypes },
    { organizationId: o.caller.organizationId, url: hook.url, events: ['*'] },
  );
  const id = await trip(o, 'R01', '2026-11-23', 'expenses');
  const deliveries = () =>
    hook.received.filter((r) => ['settlement.closed', 'trip.closed'].includes(String(r.body?.type)));
  for (let i = 0; i < 100 && deliveries().length < 2; i += 1) await sleep(100);
  t.deepEqual(
    deliveries()
      .map((r) => r.body.type)
      .sort(),
    ['settlement.closed', 'trip.closed'],
  );
  const delivery = deliveries().find((r) => r.body.type === 'settlement.closed')!;
  t.true(verifySignature(delivery.headers['service-signature'] as string, delivery.raw, endpoint.secret).valid);
  t.deepEqual(delivery.body.data.object, (await get(o.caller, `/trips/${id}/settlement`)).body);
});
