import test from 'ava';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { bootstrapSandbox } from '../../server/modules/sandbox/bootstrap.js';
// The registries the posting functions read (the customer account reads the invoice's lifecycle there).
import '../../server/composition/modules.js';
import { auditStock } from '../../server/modules/stock/audit.js';
import { auditCustomerAccount } from '../../server/modules/customer-account/audit.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { kyselyOver } from '../../server/platform/database/database.js';

// Two fresh databases, each bootstrapped once: the sandbox distributor's relations, and that the seed alone
// decides its codes and names.
interface Bootstrapped {
  database: TestDatabase;
  pool: pg.Pool;
  organizationId: string;
  millis: number;
}
const runs: Bootstrapped[] = [];
const dataDir = mkdtempSync(join(tmpdir(), 'erp-sandbox-data-'));

test.before(async () => {
  for (const label of ['sandbox-data-a', 'sandbox-data-b']) {
    const database = await createTestDatabase(label);
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    const started = performance.now();
    const created = await bootstrapSandbox(kyselyOver(pool), join(dataDir, label), pino({ level: 'silent' }));
    runs.push({ database, pool, organizationId: created!.organizationId, millis: performance.now() - started });
  }
});
test.after.always(async () => {
  for (const run of runs) {
    await run.pool.end();
    await run.database.drop();
  }
  rmSync(dataDir, { recursive: true, force: true });
});

const rows = async (sql: string, run = runs[0]!) => (await run.pool.query(sql)).rows;

test('three weeks of field activity: two visits per route and working day, activities and competitor observations on them, some with a PNG photo', async (t) => {
  const [counts] =
    await rows(`SELECT (SELECT count(*)::int FROM visits) AS visits, (SELECT count(*)::int FROM outlet_activities) AS activities,
    (SELECT count(*)::int FROM competitor_observations) AS observations, (SELECT count(*)::int FROM photos) AS photos,
    (SELECT count(DISTINCT visit_date)::int FROM visits) AS days, (SELECT count(*)::int FROM visits WHERE extract(isodow FROM visit_date) = 7) AS sundays`);
  t.is(counts.days, 18, 'Monday to Saturday of three weeks');
  t.is(counts.sundays, 0);
  t.true(counts.visits >= 150 && counts.visits <= 200, `${counts.visits} visits`);
  t.true(counts.activities >= 40 && counts.activities < counts.visits, `${counts.activities} activities`);
  t.true(counts.observations >= 20 && counts.observations < counts.visits, `${counts.observations} observations`);
  t.true(counts.photos >= 5 && counts.photos < counts.observations, `${counts.photos} photos`);
  const photos = await rows('SELECT content_type, bytes, sha256 FROM photos');
  for (const photo of photos) {
    t.is(photo.content_type, 'image/png');
    t.is(createHash('sha256').update(photo.bytes).digest('hex'), photo.sha256);
    t.true(
      inflateSync(photo.bytes.subarray(41, 41 + photo.bytes.readUInt32BE(33))).length === 12 * (1 + 16 * 3),
      'a 16x12 RGB image that inflates',
    );
  }
  const strays =
    await rows(`SELECT count(*)::int AS n FROM competitor_observations o JOIN visits v ON v.organization_id = o.organization_id AND v.id = o.visit_id
    WHERE v.customer_id <> o.customer_id OR v.visit_date <> o.observed_at`);
  t.is(strays[0].n, 0, "each observation is at its visit's outlet, on its day");
});

test('about 40 products with 6-digit codes; empties carry a deposit and no tax, and the empties of a returnable case are empties (1 crate and 24 bottles per case)', async (t) => {
  const products = await rows(
    'SELECT id, product_code, name, brand, category, pack_size, selling_units, tax_rate::text AS tax_rate, is_empty, deposit_amount::text AS deposit, deposit_currency, empties FROM products',
  );
  t.true(products.length >= 35 && products.length <= 45, `${products.length} products`);
  t.true(products.every((p) => /^\d{6}$/.test(p.product_code)));
  const byId = new Map(products.map((p) => [p.id, p]));
  const empties = products.filter((p) => p.is_empty);
  t.true(empties.length >= 2);
  for (const empty of empties) {
    t.truthy(empty.deposit, empty.name);
    t.is(empty.deposit_currency, 'UGX');
    t.deepEqual(empty.empties, []);
  }
  const beverages = products.filter((p) => !p.is_empty);
  for (const product of beverages) {
    t.is(product.tax_rate, '18.00');
    t.true([12, 24].includes(product.pack_size));
    t.is(product.selling_units[0], 'case');
    t.is(product.deposit, null);
    t.truthy(product.brand);
    for (const carried of product.empties)
      t.true(byId.get(carried.productId)?.is_empty, `${product.name} carries an empty`);
  }
  const returnable = beverages.filter((p) => p.empties.length > 0);
  t.true(returnable.length >= 10, `${returnable.length} returnable products`);
  for (const product of returnable) {
    t.deepEqual(
      product.empties.map((e: { quantity: number; per: string }) => [e.quantity, e.per]),
      [
        [1, 'case'],
        [product.pack_size, 'case'],
      ],
    );
  }
  t.true(new Set(beverages.map((p) => p.category)).size >= 4);
});

