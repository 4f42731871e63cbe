import test from 'ava';
import { createCaller, type TestCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';

const api = useSharedService(test);
const pool = () => api().pool;
let sequence = 0;
const productCode = () => String(100_000 + ++sequence);
const put = (caller: TestCaller, code: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  api().request('PUT', `/products/by-code/dms/${code}`, { headers: { ...caller.auth, ...headers }, json: body });
const beer = (code = productCode(), extra: Record<string, unknown> = {}) => ({
  productCode: code,
  name: `Beer ${code}`,
  packSize: 24,
  sellingUnits: ['case', 'bottle'],
  ...extra,
});
const crate = (code = productCode(), extra: Record<string, unknown> = {}) => ({
  productCode: code,
  name: `Crate ${code}`,
  packSize: 1,
  sellingUnits: ['piece'],
  isEmpty: true,
  depositPrice: { amount: '6000', currency: 'UGX' },
  ...extra,
});
/** Creates the product under its own product code as dms code and returns the response body. */
const make = async (caller: TestCaller, body: { productCode: string }) => {
  const res = await put(caller, body.productCode, body);
  if (res.status !== 201) throw new Error(`setup failed: ${res.status} ${res.text}`);
  return res.body;
};
const events = async (recordId: string) =>
  (await pool().query('SELECT type FROM events WHERE record_id = $1 ORDER BY created_at, id', [recordId])).rows.map(
    (r) => r.type,
  );
const productCount = async (organizationId: string) =>
  (await pool().query('SELECT count(*)::int AS n FROM products WHERE organization_id = $1', [organizationId])).rows[0]
    .n as number;

test('PUT by code creates the product with defaults (201, product.created), updates it afterwards (200, product.updated), and a retry with a new Idempotency-Key finds the same record', async (t) => {
  const caller = await createCaller(pool());
  const code = productCode();
  const first = await put(caller, code, beer(code), { 'Idempotency-Key': 'product-a' });
  t.is(first.status, 201);
  t.regex(first.body.id, /^prd_[0-9A-HJKMNP-TV-Z]{26}$/);
  t.like(first.body, {
    productCode: code,
    status: 'active',
    tracksStock: true,
    taxRate: 0,
    isEmpty: false,
    depositPrice: null,
    brand: null,
    category: null,
    empties: [],
    externalCodes: { dms: code },
  });
  t.deepEqual(first.body.sellingUnits, ['case', 'bottle']);
  const retry = await put(caller, code, beer(code), { 'Idempotency-Key': 'product-b' });
  t.is(retry.status, 200);
  t.is(retry.body.id, first.body.id);
  const partial = await api().request('PUT', `/products/by-code/dms/%20${code}%20`, {
    headers: caller.auth,
    json: { taxRate: 18.5, status: 'discontinued' },
  });
  t.is(partial.status, 200, 'the code is trimmed and finds the same record');
  t.like(partial.body, {
    id: first.body.id,
    taxRate: 18.5,
    status: 'discontinued',
    name: `Beer ${code}`,
    packSize: 24,
  });
  t.deepEqual(await events(first.body.id), ['product.created', 'product.updated', 'product.updated']);
  t.is(await productCount(caller.organizationId), 1);
  const { rows } = await pool().query(
    'SELECT tax_rate::text AS tax_rate, selling_units, status FROM products WHERE id = $1',
    [first.body.id],
  );
  t.deepEqual(rows[0], { tax_rate: '18.50', selling_units: ['case', 'bottle'], status: 'discontinued' });
  for (const path of [`/products/${first.body.id}`, `/products/by-code/dms/${code}`]) {
    const read = await api().request('GET', path, { headers: caller.auth });
    t.deepEqual(read.body, partial.body, path);
  }
});

test('a PUT that creates needs productCode, name, packSize and sellingUnits (400 required_field naming them)', async (t) => {
  const caller = await createCaller(pool());
  const res = await put(caller, 'NEW-1', { name: 'Only a name' });
  t.is(res.status, 400);
  t.is(res.body.code, 'required_field');
  t.deepEqual(res.body.errors.map((e: { field: string }) => e.field).sort(), [
    '/packSize',
    '/productCode',
    '/sellingUnits',
  ]);
  t.is(await productCount(caller.organizationId), 0);
});

test('the body is checked against the spec: code pattern, selling units, tax rate bounds and 2 decimals, over-long path code', async (t) => {
  const caller = await createCaller(pool());
  const bad: [Record<string, unknown>, string][] = [
    [beer('12345'), '/productCode'],
    [beer(productCode(), { sellingUnits: [] }), '/sellingUnits'],
    [beer(productCode(), { sellingUnits: ['case', 'case'] }), '/sellingUnits'],
    [beer(productCode(), { sellingUnits: ['pallet'] }), '/sellingUnits/0'],
    [beer(productCode(), { packSize: 0 }), '/packSize'],
    [beer(productCode(), { taxRate: 101 }), '/taxRate'],
    [beer(productCode(), { taxRate: 18.555 }), '/taxRate'],
    [beer(productCode(), { empties: [{ productCode: '900001', quantity: 0, per: 'case' }] }), '/empties/0/quantity'],
  ];
  for (const [body, field] of bad) {
    const res = await put(caller, String(body.productCode), body);
    t.is(res.status, 400, field);
    t.true(
      res.body.errors.some((e: { field: string }) => e.field === field),
      `${field}: ${res.text}`,
    );
  }
  const long = await put(caller, 'x'.repeat(65), beer());
  t.is(long.status, 400);
  t.like(long.body, { code: 'invalid_field', errors: [{ field: '/path/code' }] });
  const post = await api().request('POST', '/products', {
    headers: { ...caller.auth, 'Idempotency-Key': 'no-post' },
    json: beer(),
  });
  t.is(post.status, 404, 'products are created by PUT by code only');
  t.is(await productCount(caller.organizationId), 0);
});

test('a duplicate product code is 422 business_rule with duplicate_code naming /productCode, and nothing is written', async (t) => {
  const caller = await createCaller(pool());
  const code = productCode();
  await make(caller, beer(code));
  const res = await put(caller, 'OTHER-DMS-CODE', beer(code));
  t.is(res.status, 422);
  t.like(res.body, { code: 'business_rule', errors: [{ field: '/productCode', code: 'duplicate_code' }] });
  t.is(await productCount(caller.organizationId), 1);
  const other = await createCaller(pool());
  t.is((await put(other, code, beer(code))).status, 201, 'codes are unique per organisation only');
});

test('empties are stored by product id and returned with their current product code', async (t) => {
  const caller = await createCaller(pool());
  const crateBody = await make(caller, crate());
  const bottleBody = await make(
    caller,
    crate(productCode(), { name: 'Bottle 500ml', depositPrice: { amount: '500', currency: 'UGX' } }),
  );
  const code = productCode();
  const created = await put(
    caller,
    code,
    beer(code, {
      empties: [
        { productCode: crateBody.productCode, quantity: 1, per: 'case' },
        { productCode: bottleBody.productCode, quantity: 24, per: 'case' },
      ],
    }),
  );
  t.is(created.status, 201);
  t.deepEqual(created.body.empties, [
    { productId: crateBody.id, productCode: crateBody.productCode, quantity: 1, per: 'case' },
    { productId: bottleBody.id, productCode: bottleBody.productCode, quantity: 24, per: 'case' },
  ]);
  const { rows } = await pool().query('SELECT empties FROM products WHERE id = $1', [created.body.id]);
  t.deepEqual(rows[0].empties, [
    { productId: crateBody.id, quantity: 1, per: 'case' },
    { productId: bottleBody.id, quantity: 24, per: 'case' },
  ]);
  const newCrateCode = productCode();
  await put(caller, crateBody.productCode, { productCode: newCrateCode });
  const read = await api().request('GET', `/products/${created.body.id}`, { headers: caller.auth });
  t.is(read.body.empties[0].productCode, newCrateCode, 'a changed code of the empty is followed');
  const cleared = await put(caller, code, { empties: [] });
  t.deepEqual(cleared.body.empties, []);
});

test('an empty that does not exist is 422 product_not_found and one that is not an empty is 422 business_rule, each naming /empties/N/productCode', async (t) => {
  const caller = await createCaller(pool());
  const crateBody = await make(caller, crate());
  const full = await make(caller, beer());
  const code = productCode();
  const missing = await put(
    caller,
    code,
    beer(code, {
      empties: [
        { productCode: crateBody.productCode, quantity: 1, per: 'case' },
        { productCode: '999999', quantity: 1, per: 'case' },
        { productCode: '999998', quantity: 1, per: 'bottle' },
      ],
    }),
  );
  t.is(missing.status, 422);
  t.is(missing.body.code, 'product_not_found');
  t.deepEqual(
    missing.body.errors.map((e: { field: string }) => e.field),
    ['/empties/1/productCode', '/empties/2/productCode'],
  );
  const notEmpty = await put(
    caller,
    code,
    beer(code, { empties: [{ productCode: full.productCode, quantity: 1, per: 'case' }] }),
  );
  t.is(notEmpty.status, 422);
  t.like(notEmpty.body, {
    code: 'business_rule',
    errors: [{ field: '/empties/0/productCode', code: 'business_rule' }],
  });
  const foreign = await createCaller(pool());
  const theirCrate = await make(foreign, crate());
  const crossOrg = await put(
    caller,
    code,
    beer(code, { empties: [{ productCode: theirCrate.productCode, quantity: 1, per: 'case' }] }),
  );
  t.is(crossOrg.status, 422, "another organisation's empty does not exist here");
  t.is(crossOrg.body.code, 'product_not_found');
  t.is(await productCount(caller.organizationId), 2);
});

test('a deposit price is only for empties (422 business_rule naming /depositPrice), in the base currency, and an empty others carry stays an empty', async (t) => {
  const caller = await createCaller(pool());
  const code = productCode();
  const onFull = await put(caller, code, beer(code, { depositPrice: { amount: '500', currency: 'UGX' } }));
  t.is(onFull.status, 422);
  t.like(onFull.body, { code: 'business_rule', errors: [{ field: '/depositPrice' }] });
  t.is(await productCount(caller.organizationId), 0, 'the refused create left nothing behind');
  const usd = await put(caller, code, crate(code, { depositPrice: { amount: '5', currency: 'USD' } }));
  t.is(usd.status, 422);
  t.like(usd.body, { code: 'currency_not_supported', errors: [{ field: '/depositPrice/currency' }] });
  const empty = await make(caller, crate(code));
  t.deepEqual(empty.depositPrice, { amount: '6000', currency: 'UGX' });
  const unEmpty = await put(caller, code, { isEmpty: false });
  t.is(unEmpty.status, 422, 'a partial update is checked against the product as it would become');
  t.like(unEmpty.body, { errors: [{ field: '/depositPrice' }] });
  const carrier = await make(
    caller,
    beer(productCode(), { empties: [{ productCode: code, quantity: 1, per: 'case' }] }),
  );
  const carried = await put(caller, code, { isEmpty: false, depositPrice: null });
  t.is(carried.status, 422);
  t.like(carried.body, { code: 'business_rule', errors: [{ field: '/isEmpty' }] });
  t.true(carried.body.detail.includes(carrier.productCode));
  const { rows } = await pool().query('SELECT is_empty, deposit_amount::text AS deposit FROM products WHERE id = $1', [
    empty.id,
  ]);
  t.deepEqual(rows[0], { is_empty: true, deposit: '6000.0000' });
  t.deepEqual(await events(empty.id), ['product.created']);
});

test("another organisation's product is 404 not_found by id and by code", async (t) => {
  const owner = await createCaller(pool());
  const other = await createCaller(pool());
  const created = await make(owner, beer());
  for (const path of [`/products/${created.id}`, `/products/by-code/dms/${created.productCode}`]) {
    const res = await api().request('GET', path, { headers: other.auth });
    t.is(res.status, 404, path);
    t.is(res.body.code, 'not_found');
  }
});

test('GET /products filters by status, brand, category, isEmpty and externalCode', async (t) => {
  const caller = await createCaller(pool());
  const nile = await make(caller, beer(productCode(), { brand: 'Nile', category: 'Beer' }));
  const club = await make(caller, beer(productCode(), { brand: 'Club', category: 'Beer', status: 'inactive' }));
  const soda = await make(caller, beer(productCode(), { brand: 'Coca-Cola', category: 'Soda' }));
  const crateBody = await make(caller, crate(productCode(), { category: 'Empties' }));
  const ids = async (query: string) =>
    (await api().request('GET', `/products?${query}`, { headers: caller.auth })).body.data.map(
      (p: { id: string }) => p.id,
    );
  t.deepEqual(await ids('brand=Nile'), [nile.id]);
  t.deepEqual(await ids('category=Beer'), [club.id, nile.id], 'newest first');
  t.deepEqual(await ids('status=inactive'), [club.id]);
  t.deepEqual(await ids('isEmpty=true'), [crateBody.id]);
  t.deepEqual(await ids('isEmpty=false'), [soda.id, club.id, nile.id]);
  t.deepEqual(await ids(`externalCode=${soda.productCode}`), [soda.id]);
  const bad = await api().request('GET', '/products?isEmpty=maybe', { headers: caller.auth });
  t.is(bad.status, 400);
});

test('GET /products with updatedSince is a change feed, oldest change first, paged by cursor', async (t) => {
  const caller = await createCaller(pool());
  const a = await make(caller, beer());
  const b = await make(caller, beer());
  const c = await make(caller, beer());
  await new Promise((resolve) => setTimeout(resolve, 5));
  await put(caller, a.productCode, { name: 'A changed' });
  const since = encodeURIComponent(a.createdAt);
  const first = await api().request('GET', `/products?updatedSince=${since}&limit=2`, { headers: caller.auth });
  t.deepEqual(
    first.body.data.map((p: { id: string }) => p.id),
    [b.id, c.id],
  );
  t.true(first.body.hasMore);
  const second = await api().request(
    'GET',
    `/products?updatedSince=${since}&limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`,
    { headers: caller.auth },
  );
  t.deepEqual(
    second.body.data.map((p: { id: string; name: string }) => [p.id, p.name]),
    [[a.id, 'A changed']],
  );
  t.false(second.body.hasMore);
});

test('reading needs products:read and writing products:write (403 insufficient_scope), and a refused write changes nothing', async (t) => {
  const reader = await createCaller(pool(), { scopes: ['products:read'] });
  const refused = await put(reader, '100001', beer('100001'));
  t.is(refused.status, 403);
  t.is(refused.body.code, 'insufficient_scope');
  t.is(await productCount(reader.organizationId), 0);
  const customersOnly = await createCaller(pool(), { scopes: ['customers:read'] });
  for (const path of ['/products', '/products/prd_01JD4R7Q8S6T9V3X5Z7B9D1F3H', '/products/by-code/dms/100001']) {
    const res = await api().request('GET', path, { headers: customersOnly.auth });
    t.is(res.status, 403, path);
  }
  t.is((await api().request('GET', '/products', { headers: reader.auth })).status, 200);
});
