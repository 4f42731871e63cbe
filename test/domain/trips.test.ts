// The rules of delivery trips, proved at the service level (posting functions with an operator, no HTTP): the
// lifecycle loading -> in_transit -> returned -> closed and the moves refused outside it (409), one open trip per
// van (also under concurrent opens), the load refused after departure, the return's count posting the difference and
// sending the rest back, a failure in the middle of a return leaving no trace, the GPS trail's checks, and the
// delivery module switch. The harness runs the ledger checker over every organisation when the file closes.
import test, { type ExecutionContext } from 'ava';
import { ApiError } from '../../server/platform/errors/api-error.js';
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
import type { Tx } from '../../server/platform/database/transaction.js';
import { jobActor, type Actor, type OperatorActor } from '../../server/platform/access/actor.js';
import { webhookEventTypes, webhookObjects } from '../../server/composition/modules.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';

/** A trip closes with its settlement; these trips sell nothing, so each closes with a settlement of zero. */
async function closeTrip(tx: Tx, actor: Actor, tripId: string) {
  await closeTripWithNothingToSettle(tx, actor, tripId);
  return getTrip(tx, actor, tripId);
}

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('trips');
});
test.after.always(async () => {
  await world?.close();
});

interface Fleet {
  operator: OperatorActor;
  soda: string;
  water: string;
  warehouse: string;
  van: string;
  badStock: string;
  route: string;
  salesperson: string;
}

/** An organisation with the delivery module: two products stocked in M01, route R01 with its salesperson and van. */
async function fleet(): Promise<Fleet> {
  const { operator } = await world.organization({ modules: ['delivery'] });
  return world.post(async (tx) => {
    const soda = await products.create(tx, operator, {
      productCode: '300001',
      name: 'Soda 300ml',
      packSize: 24,
      sellingUnits: ['case', 'bottle'],
    });
    const water = await products.create(tx, operator, {
      productCode: '300002',
      name: 'Water 500ml',
      packSize: 12,
      sellingUnits: ['case', 'bottle'],
    });
    const route = await routes.create(tx, operator, { routeCode: 'R01', name: 'Kampala Central' });
    const salesperson = await salespeople.create(tx, operator, {
      salesmanCode: 'SM01',
      name: 'Joseph Okello',
      routeId: route.id,
    });
    const warehouse = await locations.create(tx, operator, { code: 'M01', name: 'Main' });
    const van = await locations.create(tx, operator, { code: 'V_R01-G', name: 'Van R01', routeId: route.id });
    const badStock = await locations.create(tx, operator, { code: 'V_R01-B', name: 'Van R01 bad', routeId: route.id });
    await routes.change(tx, operator, route.id, { salespersonId: salesperson.id, vanLocationId: van.id });
    await postStockAdjustment(tx, operator, {
      reasonCode: 'OPENING',
      lines: [
        { productId: soda.id, locationId: warehouse.id, unit: 'case', quantity: 20, unitCost: '24000' },
        { productId: water.id, locationId: warehouse.id, unit: 'case', quantity: 10, unitCost: '6000' },
      ],
    });
    return {
      operator,
      soda: soda.id,
      water: water.id,
      warehouse: warehouse.id,
      van: van.id,
      badStock: badStock.id,
      route: route.id,
      salesperson: salesperson.id,
    };
  });
}

const open = (f: Fleet, businessDate = '2026-11-23') =>
  world.post((tx) =>
    openTrip(tx, f.operator, { vanLocationId: f.van, warehouseLocationId: f.warehouse, businessDate }),
  );

const level = async (locationId: string, productId: string) =>
  (
    await world.db
      .selectFrom('stock_levels')
      .select('quantity')
      .where('location_id', '=', locationId)
      .where('product_id', '=', productId)
      .executeTakeFirst()
  )?.quantity ?? 0;

const eventsOf = async (tripId: string) =>
  (
    await world.db
      .selectFrom('events')
      .select('type')
      .where('record_id', '=', tripId)
      .orderBy('created_at')
      .orderBy('id')
      .execute()
  ).map((row) => row.type);

