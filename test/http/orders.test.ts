// Sales orders over HTTP (the contract; the rules are proved in test/domain/orders.test.ts): POST /orders once per
// Idempotency-Key (replayed as is, a different body with the same key refused), prices defaulted from the price
// list, lists filtered by customer and status (a foreign customerId is 404), the cancel and its 409, the scopes,
// and the refusals with the field they name. Every response is checked against the spec by the harness.
import test from 'ava';
import { ALL_SCOPES, createCaller, type TestCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';

const api = useSharedService(test);
const pool = () => api().pool;

interface Setup {
  caller: TestCaller;
  customer: string;
  beer: string;
}

let codes = 500100;
async function setup(): Promise<Setup> {
  const caller = await createCaller(pool(), { scopes: ALL_SCOPES });
  const send = async (method: 'PUT' | 'POST', path: string, json: unknown) => {
    const res = await api().request(method, path, {
      headers: { ...caller.auth, 'Idempotency-Key': `setup-${codes++}` },
      json,
    });
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  const code = String(codes++);
  const beer = (
    await send('PUT', `/products/by-code/dms/${code}`, {
      productCode: code,
      name: 'Lager 500ml',
      packSize: 24,
      sellingUnits: ['case', 'bottle'],
      tracksStock: true,
      taxRate: 18,
    })
  ).id as string;
  await send('PUT', '/prices', {
    items: [
      {
        productCode: code,
        priceGroup: 'RETAIL-A',
        unit: 'case',
        unitPrice: { amount: '54000', currency: 'UGX' },
        validFrom: '2026-11-01',
      },
    ],
  });
  const customer = (
    await send('POST', '/customers', {
      outletCode: `UG0${code}`,
      name: 'Mama Grace Shop',
      channel: 'retail',
      priceGroup: 'RETAIL-A',
    })
  ).id as string;
  return { caller, customer, beer };
}

const post = (caller: TestCaller, path: string, json: unknown, key: string) =>
  api().request('POST', path, { headers: { ...caller.auth, 'Idempotency-Key': key }, json });
const get = (caller: TestCaller, path: string) => api().request('GET', path, { headers: caller.auth });
const fields = (body: { errors?: { field: string }[] }) => body.errors?.map((e) => e.field);

test('POST /orders takes an order once per Idempotency-Key: 201 priced from the list, replayed as is, one order.created; a different body with the key is 422', async (t) => {
  const s = await setup();
  const body = {
    customerId: s.customer,
    orderDate: '2026-11-24',
    lines: [{ productId: s.beer, unit: 'case', quantity: 3, discount: { amount: '2000', currency: 'UGX' } }],
  };
  const first = await post(s.caller, '/orders', body, 'order-1');
  t.is(first.status, 201);
  t.like(first.body, {
    number: 'ORD-000001',
    status: 'open',
    customerId: s.customer,
    currency: 'UGX',
    subtotal: { amount: '162000', currency: 'UGX' },
    discount: { amount: '2000', currency: 'UGX' },
    tax: { amount: '28800', currency: 'UGX' },
    total: { amount: '188800', currency: 'UGX' },
  });
  t.like(first.body.lines[0], {
    lineNumber: 1,
    unitPrice: { amount: '54000' },
    amount: { amount: '160000' },
    tax: { amount: '28800' },
    taxRate: '18.00',
  });
  const again = await post(s.caller, '/orders', body, 'order-1');
  t.is(again.status, 201);
  t.is(again.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(again.body, first.body);
  const reused = await post(s.caller, '/orders', { ...body, orderDate: '2026-11-25' }, 'order-1');
  t.is(reused.status, 422);
  t.is(reused.body.code, 'idempotency_key_reused');
  const { rows } = await pool().query('SELECT count(*)::int AS n FROM sales_orders WHERE organization_id = $1', [
    s.caller.organizationId,
  ]);
  t.is(rows[0].n, 1);
  const events = await pool().query('SELECT type FROM events WHERE organization_id = $1 AND record_id = $2', [
    s.caller.organizationId,
    first.body.id,
  ]);
  t.deepEqual(events.rows, [{ type: 'order.created' }]);
  t.deepEqual((await get(s.caller, `/orders/${first.body.id}`)).body, first.body);
  t.is((await post(s.caller, '/orders', body, '')).status, 400, 'the key is required');
  t.is(
    (await api().request('POST', '/orders', { headers: s.caller.auth, json: body })).body.code,
    'idempotency_key_required',
  );
});

test('refusals over HTTP carry their status, code and field: customer, product, unit, currency, missing customer, closed period; a foreign order is 404', async (t) => {
  const s = await setup();
  const line = { productId: s.beer, unit: 'case', quantity: 1 };
  const cases: [unknown, number, string, string[]][] = [
    [
      { customerId: 'cus_01JD4R7Q8S6T9V3X5Z7B9D1F3Z', orderDate: '2026-11-24', lines: [line] },
      422,
      'customer_not_found',
      ['/customerId'],
    ],
    [
      { customer: { system: 'dms', code: 'NOBODY' }, orderDate: '2026-11-24', lines: [line] },
      422,
      'customer_not_found',
      ['/customer/code'],
    ],
    [
      { customerId: s.customer, orderDate: '2026-11-24', lines: [line, { ...line, productId: 'prd_nothing' }] },
      422,
      'product_not_found',
      ['/lines/1/productId'],
    ],
    [
      { customerId: s.customer, orderDate: '2026-11-24', lines: [{ ...line, unit: 'piece' }] },
      422,
      'business_rule',
      ['/lines/0/unit'],
    ],
    [{ customerId: s.customer, orderDate: '2026-10-24', lines: [line] }, 422, 'business_rule', ['/lines/0/unitPrice']],
    [
      { customerId: s.customer, orderDate: '2026-11-24', currency: 'USD', lines: [line] },
      422,
      'currency_not_supported',
      ['/currency'],
    ],
    [{ orderDate: '2026-11-24', lines: [line] }, 400, 'required_field', ['/customerId']],
    [
      { customerId: s.customer, orderDate: '2026-11-24', lines: [{ ...line, quantity: 0 }] },
      400,
      'invalid_field',
      ['/lines/0/quantity'],
    ],
  ];
  for (const [i, [body, status, code, named]] of cases.entries()) {
    const res = await post(s.caller, '/orders', body, `bad-${i}`);
    t.is(res.status, status, `${i}: ${res.text}`);
    t.is(res.body.code, code, `${i}`);
    t.deepEqual(fields(res.body), named, `${i}`);
  }
  await pool().query("UPDATE organizations SET books_closed_through = '2026-11-30' WHERE id = $1", [
    s.caller.organizationId,
  ]);
  const closed = await post(
    s.caller,
    '/orders',
    { customerId: s.customer, orderDate: '2026-11-24', lines: [line] },
    'closed',
  );
  t.is(closed.status, 422);
  t.is(closed.body.code, 'period_closed');
  t.deepEqual(fields(closed.body), ['/orderDate']);

  const other = await setup();
  const theirs = await post(
    other.caller,
    '/orders',
    {
      customerId: other.customer,
      orderDate: '2026-11-24',
      lines: [{ productId: other.beer, unit: 'case', quantity: 1 }],
    },
    'theirs',
  );
  t.is((await get(s.caller, `/orders/${theirs.body.id}`)).status, 404);
  t.is((await post(s.caller, `/orders/${theirs.body.id}/cancel`, { reason: 'not mine' }, 'cancel-theirs')).status, 404);
  const foreignFilter = await get(s.caller, `/orders?customerId=${other.customer}`);
  t.is(foreignFilter.status, 404);
  t.deepEqual(fields(foreignFilter.body), ['/query/customerId']);
});

test('lists filter by customer and status and feed by updatedSince; cancel moves an open order once (409 after), replays with its key, and needs orders:write', async (t) => {
  const s = await setup();
  const take = async (key: string, customerId = s.customer) =>
    (
      await post(
        s.caller,
        '/orders',
        { customerId, orderDate: '2026-11-24', lines: [{ productId: s.beer, unit: 'case', quantity: 1 }] },
        key,
      )
    ).body;
  const a = await take('a');
  const b = await take('b');
  const secondCustomer = (
    await api().request('POST', '/customers', {
      headers: { ...s.caller.auth, 'Idempotency-Key': 'second' },
      json: { outletCode: 'UG0999001', name: 'Other Shop', channel: 'retail' },
    })
  ).body.id as string;
  const c = await (async () =>
    (
      await post(
        s.caller,
        '/orders',
        {
          customerId: secondCustomer,
          orderDate: '2026-11-24',
          lines: [{ productId: s.beer, unit: 'case', quantity: 1, unitPrice: { amount: '50000', currency: 'UGX' } }],
        },
        'c',
      )
    ).body)();

  const ids = async (query: string) =>
    (await get(s.caller, `/orders${query}`)).body.data.map((o: { id: string }) => o.id);
  t.deepEqual(await ids(''), [c.id, b.id, a.id], 'newest first');
  t.deepEqual(await ids(`?customerId=${s.customer}`), [b.id, a.id]);

  const reader = await createCaller(pool(), { organizationId: s.caller.organizationId, scopes: ['orders:read'] });
  const refused = await post(reader, `/orders/${a.id}/cancel`, { reason: 'no' }, 'reader');
  t.is(refused.status, 403);
  t.is(refused.body.code, 'insufficient_scope');

  const cancelled = await post(s.caller, `/orders/${a.id}/cancel`, { reason: 'Outlet closed' }, 'cancel-a');
  t.is(cancelled.status, 200);
  t.like(cancelled.body, { id: a.id, status: 'cancelled', cancelReason: 'Outlet closed' });
  const replay = await post(s.caller, `/orders/${a.id}/cancel`, { reason: 'Outlet closed' }, 'cancel-a');
  t.is(replay.status, 200);
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  const twice = await post(s.caller, `/orders/${a.id}/cancel`, { reason: 'again' }, 'cancel-a-again');
  t.is(twice.status, 409);
  t.is(twice.body.code, 'invalid_state');
  t.regex(twice.body.detail, /is cancelled/);
  const blank = await post(s.caller, `/orders/${b.id}/cancel`, {}, 'cancel-b-blank');
  t.is(blank.status, 400);
  t.deepEqual(fields(blank.body), ['/reason']);

  t.deepEqual(await ids('?status=cancelled'), [a.id]);
  t.deepEqual(await ids(`?status=open&customerId=${s.customer}`), [b.id]);
  const feed = await get(reader, `/orders?updatedSince=${encodeURIComponent(b.updatedAt)}`);
  t.deepEqual(
    feed.body.data.map((o: { id: string }) => o.id),
    [b.id, c.id, a.id],
    'oldest change first: the cancel moved a last',
  );
  const events = await pool().query('SELECT type FROM events WHERE record_id = $1 ORDER BY created_at, id', [a.id]);
  t.deepEqual(
    events.rows.map((e: { type: string }) => e.type),
    ['order.created', 'order.status_changed'],
  );
});

test("an order created with externalCodes is read back by code (and after its cancel); an unknown system or code, or another organisation's code, is 404; a code another order holds is 422 naming it and takes nothing", async (t) => {
  const s = await setup();
  const body = (code: string) => ({
    customerId: s.customer,
    orderDate: '2026-11-24',
    externalCodes: { dms: code },
    lines: [{ productId: s.beer, unit: 'case', quantity: 1 }],
  });
  const created = await post(s.caller, '/orders', body('SO-2026-0042'), 'code-a');
  t.is(created.status, 201, created.text);
  t.deepEqual(created.body.externalCodes, { dms: 'SO-2026-0042' });
  const byCode = await get(s.caller, '/orders/by-code/dms/SO-2026-0042');
  t.is(byCode.status, 200, byCode.text);
  t.deepEqual(byCode.body, created.body);
  t.deepEqual((await get(s.caller, '/orders?limit=5')).body.data[0].externalCodes, { dms: 'SO-2026-0042' });
  const cancelled = await post(
    s.caller,
    `/orders/${created.body.id}/cancel`,
    { reason: 'Outlet closed' },
    'code-cancel',
  );
  t.deepEqual(cancelled.body.externalCodes, { dms: 'SO-2026-0042' });
  t.is((await get(s.caller, '/orders/by-code/dms/SO-2026-0042')).body.status, 'cancelled');
  t.is((await get(s.caller, '/orders/by-code/dms/SO-2026-9999')).body.code, 'not_found');
  t.is((await get(s.caller, '/orders/by-code/nosuchsystem/SO-2026-0042')).status, 404);
  const other = await setup();
  t.is((await get(other.caller, '/orders/by-code/dms/SO-2026-0042')).status, 404, 'a code is per organisation');
  const reused = await post(s.caller, '/orders', body('SO-2026-0042'), 'code-b');
  t.is(reused.status, 422, reused.text);
  t.is(reused.body.code, 'business_rule');
  t.deepEqual(fields(reused.body), ['/externalCodes/dms']);
  const { rows } = await pool().query('SELECT count(*)::int AS n FROM sales_orders WHERE organization_id = $1', [
    s.caller.organizationId,
  ]);
  t.is(rows[0].n, 1, 'nothing taken');
});

test('Idempotency-Key is optional on POST /orders/{id}/cancel, as on PUT and PATCH: without one the order is cancelled once', async (t) => {
  const s = await setup();
  const order = (
    await post(
      s.caller,
      '/orders',
      { customerId: s.customer, orderDate: '2026-11-24', lines: [{ productId: s.beer, unit: 'case', quantity: 1 }] },
      'opt-cancel-order',
    )
  ).body;
  const cancelled = await api().request('POST', `/orders/${order.id}/cancel`, {
    headers: s.caller.auth,
    json: { reason: 'No key sent' },
  });
  t.is(cancelled.status, 200, cancelled.text);
  t.like(cancelled.body, { id: order.id, status: 'cancelled', cancelReason: 'No key sent' });
  const twice = await api().request('POST', `/orders/${order.id}/cancel`, {
    headers: s.caller.auth,
    json: { reason: 'No key sent' },
  });
  t.deepEqual([twice.status, twice.body.code], [409, 'invalid_state']);
});

test('GET /orders?externalCode= lists the order carrying that code in any code system, and nothing for a code no order of the organisation carries', async (t) => {
  const s = await setup();
  const coded = (
    await post(
      s.caller,
      '/orders',
      {
        customerId: s.customer,
        orderDate: '2026-11-24',
        externalCodes: { dms: 'SO-LIST-1' },
        lines: [{ productId: s.beer, unit: 'case', quantity: 1 }],
      },
      'list-code-order-1',
    )
  ).body;
  await post(
    s.caller,
    '/orders',
    { customerId: s.customer, orderDate: '2026-11-24', lines: [{ productId: s.beer, unit: 'case', quantity: 1 }] },
    'list-code-order-2',
  );
  const ids = async (query: string) =>
    (await get(s.caller, `/orders?${query}`)).body.data.map((o: { id: string }) => o.id);
  t.deepEqual(await ids('externalCode=SO-LIST-1'), [coded.id]);
  t.deepEqual(await ids('externalCode=SO-LIST-1&status=cancelled'), []);
  t.deepEqual(await ids('externalCode=SO-NONE'), []);
});