test('every beverage has one price per price group and selling unit, in whole shillings; retail pays more than wholesale', async (t) => {
  const missing = await rows(`
    SELECT p.product_code, g.price_group, u.unit FROM products p
      CROSS JOIN (VALUES ('RETAIL-A'), ('RETAIL-B'), ('WHOLESALE')) AS g(price_group)
      CROSS JOIN LATERAL unnest(p.selling_units) AS u(unit)
     WHERE NOT p.is_empty
       AND NOT EXISTS (SELECT 1 FROM prices r WHERE r.organization_id = p.organization_id AND r.product_id = p.id AND r.price_group = g.price_group AND r.unit = u.unit)`);
  t.deepEqual(missing, []);
  const [counts] =
    await rows(`SELECT count(*)::int AS prices, count(*) FILTER (WHERE amount <> round(amount) OR amount <= 0 OR currency <> 'UGX')::int AS odd,
    count(*) FILTER (WHERE product_id NOT IN (SELECT id FROM products WHERE NOT is_empty))::int AS foreign_products FROM prices`);
  t.like(counts, { odd: 0, foreign_products: 0 });
  t.true(counts.prices >= 200);
  const cheaper =
    await rows(`SELECT a.product_id FROM prices a JOIN prices w ON w.product_id = a.product_id AND w.unit = a.unit AND w.price_group = 'WHOLESALE'
    WHERE a.price_group = 'RETAIL-A' AND a.amount <= w.amount`);
  t.deepEqual(cheaper, []);
});

test('5 routes R01..R05, each with its salesperson and a good and a bad van; two main warehouses and a damages store', async (t) => {
  const routes =
    await rows(`SELECT r.route_code, s.salesman_code, s.name, s.phone, s.route_id = r.id AS salesperson_on_route, v.code AS van,
      (SELECT array_agg(l.code || ':' || l.stock_condition ORDER BY l.code) FROM locations l WHERE l.route_id = r.id AND l.kind = 'van') AS vans
    FROM routes r JOIN salespeople s ON s.id = r.salesperson_id JOIN locations v ON v.id = r.van_location_id ORDER BY r.route_code`);
  t.deepEqual(
    routes.map((r) => r.route_code),
    ['R01', 'R02', 'R03', 'R04', 'R05'],
  );
  for (const route of routes) {
    t.true(route.salesperson_on_route);
    t.truthy(route.name);
    t.regex(route.phone, /^\+256 7\d{2} \d{6}$/);
    t.is(route.van, `V_${route.route_code}-G`);
    t.deepEqual(route.vans, [`V_${route.route_code}-B:bad`, `V_${route.route_code}-G:good`]);
  }
  t.is(new Set(routes.map((r) => r.salesman_code)).size, 5);
  const depots = await rows(`SELECT code, kind FROM locations WHERE kind <> 'van' ORDER BY code`);
  t.deepEqual(depots, [
    { code: 'D01', kind: 'damages' },
    { code: 'M01', kind: 'main' },
    { code: 'M02', kind: 'main' },
  ]);
});

