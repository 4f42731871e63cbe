// The stock operations over HTTP: adjustments and transfers are posted once per Idempotency-Key and answer the
// document with its movements; levels, the movements feed and the empties ledger page like every list; unitCost
// only with payments:read; a filter id of another organisation is 404. The ledger checker runs when the file ends.
import test from 'ava';
import { ALL_SCOPES, createCaller, type TestCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { actingOrganization, getOrganization } from '../../server/platform/access/organizations.js';
import { operatorActor } from '../../server/platform/access/actor.js';
import { inTransaction } from '../../server/platform/database/transaction.js';
import { closePeriod } from '../../server/domain/periods.js';
import {
  receiveEmptiesFromSupplier,
  returnEmptiesToSupplier,
  adjustCustomerEmpties,
} from '../../server/modules/stock/empties.js';

const api = useSharedService(test);
const pool = () => api().pool;

interface Setup {
  caller: TestCaller;
  soda: string;
  crate: string;
  warehouse: string;
  van: string;
}

let codes = 100100;
async function setup(scopes: string[] = ALL_SCOPES): Promise<Setup> {
  const caller = await createCaller(pool(), { scopes });
  const admin = scopes === ALL_SCOPES ? caller : await createCaller(pool(), { organizationId: caller.organizationId });
  const put = async (path: string, json: unknown) => {
    const res = await api().request('PUT', path, { headers: admin.auth, json });
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${res.text}`);
    return res.body.id as string;
  };
  const sodaCode = String(codes++);
  const crateCode = String(codes++);
  const soda = await put(`/products/by-code/dms/${sodaCode}`, {
    productCode: sodaCode,
    name: 'Soda 300ml',
    packSize: 24,
    sellingUnits: ['case', 'bottle'],
    tracksStock: true,
  });
  const crate = await put(`/products/by-code/dms/${crateCode}`, {
    productCode: crateCode,
    name: 'Crate 24',
    packSize: 1,
    sellingUnits: ['piece'],
    tracksStock: true,
    isEmpty: true,
  });
  const warehouse = await put('/locations/by-code/dms/M01', { code: 'M01', name: 'Main warehouse' });
  const van = await put('/locations/by-code/dms/V_R01-G', { code: 'V_R01-G', name: 'Van R01 good' });
  return { caller, soda, crate, warehouse, van };
}

const post = (caller: TestCaller, path: string, json: unknown, key: string) =>
  api().request('POST', path, { headers: { ...caller.auth, 'Idempotency-Key': key }, json });
const get = (caller: TestCaller, path: string) => api().request('GET', path, { headers: caller.auth });

async function receive(s: Setup, quantity: number, unitCost = '24000') {
  const res = await post(
    s.caller,
    '/stock-adjustments',
    {
      reasonCode: 'OG01',
      lines: [
        {
          productId: s.soda,
          locationId: s.warehouse,
          unit: 'case',
          quantity,
          unitCost: { amount: unitCost, currency: 'UGX' },
        },
      ],
    },
    `receive-${quantity}-${unitCost}`,
  );
  if (res.status !== 201) throw new Error(`receive: ${res.status} ${res.text}`);
  return res.body;
}

test('an adjustment is posted once per Idempotency-Key: 201 with its number and movements in base units, replayed as is, one event', async (t) => {
  const s = await setup();
  const body = {
    reasonCode: 'OG01',
    note: 'Opening',
    lines: [
      {
        productId: s.soda,
        locationId: s.warehouse,
        unit: 'case',
        quantity: 10,
        unitCost: { amount: '24000', currency: 'UGX' },
      },
    ],
  };
  const first = await post(s.caller, '/stock-adjustments', body, 'adj-1');
  t.is(first.status, 201);
  t.regex(first.body.number, /^ADJ-0{5}1$/);
  t.like(first.body, { type: 'adjustment', reasonCode: 'OG01', note: 'Opening', tripId: null });
  t.is(first.body.movements.length, 1);
  t.like(first.body.movements[0], {
    lineNumber: 1,
    productId: s.soda,
    fromLocationId: null,
    toLocationId: s.warehouse,
    quantity: 240,
    unit: 'bottle',
    unitCost: { amount: '1000.000000', currency: 'UGX' },
  });
  const again = await post(s.caller, '/stock-adjustments', body, 'adj-1');
  t.is(again.status, 201);
  t.is(again.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(again.body, first.body);
  const { rows } = await pool().query('SELECT count(*)::int AS n FROM stock_documents WHERE organization_id = $1', [
    s.caller.organizationId,
  ]);
  t.is(rows[0].n, 1, 'the replay posted nothing');
  const events = await pool().query('SELECT type, resource FROM events WHERE organization_id = $1 AND record_id = $2', [
    s.caller.organizationId,
    first.body.id,
  ]);
  t.deepEqual(events.rows, [{ type: 'stock.movement.created', resource: 'stock_document' }]);
});

test('a transfer moves every line or none: a short line is 422 insufficient_stock naming it, and the levels are unchanged', async (t) => {
  const s = await setup();
  await receive(s, 2);
  const short = await post(
    s.caller,
    '/stock-transfers',
    {
      fromLocationId: s.warehouse,
      toLocationId: s.van,
      lines: [
        { productId: s.soda, unit: 'case', quantity: 1 },
        { productId: s.soda, unit: 'bottle', quantity: 30 },
      ],
    },
    'trf-short',
  );
  t.is(short.status, 422);
  t.is(short.body.code, 'insufficient_stock');
  t.deepEqual(
    short.body.errors.map((e: { field: string }) => e.field),
    ['/lines/1/quantity'],
  );
  const levels = await get(s.caller, `/stock-levels?productId=${s.soda}`);
  t.deepEqual(
    levels.body.data.map((l: { locationId: string; quantity: number }) => [l.locationId, l.quantity]),
    [[s.warehouse, 48]],
  );
  const ok = await post(
    s.caller,
    '/stock-transfers',
    {
      fromLocationId: s.warehouse,
      toLocationId: s.van,
      lines: [
        { productId: s.soda, unit: 'case', quantity: 1 },
        { productId: s.soda, unit: 'bottle', quantity: 20 },
      ],
    },
    'trf-ok',
  );
  t.is(ok.status, 201);
  t.regex(ok.body.number, /^TRF-/);
  const after = await get(s.caller, `/stock-levels?productId=${s.soda}`);
  t.deepEqual(
    Object.fromEntries(
      after.body.data.map((l: { locationId: string; quantity: number }) => [l.locationId, l.quantity]),
    ),
    { [s.warehouse]: 4, [s.van]: 44 },
  );
});

test('bad inputs get their documented errors and write nothing', async (t) => {
  const s = await setup();
  const other = await setup();
  const cases: [string, string, unknown, number, string, string[]][] = [
    [
      "another organisation's product",
      '/stock-adjustments',
      { reasonCode: 'X', lines: [{ productId: other.soda, locationId: s.warehouse, unit: 'case', quantity: 1 }] },
      422,
      'product_not_found',
      ['/lines/0/productId'],
    ],
    [
      "another organisation's location",
      '/stock-adjustments',
      { reasonCode: 'X', lines: [{ productId: s.soda, locationId: other.warehouse, unit: 'case', quantity: 1 }] },
      422,
      'business_rule',
      ['/lines/0/locationId'],
    ],
    [
      'a zero quantity',
      '/stock-adjustments',
      { reasonCode: 'X', lines: [{ productId: s.soda, locationId: s.warehouse, unit: 'case', quantity: 0 }] },
      400,
      'invalid_field',
      ['/lines/0/quantity'],
    ],
    [
      'a fractional quantity',
      '/stock-transfers',
      { fromLocationId: s.warehouse, toLocationId: s.van, lines: [{ productId: s.soda, unit: 'case', quantity: 1.5 }] },
      400,
      'invalid_field',
      ['/lines/0/quantity'],
    ],
    [
      'both quantity and countedQuantity',
      '/stock-adjustments',
      {
        reasonCode: 'X',
        lines: [{ productId: s.soda, locationId: s.warehouse, unit: 'case', quantity: 1, countedQuantity: 2 }],
      },
      400,
      'invalid_field',
      ['/lines/0/quantity'],
    ],
    [
      'a cost on a removal',
      '/stock-adjustments',
      {
        reasonCode: 'X',
        lines: [
          {
            productId: s.soda,
            locationId: s.warehouse,
            unit: 'case',
            quantity: -1,
            unitCost: { amount: '1', currency: 'UGX' },
          },
        ],
      },
      400,
      'invalid_field',
      ['/lines/0/unitCost'],
    ],
    [
      'a cost in another currency',
      '/stock-adjustments',
      {
        reasonCode: 'X',
        lines: [
          {
            productId: s.soda,
            locationId: s.warehouse,
            unit: 'case',
            quantity: 1,
            unitCost: { amount: '1', currency: 'USD' },
          },
        ],
      },
      422,
      'currency_not_supported',
      ['/lines/0/unitCost/currency'],
    ],
    [
      'the same location on both sides',
      '/stock-transfers',
      {
        fromLocationId: s.warehouse,
        toLocationId: s.warehouse,
        lines: [{ productId: s.soda, unit: 'case', quantity: 1 }],
      },
      422,
      'business_rule',
      ['/toLocationId'],
    ],
    [
      'no lines',
      '/stock-transfers',
      { fromLocationId: s.warehouse, toLocationId: s.van, lines: [] },
      400,
      'invalid_field',
      ['/lines'],
    ],
  ];
  for (const [what, path, body, status, code, fields] of cases) {
    const res = await post(s.caller, path, body, `bad-${what}`);
    t.is(res.status, status, what);
    t.is(res.body.code, code, what);
    t.deepEqual([...new Set(res.body.errors.map((e: { field: string }) => e.field))], fields, what);
  }
  const { rows } = await pool().query(
    'SELECT (SELECT count(*) FROM stock_documents WHERE organization_id = $1)::int AS documents, (SELECT count(*) FROM stock_movements WHERE organization_id = $1)::int AS movements',
    [s.caller.organizationId],
  );
  t.deepEqual(rows[0], { documents: 0, movements: 0 });
});

test('the movements feed walks every movement once, oldest first, resumable; unitCost only with payments:read', async (t) => {
  const s = await setup();
  for (let i = 1; i <= 5; i += 1) await receive(s, i);
  const walked: string[] = [];
  let path = '/stock-movements?since=2000-01-01T00:00:00Z&limit=2';
  for (;;) {
    const page = await get(s.caller, path);
    t.is(page.status, 200);
    walked.push(...page.body.data.map((m: { id: string }) => m.id));
    if (!page.body.hasMore) break;
    path = `/stock-movements?since=2000-01-01T00:00:00Z&limit=2&cursor=${page.body.nextCursor}`;
  }
  const { rows } = await pool().query(
    'SELECT id FROM stock_movements WHERE organization_id = $1 ORDER BY updated_at, id',
    [s.caller.organizationId],
  );
  t.deepEqual(
    walked,
    rows.map((r) => r.id),
  );
  const newest = await get(s.caller, '/stock-movements?limit=1');
  t.is(newest.body.data[0].id, rows[rows.length - 1].id, 'without since: newest first');

  const noCost = await createCaller(pool(), { organizationId: s.caller.organizationId, scopes: ['stock:read'] });
  const page = await get(noCost, '/stock-movements');
  t.is(page.status, 200);
  t.true(page.body.data.every((m: Record<string, unknown>) => !('unitCost' in m)));
  t.true((await get(s.caller, '/stock-movements')).body.data.every((m: Record<string, unknown>) => 'unitCost' in m));

  const both = await get(s.caller, '/stock-movements?since=2000-01-01T00:00:00Z&updatedSince=2000-01-01T00:00:00Z');
  t.is(both.status, 400);
  t.deepEqual(
    both.body.errors.map((e: { field: string }) => e.field),
    ['/query/since', '/query/updatedSince'],
  );
  // A cursor this list issued is refused by another list (five movements: a page of one has a next cursor).
  const cursor = (await get(s.caller, '/stock-movements?limit=1')).body.nextCursor as string;
  t.truthy(cursor);
  const foreignCursor = await get(s.caller, `/stock-levels?cursor=${cursor}`);
  t.is(foreignCursor.status, 400);
  t.is(foreignCursor.body.code, 'invalid_field');
  t.deepEqual(foreignCursor.body.errors, [
    { field: '/query/cursor', code: 'invalid_field', message: 'issued by another list' },
  ]);
});

test("a filter id of another organisation is 404 naming the parameter; documentId gives one document's movements", async (t) => {
  const s = await setup();
  const other = await setup();
  for (const path of [
    `/stock-levels?locationId=${other.warehouse}`,
    `/stock-movements?productId=${other.soda}`,
    `/empties-movements?customerId=cus_01JD4R7Q8S6T9V3X5Z7B9D1F3H`,
  ]) {
    const res = await get(s.caller, path);
    t.is(res.status, 404, path);
    t.is(res.body.code, 'not_found', path);
    t.is(res.body.errors[0].field, `/query/${path.split('?')[1]!.split('=')[0]}`, path);
  }
  const first = await receive(s, 1);
  await receive(s, 2);
  const own = await get(s.caller, `/stock-movements?documentId=${first.id}`);
  t.deepEqual(
    own.body.data.map((m: { id: string }) => m.id),
    first.movements.map((m: { id: string }) => m.id),
  );
});

test('a count moves the difference (nothing when it matches) and a write-off leaves the moving average', async (t) => {
  const s = await setup();
  await receive(s, 1, '24000');
  await receive(s, 1, '48000');
  const count = await post(
    s.caller,
    '/stock-adjustments',
    {
      reasonCode: 'CNT',
      lines: [
        { productId: s.soda, locationId: s.warehouse, unit: 'bottle', countedQuantity: 40 },
        { productId: s.crate, locationId: s.warehouse, unit: 'piece', countedQuantity: 0 },
      ],
    },
    'count',
  );
  t.is(count.status, 201);
  t.is(count.body.movements.length, 1, 'the matching count of the crate moved nothing');
  t.like(count.body.movements[0], {
    fromLocationId: s.warehouse,
    toLocationId: null,
    quantity: 8,
    unitCost: { amount: '1500.000000', currency: 'UGX' },
  });
});

test('the empties ledger lists supplier receipts and returns (no customer or trip) and customer adjustments, by type', async (t) => {
  const s = await setup();
  const db = kyselyOver(pool());
  const operator = operatorActor(actingOrganization(await getOrganization(db, s.caller.organizationId)), 'test');
  const customer = (
    await api().request('POST', '/customers', {
      headers: { ...s.caller.auth, 'Idempotency-Key': 'c1' },
      json: { outletCode: 'UG0000001', name: 'Shop', channel: 'retail' },
    })
  ).body.id as string;
  await inTransaction(db, (tx) =>
    receiveEmptiesFromSupplier(tx, operator, {
      locationId: s.warehouse,
      lines: [{ productId: s.crate, quantity: 50, unitCost: '5000' }],
    }),
  );
  await inTransaction(db, (tx) =>
    returnEmptiesToSupplier(tx, operator, { locationId: s.warehouse, lines: [{ productId: s.crate, quantity: 20 }] }),
  );
  await inTransaction(db, (tx) =>
    adjustCustomerEmpties(tx, operator, {
      customerId: customer,
      reasonCode: 'OPENING',
      lines: [{ productId: s.crate, quantity: 7 }],
    }),
  );
  const all = await get(s.caller, '/empties-movements');
  t.is(all.status, 200);
  t.deepEqual(
    all.body.data.map((m: { type: string; direction: string; quantity: number }) => [m.type, m.direction, m.quantity]),
    [
      ['adjustment', 'out', 7],
      ['returned_to_supplier', 'out', 20],
      ['received_from_supplier', 'in', 50],
    ],
  );
  const supplier = all.body.data.filter((m: { type: string }) => m.type.endsWith('supplier'));
  t.true(
    supplier.every(
      (m: { customerId: unknown; tripId: unknown; locationId: unknown; stockMovementId: unknown }) =>
        m.customerId === null &&
        m.tripId === null &&
        m.locationId === s.warehouse &&
        typeof m.stockMovementId === 'string',
    ),
  );
  const received = await get(s.caller, '/empties-movements?type=received_from_supplier');
  t.deepEqual(
    received.body.data.map((m: { quantity: number }) => m.quantity),
    [50],
  );
  const byCustomer = await get(s.caller, `/empties-movements?customerId=${customer}`);
  t.deepEqual(
    byCustomer.body.data.map((m: { type: string }) => m.type),
    ['adjustment'],
  );
  const level = await get(s.caller, `/stock-levels?productId=${s.crate}`);
  t.deepEqual(
    level.body.data.map((l: { quantity: number; unit: string }) => [l.quantity, l.unit]),
    [[30, 'piece']],
  );
  const { rows } = await pool().query(
    'SELECT quantity FROM customer_empties WHERE organization_id = $1 AND customer_id = $2',
    [s.caller.organizationId, customer],
  );
  t.deepEqual(rows, [{ quantity: 7 }]);
});

test('stock needs its scopes: reads stock:read, posting stock:write', async (t) => {
  const s = await setup(['stock:read']);
  const refused = await post(
    s.caller,
    '/stock-transfers',
    { fromLocationId: s.warehouse, toLocationId: s.van, lines: [{ productId: s.soda, unit: 'case', quantity: 1 }] },
    'scope',
  );
  t.is(refused.status, 403);
  t.is(refused.body.code, 'insufficient_scope');
  t.is((await get(s.caller, '/stock-levels')).status, 200);
});

test('stock.movement.created is deliverable: its webhook object is the posted document as GET would read it, without costs', async (t) => {
  const { webhookObjects, webhookEventTypes } = await import('../../server/composition/modules.js');
  const { jobActor } = await import('../../server/platform/access/actor.js');
  t.true(webhookEventTypes.includes('stock.movement.created'));
  const s = await setup();
  const posted = await receive(s, 3);
  const db = kyselyOver(pool());
  const actor = jobActor(actingOrganization(await getOrganization(db, s.caller.organizationId)), 'webhooks');
  const object = await webhookObjects['stock.movement.created']!.read(db, actor, posted.id);
  const { unitCost: _cost, ...movementWithoutCost } = posted.movements[0];
  t.deepEqual(object, { ...posted, movements: [movementWithoutCost] });
  t.is(await webhookObjects['stock.movement.created']!.read(db, actor, 'sdc_01JD4R7Q8S6T9V3X5Z7B9D1F3Z'), null);
});

test('closed periods: an adjustment or a transfer is dated the day it is posted, so while the books are closed through that day it is 422 period_closed and nothing moves', async (t) => {
  const s = await setup();
  await receive(s, 5);
  // Closed through a day after any "today" the run's business clock can give.
  await inTransaction(kyselyOver(pool()), (tx) => closePeriod(tx, s.caller.organizationId, '2099-12-31'));
  const adjustment = await post(
    s.caller,
    '/stock-adjustments',
    { reasonCode: 'OG01', lines: [{ productId: s.soda, locationId: s.warehouse, unit: 'case', quantity: -1 }] },
    'closed-adj',
  );
  t.is(adjustment.status, 422);
  t.is(adjustment.body.code, 'period_closed');
  t.deepEqual(
    adjustment.body.errors.map((e: { field: string }) => e.field),
    [''],
  );
  const transfer = await post(
    s.caller,
    '/stock-transfers',
    { fromLocationId: s.warehouse, toLocationId: s.van, lines: [{ productId: s.soda, unit: 'case', quantity: 1 }] },
    'closed-trf',
  );
  t.is(transfer.status, 422);
  t.is(transfer.body.code, 'period_closed');
  const levels = await get(s.caller, `/stock-levels?productId=${s.soda}`);
  t.deepEqual(
    levels.body.data.map((l: { locationId: string; quantity: number }) => [l.locationId, l.quantity]),
    [[s.warehouse, 120]],
    'nothing moved',
  );
});
