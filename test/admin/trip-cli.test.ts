// `admin trip open|load|depart|gps|return|settle|close`, run as an operator runs them (each CLI process costs about 2 s of
// CPU, so one walk through the lifecycle and one bad input). The rules themselves are proved in
// test/domain/trips.test.ts; here, that each command reaches its posting function and prints the trip.
import test from 'ava';
import { locations } from '../../server/modules/locations/service.js';
import { products } from '../../server/modules/products/service.js';
import { routes } from '../../server/modules/routes/service.js';
import { salespeople } from '../../server/modules/salespeople/service.js';
import { postStockAdjustment } from '../../server/modules/stock/documents.js';
import { departTrip, loadTrip, openTrip, returnTrip } from '../../server/modules/trips/documents.js';
import { runCli, runCliJson } from '../support/cli.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('trip_cli');
});
test.after.always(async () => {
  await world?.close();
});

async function fleet() {
  const { organization, operator } = await world.organization({ modules: ['delivery'] });
  return world.post(async (tx) => {
    const soda = await products.create(tx, operator, {
      productCode: '500001',
      name: 'Soda 300ml',
      packSize: 24,
      sellingUnits: ['case', 'bottle'],
    });
    const route = await routes.create(tx, operator, { routeCode: 'R01', name: 'Central' });
    const salesperson = await salespeople.create(tx, operator, {
      salesmanCode: 'SM01',
      name: 'Joseph Okello',
      routeId: route.id,
    });
    const warehouse = await locations.create(tx, operator, { code: 'M01', name: 'Main' });
    const van = await locations.create(tx, operator, { code: 'V_R01-G', name: 'Van', routeId: route.id });
    await routes.change(tx, operator, route.id, { salespersonId: salesperson.id, vanLocationId: van.id });
    await postStockAdjustment(tx, operator, {
      reasonCode: 'OPENING',
      lines: [{ productId: soda.id, locationId: warehouse.id, unit: 'case', quantity: 10 }],
    });
    return {
      org: organization.id,
      operator,
      soda: soda.id,
      warehouse: warehouse.id,
      van: van.id,
      route: route.id,
      salesperson: salesperson.id,
    };
  });
}

test('a trip walked through its lifecycle with the CLI: open, load, depart, gps, return with a count, close; each --json prints the trip', async (t) => {
  const f = await fleet();
  const env = { DATABASE_URL: world.database.url };
  const opened = await runCliJson(
    ['trip', 'open', '--org', f.org, '--van', f.van, '--warehouse', f.warehouse, '--date', '2026-11-23'],
    env,
  );
  t.like(opened, {
    number: 'TRP-000001',
    status: 'loading',
    routeId: f.route,
    salespersonId: f.salesperson,
    businessDate: '2026-11-23',
  });
  const org = ['--org', f.org];
  t.like(await runCliJson(['trip', 'load', opened.id, ...org, '--lines', `${f.soda}:3`], env), {
    id: opened.id,
    status: 'loading',
  });
  t.like(await runCliJson(['trip', 'depart', opened.id, ...org], env), { status: 'in_transit' });
  const points = JSON.stringify([
    { recordedAt: '2026-11-23T06:00:00Z', latitude: 0.3136, longitude: 32.5811, accuracyMeters: 9 },
  ]);
  t.like(await runCliJson(['trip', 'gps', opened.id, ...org, '--points', points], env), { status: 'in_transit' });
  t.like(await runCliJson(['trip', 'return', opened.id, ...org, '--count', `${f.soda}:70:bottle`], env), {
    status: 'returned',
  });
  const closed = await runCliJson(['trip', 'close', opened.id, ...org], env);
  t.like(closed, { status: 'closed' });
  t.truthy(closed.closedAt);

  const level = async (locationId: string) =>
    (
      await world.db
        .selectFrom('stock_levels')
        .select('quantity')
        .where('location_id', '=', locationId)
        .where('product_id', '=', f.soda)
        .executeTakeFirstOrThrow()
    ).quantity;
  t.deepEqual(
    [await level(f.warehouse), await level(f.van)],
    [240 - 2, 0],
    'two bottles were missing at the count; the rest came back',
  );
  t.is((await world.db.selectFrom('trip_locations').select('id').where('trip_id', '=', opened.id).execute()).length, 1);
});