test("every outlet is on a route and in exactly its route's journey plan, with sequences in order per weekday", async (t) => {
  const [outlets] = await rows(
    `SELECT count(*)::int AS n, count(*) FILTER (WHERE route_id IS NULL)::int AS unrouted FROM customers`,
  );
  t.like(outlets, { n: 300, unrouted: 0 });
  const perRoute = await rows(`SELECT route_id, count(*)::int AS n FROM customers GROUP BY route_id`);
  t.is(perRoute.length, 5);
  t.true(
    perRoute.every((r) => r.n >= 30),
    JSON.stringify(perRoute.map((r) => r.n)),
  );
  const misplaced =
    await rows(`SELECT c.outlet_code, count(v.*) AS visits, bool_and(p.route_id = c.route_id) AS own_route
      FROM customers c LEFT JOIN journey_plan_visits v ON v.customer_id = c.id LEFT JOIN journey_plans p ON p.id = v.journey_plan_id
     GROUP BY c.outlet_code, c.route_id HAVING count(v.*) <> 1 OR NOT bool_and(p.route_id = c.route_id)`);
  t.deepEqual(misplaced, []);
  t.is((await rows('SELECT count(DISTINCT route_id)::int AS n FROM journey_plans'))[0].n, 5);
  const gaps = await rows(`SELECT journey_plan_id, weekday FROM journey_plan_visits GROUP BY journey_plan_id, weekday
    HAVING min(sequence) <> 1 OR max(sequence) <> count(*)`);
  t.deepEqual(gaps, [], 'sequences run 1..n on each weekday');
  const [frequencies] = await rows(`SELECT count(*) FILTER (WHERE frequency = 'biweekly')::int AS biweekly,
      count(*) FILTER (WHERE (frequency = 'biweekly') <> (week_parity IS NOT NULL))::int AS wrong_parity,
      count(*) FILTER (WHERE weekday NOT BETWEEN 1 AND 6)::int AS off_days FROM journey_plan_visits`);
  t.like(frequencies, { wrong_parity: 0, off_days: 0 });
  t.true(frequencies.biweekly > 20 && frequencies.biweekly < 150);
});

test('products, locations, salespeople, routes, outlets, orders, invoices and the adjustment credit note carry their dms code', async (t) => {
  const codes = await rows(
    `SELECT e.resource, count(*)::int AS n FROM external_codes e WHERE e.code_system = 'dms' GROUP BY e.resource ORDER BY e.resource`,
  );
  const [expected] =
    await rows(`SELECT (SELECT count(*) FROM customers)::int AS customer, (SELECT count(*) FROM credit_notes WHERE type = 'adjustment' AND trip_id IS NULL)::int AS credit_note, (SELECT count(*) FROM invoices)::int AS invoice, (SELECT count(*) FROM locations)::int AS location, (SELECT count(*) FROM sales_orders)::int AS "order",
    (SELECT count(*) FROM products)::int AS product, (SELECT count(*) FROM routes)::int AS route, (SELECT count(*) FROM salespeople)::int AS salesperson`);
  t.deepEqual(Object.fromEntries(codes.map((c) => [c.resource, c.n])), expected);
  const wrong = await rows(`SELECT e.* FROM external_codes e WHERE e.code_system = 'dms' AND NOT (
      (e.resource = 'product' AND e.code = (SELECT product_code FROM products WHERE id = e.record_id))
   OR (e.resource = 'location' AND e.code = (SELECT code FROM locations WHERE id = e.record_id))
   OR (e.resource = 'salesperson' AND e.code = (SELECT salesman_code FROM salespeople WHERE id = e.record_id))
   OR (e.resource = 'route' AND e.code = (SELECT route_code FROM routes WHERE id = e.record_id))
   OR (e.resource = 'customer' AND e.code = (SELECT outlet_code FROM customers WHERE id = e.record_id))
   OR (e.resource = 'credit_note' AND e.code = 'CN0000001' AND e.record_id = (SELECT id FROM credit_notes WHERE type = 'adjustment' AND trip_id IS NULL))
   OR (e.resource = 'invoice' AND e.code ~ '^CS-(M01-[0-9]{6}|R0[1-5]-2026[0-9]{4}-[12])$' AND e.record_id IN (SELECT id FROM invoices))
   OR (e.resource = 'order' AND e.code ~ '^SO-2026-[0-9]{4}$' AND e.record_id IN (SELECT id FROM sales_orders)))`);
  t.deepEqual(wrong, []);
});

