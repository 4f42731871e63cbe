import test from 'ava';
import { createCaller, type TestCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';

const api = useSharedService(test);
const pool = () => api().pool;
let sequence = 0;
const productCode = () => String(200_000 + ++sequence);
const ugx = (amount: string) => ({ amount, currency: 'UGX' });
const item = (code: string, extra: Record<string, unknown> = {}) => ({
  productCode: code,
  priceGroup: 'RETAIL-A',
  unit: 'case',
  unitPrice: ugx('72000'),
  validFrom: '2026-12-01',
  ...extra,
});
const setPrices = (caller: TestCaller, items: unknown[], headers: Record<string, string> = {}) =>
  api().request('PUT', '/prices', { headers: { ...caller.auth, ...headers }, json: { items } });
const makeProduct = async (caller: TestCaller, sellingUnits = ['case', 'bottle']) => {
  const code = productCode();
  const res = await api().request('PUT', `/products/by-code/dms/${code}`, {
    headers: caller.auth,
    json: { productCode: code, name: `Beer ${code}`, packSize: 24, sellingUnits },
  });
  if (res.status !== 201) throw new Error(`setup failed: ${res.status} ${res.text}`);
  return res.body as { id: string; productCode: string };
};
const counts = async (organizationId: string) =>
  (
    await pool().query(
      `SELECT (SELECT count(*)::int FROM prices WHERE organization_id = $1) AS prices,
          (SELECT count(*)::int FROM events WHERE organization_id = $1 AND resource = 'price') AS events`,
      [organizationId],
    )
  ).rows[0] as { prices: number; events: number };
const eventTypes = async (recordId: string) =>
  (await pool().query('SELECT type FROM events WHERE record_id = $1 ORDER BY created_at, id', [recordId])).rows.map(
    (r) => r.type,
  );

test('PUT /prices creates each price (price.created) and a second PUT updates it in place (price.updated), answering in the order of the items', async (t) => {
  const caller = await createCaller(pool());
  const beer = await makeProduct(caller);
  const first = await setPrices(caller, [
    item(beer.productCode, { unit: 'bottle', unitPrice: ugx('3200') }),
    item(beer.productCode),
  ]);
  t.is(first.status, 200);
  t.is(first.body.data.length, 2);
  t.regex(first.body.data[0].id, /^prc_[0-9A-HJKMNP-TV-Z]{26}$/);
  t.like(first.body.data[0], {
    productId: beer.id,
    productCode: beer.productCode,
    priceGroup: 'RETAIL-A',
    unit: 'bottle',
    unitPrice: ugx('3200'),
    validFrom: '2026-12-01',
  });
  t.like(first.body.data[1], { unit: 'case', unitPrice: ugx('72000') });
  t.deepEqual(await eventTypes(first.body.data[0].id), ['price.created']);
  await new Promise((resolve) => setTimeout(resolve, 5));

  const second = await setPrices(caller, [
    item(beer.productCode, { unitPrice: ugx('75000'), validFrom: '2027-01-01' }),
    item(beer.productCode, { priceGroup: 'WHOLESALE' }),
  ]);
  t.is(second.status, 200);
  t.is(second.body.data[0].id, first.body.data[1].id, 'the same product, price group and unit is the same price');
  t.like(second.body.data[0], {
    unitPrice: ugx('75000'),
    validFrom: '2027-01-01',
    createdAt: first.body.data[1].createdAt,
  });
  t.true(second.body.data[0].updatedAt > first.body.data[1].updatedAt);
  t.deepEqual(await eventTypes(first.body.data[1].id), ['price.created', 'price.updated']);
  t.deepEqual(await eventTypes(second.body.data[1].id), ['price.created']);
  t.deepEqual(await counts(caller.organizationId), { prices: 3, events: 4 });
  const { rows } = await pool().query(
    `SELECT amount::text AS amount, currency, to_char(valid_from, 'YYYY-MM-DD') AS valid_from FROM prices WHERE id = $1`,
    [first.body.data[1].id],
  );
  t.deepEqual(rows[0], { amount: '75000.0000', currency: 'UGX', valid_from: '2027-01-01' });
  const read = await api().request('GET', `/prices/${first.body.data[1].id}`, { headers: caller.auth });
  t.deepEqual(read.body, second.body.data[0]);
});

test('a batch with bad items is refused as a whole, listing every problem: unknown codes (product_not_found), other currency, unit not sold, duplicates naming both items', async (t) => {
  const caller = await createCaller(pool());
  const beer = await makeProduct(caller);
  const crate = await makeProduct(caller, ['piece']);
  await setPrices(caller, [item(beer.productCode)]);
  const before = await counts(caller.organizationId);
  const res = await setPrices(caller, [
    item(beer.productCode, { unitPrice: ugx('1') }),
    item('999999'),
    item(beer.productCode, { priceGroup: 'WHOLESALE', unitPrice: { amount: '20', currency: 'USD' } }),
    item(crate.productCode, { unit: 'case' }),
    item('999998', { unit: 'bottle' }),
    item(beer.productCode, { unitPrice: ugx('2') }),
  ]);
  t.is(res.status, 422);
  t.is(res.body.code, 'product_not_found', 'the first kind present names the answer');
  t.deepEqual(
    res.body.errors.map((e: { field: string; code: string }) => [e.field, e.code]),
    [
      ['/items/0', 'business_rule'],
      ['/items/1/productCode', 'product_not_found'],
      ['/items/2/unitPrice/currency', 'currency_not_supported'],
      ['/items/3/unit', 'business_rule'],
      ['/items/4/productCode', 'product_not_found'],
      ['/items/5', 'business_rule'],
    ],
  );
  t.deepEqual(await counts(caller.organizationId), before, 'nothing was written');
  const { rows } = await pool().query('SELECT amount::text AS amount FROM prices WHERE organization_id = $1', [
    caller.organizationId,
  ]);
  t.deepEqual(rows, [{ amount: '72000.0000' }], 'the good item of the refused batch did not change the price');

  const currencyOnly = await setPrices(caller, [
    item(beer.productCode, { unitPrice: { amount: '20', currency: 'USD' } }),
  ]);
  t.like(currencyOnly.body, {
    status: 422,
    code: 'currency_not_supported',
    errors: [{ field: '/items/0/unitPrice/currency' }],
  });
  const unitOnly = await setPrices(caller, [item(crate.productCode, { unit: 'bottle' })]);
  t.like(unitOnly.body, { status: 422, code: 'business_rule', errors: [{ field: '/items/0/unit' }] });
  const fraction = await setPrices(caller, [item(beer.productCode, { unitPrice: ugx('10.5') })]);
  t.like(fraction.body, { status: 400, code: 'invalid_field', errors: [{ field: '/items/0/unitPrice/amount' }] });
});

test("another organisation's product code is product_not_found, and its prices are 404 not_found", async (t) => {
  const owner = await createCaller(pool());
  const other = await createCaller(pool());
  const beer = await makeProduct(owner);
  const set = await setPrices(owner, [item(beer.productCode)]);
  const foreign = await setPrices(other, [item(beer.productCode)]);
  t.is(foreign.status, 422);
  t.like(foreign.body, { code: 'product_not_found', errors: [{ field: '/items/0/productCode' }] });
  const read = await api().request('GET', `/prices/${set.body.data[0].id}`, { headers: other.auth });
  t.is(read.status, 404);
  t.is(read.body.code, 'not_found');
  t.deepEqual((await api().request('GET', '/prices', { headers: other.auth })).body.data, []);
});

test('the batch holds 1 to 500 items with valid fields (400 otherwise), and unknown fields are refused', async (t) => {
  const caller = await createCaller(pool());
  const beer = await makeProduct(caller);
  t.is((await setPrices(caller, [])).status, 400);
  t.is(
    (
      await setPrices(
        caller,
        Array.from({ length: 501 }, () => item(beer.productCode)),
      )
    ).status,
    400,
  );
  const bad = await setPrices(caller, [
    item(beer.productCode, { priceGroup: '' }),
    item(beer.productCode, { unit: 'pallet' }),
    item(beer.productCode, { validFrom: '01/12/2026' }),
    item(beer.productCode, { discount: '1' }),
  ]);
  t.is(bad.status, 400);
  const fields = bad.body.errors.map((e: { field: string }) => e.field);
  for (const field of ['/items/0/priceGroup', '/items/1/unit', '/items/2/validFrom', '/items/3/discount'])
    t.true(fields.includes(field), field);
  t.deepEqual(await counts(caller.organizationId), { prices: 0, events: 0 });
});

test('a 500-item batch is written set-based in one transaction, with one event per price', async (t) => {
  const caller = await createCaller(pool());
  const products = await Promise.all(Array.from({ length: 5 }, () => makeProduct(caller)));
  const items = Array.from({ length: 500 }, (_, i) =>
    item(products[i % 5]!.productCode, {
      priceGroup: `GROUP-${Math.floor(i / 10)}`,
      unit: i % 10 < 5 ? 'case' : 'bottle',
      unitPrice: ugx(String(1000 + i)),
    }),
  );
  const started = Date.now();
  const res = await setPrices(caller, items);
  const elapsed = Date.now() - started;
  t.is(res.status, 200);
  t.is(res.body.data.length, 500);
  t.deepEqual(
    res.body.data.map((p: { unitPrice: { amount: string } }) => p.unitPrice.amount),
    items.map((i) => i.unitPrice.amount),
    'in the order of the items',
  );
  t.deepEqual(await counts(caller.organizationId), { prices: 500, events: 500 });
  const again = await setPrices(caller, items);
  t.is(again.status, 200);
  t.deepEqual(await counts(caller.organizationId), { prices: 500, events: 1000 });
  t.log(`500 prices in ${elapsed} ms`);
});

test('an Idempotency-Key replays the first answer and writes nothing again; another body with it is 422 idempotency_key_reused', async (t) => {
  const caller = await createCaller(pool());
  const beer = await makeProduct(caller);
  const first = await setPrices(caller, [item(beer.productCode)], { 'Idempotency-Key': 'prices-1' });
  const replay = await setPrices(caller, [item(beer.productCode)], { 'Idempotency-Key': 'prices-1' });
  t.is(replay.status, 200);
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  t.is(replay.text, first.text);
  t.deepEqual(await counts(caller.organizationId), { prices: 1, events: 1 });
  const reused = await setPrices(caller, [item(beer.productCode, { unitPrice: ugx('1') })], {
    'Idempotency-Key': 'prices-1',
  });
  t.is(reused.status, 422);
  t.is(reused.body.code, 'idempotency_key_reused');
});

test('GET /prices filters by productId, priceGroup and unit, and follows a changed product code', async (t) => {
  const caller = await createCaller(pool());
  const beer = await makeProduct(caller);
  const soda = await makeProduct(caller);
  const set = await setPrices(caller, [
    item(beer.productCode),
    item(beer.productCode, { unit: 'bottle' }),
    item(beer.productCode, { priceGroup: 'WHOLESALE' }),
    item(soda.productCode),
  ]);
  const ids = set.body.data.map((p: { id: string }) => p.id);
  const list = async (query: string) =>
    (await api().request('GET', `/prices?${query}`, { headers: caller.auth })).body.data
      .map((p: { id: string }) => p.id)
      .sort();
  t.deepEqual(await list(`productId=${beer.id}`), [ids[0], ids[1], ids[2]].sort());
  t.deepEqual(await list('priceGroup=WHOLESALE'), [ids[2]]);
  t.deepEqual(await list('unit=bottle'), [ids[1]]);
  t.deepEqual(await list(`productId=${soda.id}&unit=case`), [ids[3]]);
  t.is((await api().request('GET', '/prices?unit=pallet', { headers: caller.auth })).status, 400);
  t.is(
    (await api().request('GET', '/prices?externalCode=x', { headers: caller.auth })).status,
    400,
    'prices have no external codes',
  );
  const newCode = productCode();
  await api().request('PUT', `/products/by-code/dms/${soda.productCode}`, {
    headers: caller.auth,
    json: { productCode: newCode },
  });
  t.is((await api().request('GET', `/prices/${ids[3]}`, { headers: caller.auth })).body.productCode, newCode);
});

test('GET /prices with updatedSince is a change feed, oldest change first', async (t) => {
  const caller = await createCaller(pool());
  const beer = await makeProduct(caller);
  const first = await setPrices(caller, [item(beer.productCode), item(beer.productCode, { unit: 'bottle' })]);
  await new Promise((resolve) => setTimeout(resolve, 5));
  await setPrices(caller, [item(beer.productCode, { unitPrice: ugx('80000') })]);
  const [casePrice, bottlePrice] = first.body.data as { id: string }[];
  const feed = await api().request('GET', `/prices?updatedSince=${encodeURIComponent(first.body.data[0].createdAt)}`, {
    headers: caller.auth,
  });
  t.deepEqual(
    feed.body.data.map((p: { id: string }) => p.id),
    [bottlePrice!.id, casePrice!.id],
  );
  const later = await api().request('GET', `/prices?updatedSince=${encodeURIComponent(feed.body.data[1].updatedAt)}`, {
    headers: caller.auth,
  });
  t.deepEqual(
    later.body.data.map((p: { id: string }) => p.id),
    [casePrice!.id],
  );
});

test('reading needs prices:read and setting prices:write (403 insufficient_scope), and a refused batch writes nothing', async (t) => {
  const owner = await createCaller(pool());
  const beer = await makeProduct(owner);
  const reader = await createCaller(pool(), { organizationId: owner.organizationId, scopes: ['prices:read'] });
  const refused = await setPrices(reader, [item(beer.productCode)]);
  t.is(refused.status, 403);
  t.is(refused.body.code, 'insufficient_scope');
  t.deepEqual(await counts(owner.organizationId), { prices: 0, events: 0 });
  const productsOnly = await createCaller(pool(), { organizationId: owner.organizationId, scopes: ['products:read'] });
  t.is((await api().request('GET', '/prices', { headers: productsOnly.auth })).status, 403);
  t.is(
    (await api().request('GET', '/prices/prc_01JD4R7Q8S6T9V3X5Z7B9D1F3H', { headers: productsOnly.auth })).status,
    403,
  );
  t.is((await api().request('GET', '/prices', { headers: reader.auth })).status, 200);
});