test("bad input: a malformed line is a usage error (exit 2, nothing done); a move the trip's status refuses is exit 1 with the reason", async (t) => {
  const f = await fleet();
  const env = { DATABASE_URL: world.database.url };
  const opened = await runCliJson(
    ['trip', 'open', '--org', f.org, '--van', f.van, '--warehouse', f.warehouse, '--date', '2026-11-24'],
    env,
  );
  const malformed = await runCli(['trip', 'load', opened.id, '--org', f.org, '--lines', `${f.soda}:three`], env);
  t.is(malformed.code, 2);
  t.regex(malformed.stderr, /PRODUCT_ID:QUANTITY\[:UNIT\]/);
  const early = await runCli(['trip', 'close', opened.id, '--org', f.org], env);
  t.is(early.code, 1);
  t.regex(early.stderr, /is loading; a trip is settled once it has returned/);
  t.is(
    (await world.db.selectFrom('stock_documents').select('id').where('trip_id', '=', opened.id).execute()).length,
    0,
  );
});

test('trip settle: the expenses as kind:amount:description[:receipt]; a fuel expense is refused (exit 1, nothing written), a malformed one is a usage error (exit 2); the settlement closes the trip; a second settle is refused', async (t) => {
  const f = await fleet();
  const env = { DATABASE_URL: world.database.url };
  const acting = f.operator;
  const tripId = await world.post(async (tx) => {
    const trip = await openTrip(tx, acting, {
      vanLocationId: f.van,
      warehouseLocationId: f.warehouse,
      businessDate: '2026-11-25',
    });
    await loadTrip(tx, acting, { tripId: trip.id, lines: [{ productId: f.soda, unit: 'case', quantity: 1 }] });
    await departTrip(tx, acting, trip.id);
    await returnTrip(tx, acting, { tripId: trip.id, lines: [{ productId: f.soda, unit: 'case', countedQuantity: 1 }] });
    return trip.id;
  });
  const settle = ['trip', 'settle', '--org', f.org, '--trip', tripId, '--handed-in', '0'];
  const settlements = async () =>
    (await world.db.selectFrom('settlements').select('id').where('trip_id', '=', tripId).execute()).length;

  const fuel = await runCli([...settle, '--expense', 'purchase:40000:Diesel for the van:RC-9'], env);
  t.is(fuel.code, 1);
  t.regex(fuel.stderr, /fuel is never paid from trip cash/);
  const malformed = await runCli([...settle, '--expense', 'allowance:lots:Crew lunch'], env);
  t.is(malformed.code, 2);
  t.regex(malformed.stderr, /the amount is a decimal/);
  t.is(await settlements(), 0);

  const sheet = await runCliJson(
    [...settle, '--expense', 'allowance:15000:Crew lunch', '--expense', 'purchase:8000:Puncture repair:RC-2231'],
    env,
  );
  t.like(sheet, {
    status: 'closed',
    tripId,
    tripStatus: 'closed',
    cashExpenses: { amount: '23000' },
    cashExpected: { amount: '-23000' },
    handedIn: { amount: '0' },
    variance: { amount: '23000' },
  });
  t.deepEqual(
    sheet.expenses.map((e: { kind: string; receiptReference: string | null }) => [e.kind, e.receiptReference]),
    [
      ['allowance', null],
      ['purchase', 'RC-2231'],
    ],
  );
  const again = await runCli(settle, env);
  t.is(again.code, 1);
  t.regex(again.stderr, /is settled already/);
  t.is(await settlements(), 1);
});