const documentsOf = async (tripId: string) =>
  (await world.db.selectFrom('stock_documents').select(['type', 'reason_code']).where('trip_id', '=', tripId).execute())
    .map((row) => `${row.type}:${row.reason_code ?? '-'}`)
    .sort();

async function refusal(t: ExecutionContext, promise: Promise<unknown>): Promise<ApiError> {
  return (await t.throwsAsync(promise, { instanceOf: ApiError })) as ApiError;
}

test('the lifecycle: open (the route, salesperson and bad-stock location found from the van), load, depart, return, close; each move stamps its time and writes its event', async (t) => {
  const f = await fleet();
  const opened = await open(f);
  t.like(opened, {
    number: 'TRP-000001',
    status: 'loading',
    source: 'erp',
    vanLocationId: f.van,
    badStockLocationId: f.badStock,
    warehouseLocationId: f.warehouse,
    routeId: f.route,
    salespersonId: f.salesperson,
    businessDate: '2026-11-23',
    departedAt: null,
    returnedAt: null,
    closedAt: null,
  });

  const loaded = await world.post((tx) =>
    loadTrip(tx, f.operator, { tripId: opened.id, lines: [{ productId: f.soda, unit: 'case', quantity: 5 }] }),
  );
  t.is(loaded.trip.status, 'loading');
  t.is(loaded.documents[0]!.tripId, opened.id);
  t.deepEqual([await level(f.warehouse, f.soda), await level(f.van, f.soda)], [15 * 24, 5 * 24]);

  const departed = await world.post((tx) => departTrip(tx, f.operator, opened.id));
  t.is(departed.status, 'in_transit');
  t.truthy(departed.departedAt);
  const returned = await world.post((tx) =>
    returnTrip(tx, f.operator, { tripId: opened.id, lines: [{ productId: f.soda, unit: 'case', countedQuantity: 5 }] }),
  );
  t.is(returned.trip.status, 'returned');
  t.truthy(returned.trip.returnedAt);
  const closed = await world.post((tx) => closeTrip(tx, f.operator, opened.id));
  t.like(closed, { status: 'closed', number: 'TRP-000001' });
  t.truthy(closed.closedAt);
  t.true(closed.updatedAt >= closed.closedAt!);
  t.deepEqual(await eventsOf(opened.id), [
    'trip.opened',
    'trip.loaded',
    'trip.departed',
    'trip.returned',
    'trip.closed',
  ]);
  t.deepEqual(
    await documentsOf(opened.id),
    ['transfer:-', 'transfer:-'],
    'the load and the return: a count that agrees with the books posts no adjustment',
  );
  t.deepEqual([await level(f.warehouse, f.soda), await level(f.van, f.soda)], [20 * 24, 0], 'everything came back');

  // trip.closed is a webhook event whose object is the trip as GET /trips/{id} returns it, read by the delivery job
  // (no scopes); the other moves are outbox rows no endpoint can subscribe to.
  t.true(webhookEventTypes.includes('trip.closed'));
  t.false(webhookEventTypes.some((type) => type.startsWith('trip.') && type !== 'trip.closed'));
  t.deepEqual(
    await webhookObjects['trip.closed']!.read(
      world.db,
      jobActor(f.operator.organization, 'webhooks.deliver'),
      opened.id,
    ),
    closed,
  );
});