test('two bootstraps on two databases give the same codes, names, prices, routes and plans (only ids differ)', async (t) => {
  const snapshot = async (run: Bootstrapped) => ({
    products: await rows(
      `SELECT product_code, name, brand, category, pack_size, selling_units, is_empty, deposit_amount::text,
        (SELECT jsonb_agg(jsonb_build_object('code', e.product_code, 'q', x->'quantity', 'per', x->'per')) FROM jsonb_array_elements(p.empties) x JOIN products e ON e.id = x->>'productId') AS empties
      FROM products p ORDER BY product_code`,
      run,
    ),
    prices: await rows(
      `SELECT p.product_code, r.price_group, r.unit, r.amount::text FROM prices r JOIN products p ON p.id = r.product_id ORDER BY 1, 2, 3`,
      run,
    ),
    locations: await rows(
      `SELECT l.code, l.kind, l.name, r.route_code FROM locations l LEFT JOIN routes r ON r.id = l.route_id ORDER BY l.code`,
      run,
    ),
    routes: await rows(
      `SELECT r.route_code, r.name, s.salesman_code, s.name AS salesperson, s.phone, v.code AS van FROM routes r
      JOIN salespeople s ON s.id = r.salesperson_id JOIN locations v ON v.id = r.van_location_id ORDER BY r.route_code`,
      run,
    ),
    outlets: await rows(
      `SELECT c.outlet_code, c.name, r.route_code FROM customers c JOIN routes r ON r.id = c.route_id ORDER BY c.outlet_code`,
      run,
    ),
    visits: await rows(
      `SELECT r.route_code, v.weekday, v.sequence, c.outlet_code, v.frequency, v.week_parity FROM journey_plan_visits v
      JOIN journey_plans p ON p.id = v.journey_plan_id JOIN routes r ON r.id = p.route_id JOIN customers c ON c.id = v.customer_id ORDER BY 1, 2, 3`,
      run,
    ),
  });
  const [a, b] = [await snapshot(runs[0]!), await snapshot(runs[1]!)];
  t.deepEqual(a, b);
  t.notDeepEqual(
    await rows('SELECT id FROM routes ORDER BY route_code', runs[0]),
    await rows('SELECT id FROM routes ORDER BY route_code', runs[1]),
  );
});