test('trip list, show and sheet name the salesperson and the products; the van stock comes as a table, JSON or CSV', async (t) => {
  const f = await fleet();
  const env = { DATABASE_URL: world.database.url };
  const tripId = await world.post(async (tx) => {
    const trip = await openTrip(tx, f.operator, {
      vanLocationId: f.van,
      warehouseLocationId: f.warehouse,
      businessDate: '2026-11-23',
    });
    await loadTrip(tx, f.operator, { tripId: trip.id, lines: [{ productId: f.soda, unit: 'case', quantity: 3 }] });
    await departTrip(tx, f.operator, trip.id);
    await returnTrip(tx, f.operator, {
      tripId: trip.id,
      lines: [{ productId: f.soda, unit: 'bottle', countedQuantity: 70 }],
    });
    return trip.id;
  });
  const org = ['--org', f.org];

  const listed = await runCliJson<{ trips: { id: string; status: string }[] }>(
    ['trip', 'list', ...org, '--status', 'returned'],
    env,
  );
  t.deepEqual(
    listed.trips.map((trip) => [trip.id, trip.status]),
    [[tripId, 'returned']],
  );
  t.deepEqual(
    (await runCliJson<{ trips: unknown[] }>(['trip', 'list', ...org, '--date', '2026-11-24'], env)).trips,
    [],
  );
  const table = await runCli(['trip', 'list', ...org], env);
  t.regex(
    table.stdout,
    /^NUMBER\s+ID\s+STATUS\s+SOURCE\s+DATE\s+SALESPERSON\s+VAN\nTRP-000001\s+trp_\w+\s+returned\s+\w+\s+2026-11-23\s+Joseph Okello \(SM01\)/,
  );

  const shown = await runCli(['trip', 'show', tripId, ...org], env);
  t.is(shown.code, 0, shown.stderr);
  t.regex(shown.stdout, /Trip TRP-000001 \(trp_\w+\)\n\s+status\s+returned\n/);
  t.regex(shown.stdout, /salesperson\s+Joseph Okello \(SM01\)/);
  t.regex(
    shown.stdout,
    /PRODUCT\s+NAME\s+UNIT\s+LOADED\s+SOLD\s+RETURNED\s+DAMAGED\s+COUNTED\s+DIFFERENCE\n500001\s+Soda 300ml\s+bottle\s+72\s+0\s+0\s+0\s+70\s+-2\n/,
  );
  const json = await runCliJson<{ trip: { id: string }; stock: Record<string, unknown>[] }>(
    ['trip', 'show', tripId, ...org],
    env,
  );
  t.is(json.trip.id, tripId);
  t.like(json.stock, [
    { productId: f.soda, productCode: '500001', productName: 'Soda 300ml', loaded: 72, counted: 70, difference: -2 },
  ]);
  const csv = await runCli(['trip', 'show', tripId, ...org, '--csv'], env);
  t.is(
    csv.stdout,
    'PRODUCT,NAME,UNIT,LOADED,SOLD,RETURNED,DAMAGED,COUNTED,DIFFERENCE\r\n500001,Soda 300ml,bottle,72,0,0,0,70,-2\r\n',
  );

  const sheet = await runCli(['trip', 'sheet', tripId, ...org], env);
  t.is(sheet.code, 0, sheet.stderr);
  t.regex(sheet.stdout, /^Settlement of trip TRP-000001 \(trp_\w+\): open\n/);
  t.regex(sheet.stdout, /cash expected\s+0\n/);
  t.regex(sheet.stdout, /500001\s+Soda 300ml\s+bottle\s+72/);
  const sheetJson = await runCliJson<{ tripId: string; stock: Record<string, unknown>[] }>(
    ['trip', 'sheet', tripId, ...org],
    env,
  );
  t.is(sheetJson.tripId, tripId);
  t.like(sheetJson.stock, [{ productName: 'Soda 300ml', productCode: '500001' }]);
  t.is((await runCli(['trip', 'sheet', 'trp_missing', ...org], env)).code, 1);
  t.is((await runCli(['trip', 'list', ...org, '--status', 'parked'], env)).code, 2);
});