test('moves outside the table are 409 invalid_state and change nothing: close or return while loading, depart twice, load after departure, anything once closed', async (t) => {
  const f = await fleet();
  const trip = await open(f);
  for (const [name, attempt] of [
    ['close while loading', () => world.post((tx) => closeTrip(tx, f.operator, trip.id))],
    ['return while loading', () => world.post((tx) => returnTrip(tx, f.operator, { tripId: trip.id, lines: [] }))],
  ] as const) {
    const error = await refusal(t, attempt());
    t.is(error.code, 'invalid_state', name);
    t.regex(error.detail, /is loading/, name);
  }
  await world.post((tx) => departTrip(tx, f.operator, trip.id));
  t.is(
    (
      await refusal(
        t,
        world.post((tx) => departTrip(tx, f.operator, trip.id)),
      )
    ).code,
    'invalid_state',
    'depart twice',
  );

  const late = await refusal(
    t,
    world.post((tx) =>
      loadTrip(tx, f.operator, { tripId: trip.id, lines: [{ productId: f.soda, unit: 'case', quantity: 1 }] }),
    ),
  );
  t.is(late.code, 'invalid_state');
  t.regex(late.detail, /in_transit; load is allowed only from loading/);
  t.deepEqual(
    [await level(f.warehouse, f.soda), await level(f.van, f.soda)],
    [20 * 24, 0],
    'a refused load moved nothing',
  );
  t.deepEqual(await documentsOf(trip.id), []);

  await world.post((tx) => returnTrip(tx, f.operator, { tripId: trip.id, lines: [] }));
  await world.post((tx) => closeTrip(tx, f.operator, trip.id));
  for (const attempt of [() => closeTrip, () => departTrip]) {
    t.is(
      (
        await refusal(
          t,
          world.post((tx) => attempt()(tx, f.operator, trip.id)),
        )
      ).code,
      'invalid_state',
    );
  }
  t.is(
    (
      await refusal(
        t,
        world.post((tx) =>
          recordTripLocations(tx, f.operator, trip.id, [
            { recordedAt: '2026-11-23T08:00:00Z', latitude: 0.3, longitude: 32.5 },
          ]),
        ),
      )
    ).code,
    'invalid_state',
    'a closed trail is final',
  );
  t.deepEqual(
    await eventsOf(trip.id),
    ['trip.opened', 'trip.departed', 'trip.returned', 'trip.closed'],
    'refused moves wrote no event',
  );
});