test('every main warehouse opens with stock of every beverage (in cases) and empty, posted through the ledger, which the checker finds in order', async (t) => {
  const run = runs[0]!;
  const query = async (text: string) => (await run.pool.query(text, [run.organizationId])).rows;
  const levels = await query(`SELECT l.code, count(*)::int AS products, min(s.quantity) AS least
                                FROM stock_levels s JOIN locations l ON l.organization_id = s.organization_id AND l.id = s.location_id
                               WHERE s.organization_id = $1 AND l.kind = 'main' GROUP BY l.code ORDER BY l.code`);
  const [{ n: tracked }] = await query(
    'SELECT count(*)::int AS n FROM products WHERE organization_id = $1 AND tracks_stock',
  );
  t.deepEqual(
    levels.map((l) => [l.code, l.products]),
    [
      ['M01', tracked],
      ['M02', tracked],
    ],
  );
  t.true(levels.every((l) => l.least > 0));
  const opening = await query(
    `SELECT number, reason_code FROM stock_documents WHERE organization_id = $1 AND reason_code = 'OPENING' AND number IN ('ADJ-000001', 'ADJ-000002') ORDER BY number`,
  );
  t.deepEqual(
    opening,
    [
      { number: 'ADJ-000001', reason_code: 'OPENING' },
      { number: 'ADJ-000002', reason_code: 'OPENING' },
    ],
    'the opening stock is the first two documents',
  );
  t.deepEqual(await auditStock(kyselyOver(run.pool), run.organizationId), []);
  t.deepEqual(await auditCustomerAccount(kyselyOver(run.pool), run.organizationId), []);
  const invoices = (
    await run.pool.query(
      'SELECT status, count(*)::int AS n FROM invoices WHERE organization_id = $1 AND trip_id IS NULL GROUP BY status ORDER BY status',
      [run.organizationId],
    )
  ).rows;
  t.deepEqual(
    invoices,
    [
      { status: 'open', n: 2 },
      { status: 'paid', n: 2 },
      { status: 'void', n: 1 },
    ],
    'a few invoices from the warehouse, one voided, two paid (in cash; by mobile money), one open again (its cheque bounced)',
  );
  const receipts = (
    await run.pool.query(
      `SELECT method, status, (invoice_id IS NULL) AS rest, count(*)::int AS n FROM payments WHERE organization_id = $1 AND trip_id IS NULL
                                           GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
      [run.organizationId],
    )
  ).rows;
  t.deepEqual(
    receipts,
    [
      { method: 'cash', status: 'posted', rest: false, n: 1 },
      { method: 'cheque', status: 'reversed', rest: false, n: 1 },
      { method: 'mobile_money', status: 'posted', rest: false, n: 1 },
      { method: 'mobile_money', status: 'posted', rest: true, n: 1 },
    ],
    'a few collections: a bounced cheque, a rest left on the account',
  );
});

test('the sandbox has stock history: empties from and back to the supplier, transfers, a write-off, and outlets holding empties', async (t) => {
  const run = runs[0]!;
  const query = async (text: string) => (await run.pool.query(text, [run.organizationId])).rows;
  const types = await query(
    'SELECT type, count(*)::int AS n FROM stock_documents WHERE organization_id = $1 GROUP BY type ORDER BY type',
  );
  t.deepEqual(
    types.map((row) => row.type),
    ['adjustment', 'empties_receipt', 'empties_return', 'return', 'transfer'],
  );
  t.true(types.every((row) => row.n >= 1));
  const empties = await query(
    'SELECT type, count(DISTINCT customer_id)::int AS customers FROM empties_movements WHERE organization_id = $1 GROUP BY type ORDER BY type',
  );
  // The sandbox's invoices issue empties with their sales; its voided one collects them back.
  t.deepEqual(
    empties.map((row) => row.type),
    ['adjustment', 'collected', 'issued_with_sale', 'received_from_supplier', 'returned_to_supplier'],
  );
  t.true(empties.find((row) => row.type === 'adjustment').customers >= 10, 'outlets hold empties');
  const [{ n: writtenOff }] =
    await query(`SELECT count(*)::int AS n FROM stock_movements m JOIN stock_documents d ON d.organization_id = m.organization_id AND d.id = m.document_id
                                            WHERE m.organization_id = $1 AND d.reason_code = 'DMG' AND m.to_location_id IS NULL`);
  t.true(writtenOff >= 1);
});

test("two weeks of trips, every one settled and closed: loaded from its route's warehouse, out with a GPS trail, counted (a few bottles missing now and then) and emptied back", async (t) => {
  const run = runs[0]!;
  const query = async (text: string) => (await run.pool.query(text, [run.organizationId])).rows;
  const trips =
    await query(`SELECT t.number, t.status, to_char(t.business_date, 'YYYY-MM-DD') AS date, r.route_code, v.code AS van, w.code AS warehouse, b.code AS bad,
      t.salesperson_id = r.salesperson_id AS salesperson_of_route, t.departed_at IS NOT NULL AND t.returned_at IS NOT NULL AND t.closed_at IS NOT NULL AS stamped,
      (SELECT count(*)::int FROM trip_locations g WHERE g.trip_id = t.id) AS fixes,
      (SELECT string_agg(d.type || ':' || coalesce(d.reason_code, '-'), ',' ORDER BY d.type, d.number) FROM stock_documents d WHERE d.trip_id = t.id) AS documents
    FROM trips t JOIN routes r ON r.id = t.route_id JOIN locations v ON v.id = t.van_location_id JOIN locations w ON w.id = t.warehouse_location_id
      LEFT JOIN locations b ON b.id = t.bad_stock_location_id
   WHERE t.organization_id = $1 ORDER BY t.number`);
  t.is(trips.length, 10);
  t.is(trips[0].number, 'TRP-000001');
  t.is(trips.at(-1).number, 'TRP-000010');
  for (const trip of trips) {
    t.like(trip, {
      status: 'closed',
      van: `V_${trip.route_code}-G`,
      bad: `V_${trip.route_code}-B`,
      warehouse: ['R01', 'R02', 'R03'].includes(trip.route_code) ? 'M01' : 'M02',
      salesperson_of_route: true,
      stamped: true,
      fixes: 6,
    });
    t.regex(trip.documents, /^(adjustment:TRIP_COUNT,)?(return:-,)?transfer:-,transfer:-$/, trip.number);
  }
  // Each van once a week: R01 on Monday to R05 on Friday.
  t.deepEqual(
    trips.map((trip) => `${trip.route_code} ${trip.date}`),
    [
      'R01 2026-11-09',
      'R02 2026-11-10',
      'R03 2026-11-11',
      'R04 2026-11-12',
      'R05 2026-11-13',
      'R01 2026-11-16',
      'R02 2026-11-17',
      'R03 2026-11-18',
      'R04 2026-11-19',
      'R05 2026-11-20',
    ],
  );
  // A count that found bottles missing posts an adjustment that issues them; one that agrees posts none.
  const counts =
    await query(`SELECT d.id, count(m.*)::int AS movements, bool_and(m.to_location_id IS NULL) AS issues FROM stock_documents d
    LEFT JOIN stock_movements m ON m.document_id = d.id WHERE d.organization_id = $1 AND d.reason_code = 'TRIP_COUNT' GROUP BY d.id`);
  t.true(counts.length >= 1 && counts.length <= 6, `${counts.length} counts found bottles missing`);
  t.true(counts.every((c) => c.movements === 1 && c.issues));
  const [{ held }] = await query(
    `SELECT coalesce(sum(s.quantity), 0)::int AS held FROM stock_levels s JOIN locations l ON l.id = s.location_id WHERE s.organization_id = $1 AND l.kind = 'van'`,
  );
  t.is(held, 0, 'every van came back empty');
  // The same trips in the other bootstrap (only ids and the moves' own timestamps differ).
  const plan = async (r: Bootstrapped) =>
    (
      await r.pool.query(`SELECT t.number, to_char(t.business_date, 'YYYY-MM-DD') AS date, v.code,
      (SELECT jsonb_agg(jsonb_build_array(p.product_code, m.quantity, m.from_location_id IS NULL) ORDER BY d.type, p.product_code, m.quantity, m.from_location_id IS NULL) FROM stock_documents d
         JOIN stock_movements m ON m.document_id = d.id JOIN products p ON p.id = m.product_id WHERE d.trip_id = t.id) AS moves,
      (SELECT jsonb_agg(jsonb_build_array(g.recorded_at, g.latitude, g.longitude) ORDER BY g.recorded_at) FROM trip_locations g WHERE g.trip_id = t.id) AS trail
    FROM trips t JOIN locations v ON v.id = t.van_location_id ORDER BY t.number`)
    ).rows;
  t.deepEqual(await plan(runs[0]!), await plan(runs[1]!));
});

test("the trips' money: van sales paid in cash on the spot, on credit (part collected in cash on the trip) or by mobile money; a return onto the van and a credit note; every trip settled with what its sheet expected, less the crew's expenses", async (t) => {
  const run = runs[0]!;
  const query = async (text: string) => (await run.pool.query(text, [run.organizationId])).rows;
  const trips =
    await query(`SELECT t.number, s.status, s.handed_in::text, s.cash_expected::text, s.variance::text, s.cash_expenses::text,
      (SELECT count(*)::int FROM invoices i WHERE i.trip_id = t.id) AS sales,
      (SELECT coalesce(sum(p.amount), 0)::text FROM payments p WHERE p.trip_id = t.id AND p.method = 'cash' AND p.status = 'posted') AS cash
    FROM trips t JOIN settlements s ON s.trip_id = t.id WHERE t.organization_id = $1 ORDER BY t.number`);
  t.is(trips.length, 10, 'every trip has its settlement');
  t.true(trips.filter((trip) => trip.sales === 2).length >= 6, 'most vans sell to two outlets');
  for (const trip of trips) {
    t.is(trip.status, 'closed');
    // Handed in: the cash expected (cash collected less expenses), or 500 short; never below zero.
    t.true(
      ['0.0000', '-500.0000'].includes(trip.variance) || trip.handed_in === '0.0000',
      `${trip.number}: variance ${trip.variance}`,
    );
    t.true(Number(trip.cash_expenses) >= 10000);
  }
  t.true(
    trips.some((trip) => trip.variance === '-500.0000'),
    'a trip came back 500 short',
  );
  const methods = await query(
    `SELECT DISTINCT method FROM payments p JOIN trips t ON t.id = p.trip_id WHERE p.organization_id = $1 ORDER BY method`,
  );
  t.deepEqual(
    methods.map((row) => row.method),
    ['cash', 'mobile_money'],
  );
  const notes = await query(
    `SELECT c.type, c.trip_id IS NOT NULL AS on_trip, count(*)::int AS n FROM credit_notes c WHERE c.organization_id = $1 GROUP BY 1, 2 ORDER BY 1, 2`,
  );
  t.deepEqual(notes, [
    { type: 'adjustment', on_trip: false, n: 1 },
    { type: 'adjustment', on_trip: true, n: 1 },
    { type: 'return', on_trip: false, n: 1 },
    { type: 'return', on_trip: true, n: 1 },
  ]);
  t.deepEqual(await auditCustomerAccount(kyselyOver(run.pool), run.organizationId), []);
  t.deepEqual(await auditStock(kyselyOver(run.pool), run.organizationId), []);
});