test('a van has one trip that is not closed: a second open is 422 naming /vanLocationId, even when two opens race; after the close a new trip opens', async (t) => {
  const f = await fleet();
  const outcomes = await Promise.allSettled([open(f), open(f), open(f)]);
  const opened = outcomes.filter((o) => o.status === 'fulfilled');
  t.is(opened.length, 1, 'exactly one of three concurrent opens');
  for (const o of outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected')) {
    t.like(o.reason, { code: 'business_rule' });
    t.deepEqual(
      (o.reason as ApiError).errors?.map((e) => e.field),
      ['/vanLocationId'],
    );
  }
  const first = (opened[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof open>>>).value;
  t.is(first.number, 'TRP-000001', 'refused opens gave their number back');
  await world.post(async (tx) => {
    await departTrip(tx, f.operator, first.id);
    await returnTrip(tx, f.operator, { tripId: first.id, lines: [] });
  });
  t.is((await refusal(t, open(f, '2026-11-24'))).code, 'business_rule', 'returned is not closed yet');
  await world.post((tx) => closeTrip(tx, f.operator, first.id));
  t.like(await open(f, '2026-11-24'), { number: 'TRP-000002', status: 'loading' });
});

test("the return: the count's difference from the books is one TRIP_COUNT adjustment naming the trip, and all that was counted goes back to the warehouse", async (t) => {
  const f = await fleet();
  const trip = await open(f);
  await world.post((tx) =>
    loadTrip(tx, f.operator, {
      tripId: trip.id,
      lines: [
        { productId: f.soda, unit: 'case', quantity: 4 },
        { productId: f.water, unit: 'case', quantity: 2 },
      ],
    }),
  );
  await world.post((tx) => departTrip(tx, f.operator, trip.id));

  // A count that leaves out a product the van holds is refused, naming /lines; nothing moves.
  const partial = await refusal(
    t,
    world.post((tx) =>
      returnTrip(tx, f.operator, {
        tripId: trip.id,
        lines: [{ productId: f.soda, unit: 'bottle', countedQuantity: 90 }],
      }),
    ),
  );
  t.is(partial.code, 'business_rule');
  t.deepEqual(
    partial.errors?.map((e) => e.field),
    ['/lines'],
  );
  t.regex(partial.errors![0]!.message, new RegExp(f.water));

  // Soda: 96 bottles loaded, 90 counted (6 missing). Water: 24 loaded, 2 cases counted (as the books say).
  const { trip: returned, documents } = await world.post((tx) =>
    returnTrip(tx, f.operator, {
      tripId: trip.id,
      lines: [
        { productId: f.soda, unit: 'bottle', countedQuantity: 90 },
        { productId: f.water, unit: 'case', countedQuantity: 2 },
      ],
    }),
  );
  t.is(returned.status, 'returned');
  const [count, back] = documents;
  t.like(count, { type: 'adjustment', reasonCode: 'TRIP_COUNT', tripId: trip.id });
  t.deepEqual(
    count!.movements.map((m) => [m.productId, m.fromLocationId, m.toLocationId, m.quantity]),
    [[f.soda, f.van, null, 6]],
    'only the difference moves',
  );
  t.like(back, { type: 'transfer', tripId: trip.id });
  t.deepEqual(
    back!.movements.map((m) => [m.productId, m.fromLocationId, m.toLocationId, m.quantity]),
    [
      [f.soda, f.van, f.warehouse, 90],
      [f.water, f.van, f.warehouse, 24],
    ],
  );
  t.deepEqual([await level(f.van, f.soda), await level(f.van, f.water)], [0, 0], 'the van is empty');
  t.deepEqual(
    [await level(f.warehouse, f.soda), await level(f.warehouse, f.water)],
    [480 - 6, 120],
    'the warehouse has all but the loss',
  );
});

test('a failure in the middle of a return (the warehouse was switched off, so the transfer back is refused after the count) leaves no trace', async (t) => {
  const f = await fleet();
  const trip = await open(f);
  await world.post((tx) =>
    loadTrip(tx, f.operator, { tripId: trip.id, lines: [{ productId: f.soda, unit: 'case', quantity: 3 }] }),
  );
  await world.post((tx) => departTrip(tx, f.operator, trip.id));
  await world.post((tx) => locations.change(tx, f.operator, f.warehouse, { active: false }));

  const error = await refusal(
    t,
    world.post((tx) =>
      returnTrip(tx, f.operator, { tripId: trip.id, lines: [{ productId: f.soda, unit: 'case', countedQuantity: 2 }] }),
    ),
  );
  t.is(error.code, 'business_rule');
  t.deepEqual(
    error.errors?.map((e) => e.field),
    ['/toLocationId'],
  );
  const row = await world.db
    .selectFrom('trips')
    .select(['status', 'returned_at'])
    .where('id', '=', trip.id)
    .executeTakeFirstOrThrow();
  t.deepEqual(row, { status: 'in_transit', returned_at: null });
  t.deepEqual(
    await documentsOf(trip.id),
    ['transfer:-'],
    "only the load: the count's adjustment was rolled back with the rest",
  );
  t.is(await level(f.van, f.soda), 72, 'the van still holds what was loaded');
  t.deepEqual(await eventsOf(trip.id), ['trip.opened', 'trip.loaded', 'trip.departed']);

  await world.post((tx) => locations.change(tx, f.operator, f.warehouse, { active: true }));
  const retried = await world.post((tx) =>
    returnTrip(tx, f.operator, { tripId: trip.id, lines: [{ productId: f.soda, unit: 'case', countedQuantity: 2 }] }),
  );
  t.is(retried.trip.status, 'returned', 'the same return succeeds once the warehouse is back');
});

test('an open names a good-stock van, an active main warehouse and records of the organisation; each refusal names its field and writes nothing', async (t) => {
  const f = await fleet();
  const other = await fleet();
  const cases: [string, Parameters<typeof openTrip>[2], string, string][] = [
    [
      "the van's bad-stock location",
      { vanLocationId: f.badStock, warehouseLocationId: f.warehouse, businessDate: '2026-11-23' },
      'business_rule',
      '/vanLocationId',
    ],
    [
      "another organisation's van",
      { vanLocationId: other.van, warehouseLocationId: f.warehouse, businessDate: '2026-11-23' },
      'business_rule',
      '/vanLocationId',
    ],
    [
      'a van as the warehouse',
      { vanLocationId: f.van, warehouseLocationId: f.badStock, businessDate: '2026-11-23' },
      'business_rule',
      '/warehouseLocationId',
    ],
    [
      "another organisation's route",
      { vanLocationId: f.van, warehouseLocationId: f.warehouse, businessDate: '2026-11-23', routeId: other.route },
      'business_rule',
      '/routeId',
    ],
    [
      "another organisation's salesperson",
      {
        vanLocationId: f.van,
        warehouseLocationId: f.warehouse,
        businessDate: '2026-11-23',
        salespersonId: other.salesperson,
      },
      'business_rule',
      '/salespersonId',
    ],
    [
      'no such date',
      { vanLocationId: f.van, warehouseLocationId: f.warehouse, businessDate: '2026-02-30' },
      'invalid_field',
      '/businessDate',
    ],
  ];
  for (const [name, command, code, field] of cases) {
    const error = await refusal(
      t,
      world.post((tx) => openTrip(tx, f.operator, command)),
    );
    t.is(error.code as string, code, name);
    t.deepEqual(
      error.errors?.map((e) => e.field),
      [field],
      name,
    );
  }
  t.is(
    (
      await world.db
        .selectFrom('trips')
        .select('id')
        .where('organization_id', '=', f.operator.organization.id)
        .execute()
    ).length,
    0,
  );
});

test('the GPS trail: points are stored with 6 decimals; a bad point is refused naming it and none of the batch is stored', async (t) => {
  const f = await fleet();
  const trip = await open(f);
  t.is(
    await world.post((tx) =>
      recordTripLocations(tx, f.operator, trip.id, [
        { recordedAt: '2026-11-23T08:00:00+03:00', latitude: 0.3155561, longitude: 32.5811114, accuracyMeters: 8 },
        { recordedAt: '2026-11-23T05:01:00Z', latitude: -0.1, longitude: 32.6 },
      ]),
    ),
    2,
  );
  const bad = await refusal(
    t,
    world.post((tx) =>
      recordTripLocations(tx, f.operator, trip.id, [
        { recordedAt: '2026-11-23T05:02:00Z', latitude: 0.2, longitude: 32.6 },
        { recordedAt: '2026-11-23T05:03:00Z', latitude: 91, longitude: 32.6 },
      ]),
    ),
  );
  t.is(bad.code, 'invalid_field');
  t.deepEqual(
    bad.errors?.map((e) => e.field),
    ['/points/1/latitude'],
  );
  const rows = await world.db
    .selectFrom('trip_locations')
    .select(['recorded_at', 'latitude', 'longitude', 'accuracy_meters'])
    .where('trip_id', '=', trip.id)
    .orderBy('recorded_at')
    .execute();
  t.deepEqual(
    rows.map((r) => [r.recorded_at.toISOString(), r.latitude, r.longitude, r.accuracy_meters]),
    [
      ['2026-11-23T05:00:00.000Z', '0.315556', '32.581111', '8.00'],
      ['2026-11-23T05:01:00.000Z', '-0.100000', '32.600000', null],
    ],
  );
});

test('with the delivery module off, every posting function is 403 module_disabled', async (t) => {
  const f = await fleet();
  const trip = await open(f);
  const off = { ...f.operator, organization: { ...f.operator.organization, deliveryModuleEnabled: false } };
  t.is(
    (
      await refusal(
        t,
        world.post((tx) =>
          openTrip(tx, off, { vanLocationId: f.van, warehouseLocationId: f.warehouse, businessDate: '2026-11-24' }),
        ),
      )
    ).code,
    'module_disabled',
  );
  t.is(
    (
      await refusal(
        t,
        world.post((tx) => departTrip(tx, off, trip.id)),
      )
    ).code,
    'module_disabled',
  );
  t.is(
    (
      await refusal(
        t,
        world.post((tx) => recordTripLocations(tx, off, trip.id, [])),
      )
    ).code,
    'module_disabled',
  );
  t.is(
    (await world.db.selectFrom('trips').select('status').where('id', '=', trip.id).executeTakeFirstOrThrow()).status,
    'loading',
  );
});
