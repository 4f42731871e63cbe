// Invoices over HTTP: POST /invoices posts once per Idempotency-Key and answers the invoice with its lines (empties
// lines included), replayed as is; the list pages and filters; GET by id; the void and its 409; the errors name
// their fields; the scopes. The rules themselves are proved in test/domain/invoices.test.ts; the ledger checkers run
// over every organisation when the file ends.
import test from 'ava';
import { ALL_SCOPES, createCaller, type TestCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';

const api = useSharedService(test);
const pool = () => api().pool;

interface Setup {
  caller: TestCaller;
  soda: string;
  crate: string;
  warehouse: string;
  van: string;
  customer: string;
}

let codes = 400100;
async function setup(): Promise<Setup> {
  const caller = await createCaller(pool(), { scopes: ALL_SCOPES });
  const put = async (path: string, json: unknown) => {
    const res = await api().request('PUT', path, { headers: caller.auth, json });
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${res.text}`);
    return res.body.id as string;
  };
  const crateCode = String(codes++);
  const sodaCode = String(codes++);
  const crate = await put(`/products/by-code/dms/${crateCode}`, {
    productCode: crateCode,
    name: 'Crate 24',
    packSize: 1,
    sellingUnits: ['piece'],
    tracksStock: true,
    isEmpty: true,
  });
  const soda = await put(`/products/by-code/dms/${sodaCode}`, {
    productCode: sodaCode,
    name: 'Soda 300ml',
    packSize: 24,
    sellingUnits: ['case', 'bottle'],
    tracksStock: true,
    taxRate: 18,
    empties: [{ productCode: crateCode, quantity: 1, per: 'case' }],
  });
  const warehouse = await put('/locations/by-code/dms/M01', { code: 'M01', name: 'Main warehouse' });
  const van = await put('/locations/by-code/dms/V_R01-G', { code: 'V_R01-G', name: 'Van R01 good' });
  const outletCode = `UG${String(codes++).padStart(7, '0')}`;
  const customer = await put(`/customers/by-code/dms/${outletCode}`, {
    outletCode,
    name: 'Mama Shop',
    channel: 'retail',
    creditLimit: { amount: '200000', currency: 'UGX' },
  });
  const stock = await post(
    caller,
    '/stock-adjustments',
    {
      reasonCode: 'OG01',
      lines: [
        {
          productId: soda,
          locationId: warehouse,
          unit: 'case',
          quantity: 10,
          unitCost: { amount: '24000', currency: 'UGX' },
        },
        { productId: crate, locationId: warehouse, unit: 'piece', quantity: 10 },
      ],
    },
    `stock-${codes}`,
  );
  if (stock.status !== 201) throw new Error(`stock: ${stock.status} ${stock.text}`);
  return { caller, soda, crate, warehouse, van, customer };
}

const post = (caller: TestCaller, path: string, json: unknown, key?: string) =>
  api().request('POST', path, {
    headers: { ...caller.auth, ...(key === undefined ? {} : { 'Idempotency-Key': key }) },
    json,
  });
const get = (caller: TestCaller, path: string) => api().request('GET', path, { headers: caller.auth });
const ugx = (amount: string) => ({ amount, currency: 'UGX' });
const sale = (s: Setup, quantity = 2) => ({
  customerId: s.customer,
  locationId: s.warehouse,
  issueDate: '2026-11-24',
  lines: [{ productId: s.soda, unit: 'case', quantity, unitPrice: ugx('25500'), discount: ugx('1000') }],
});
const fields = (body: { errors?: { field: string }[] }) => body.errors?.map((e) => e.field);

test('POST /invoices posts once per Idempotency-Key: 201 with the totals, the lines and the empties line; the replay answers the same and posts nothing', async (t) => {
  const s = await setup();
  const first = await post(s.caller, '/invoices', sale(s), 'inv-1');
  t.is(first.status, 201, first.text);
  t.regex(first.body.number, /^INV-0{5}1$/);
  t.like(first.body, {
    customerId: s.customer,
    status: 'open',
    issueDate: '2026-11-24',
    dueDate: '2026-11-24',
    currency: 'UGX',
    locationId: s.warehouse,
    tripId: null,
    subtotal: ugx('51000'),
    discount: ugx('1000'),
    tax: ugx('9000'),
    total: ugx('59000'),
    balance: ugx('59000'),
    voidReason: null,
    voidedAt: null,
    linesTruncated: false,
  });
  t.deepEqual(
    first.body.lines.map((l: { kind: string; productId: string; quantity: number; taxRate: string }) => [
      l.kind,
      l.productId,
      l.quantity,
      l.taxRate,
    ]),
    [
      ['sale', s.soda, 2, '18'],
      ['empties', s.crate, 2, '0'],
    ],
  );
  const again = await post(s.caller, '/invoices', sale(s), 'inv-1');
  t.is(again.status, 201);
  t.is(again.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(again.body, first.body);
  const { rows } = await pool().query('SELECT count(*)::int AS n FROM invoices WHERE organization_id = $1', [
    s.caller.organizationId,
  ]);
  t.is(rows[0].n, 1);
  const events = await pool().query('SELECT type FROM events WHERE organization_id = $1 AND record_id = $2', [
    s.caller.organizationId,
    first.body.id,
  ]);
  t.deepEqual(events.rows, [{ type: 'invoice.created' }]);
  const missingKey = await post(s.caller, '/invoices', sale(s));
  t.is(missingKey.status, 400);
  t.is(missingKey.body.code, 'idempotency_key_required');
});

test("GET /invoices pages with the customerId and status filters; GET /invoices/{id} reads one; another organisation's ids are 404", async (t) => {
  const s = await setup();
  const a = (await post(s.caller, '/invoices', sale(s, 1), 'list-a')).body;
  const b = (await post(s.caller, '/invoices', sale(s, 1), 'list-b')).body;
  await post(s.caller, `/invoices/${a.id}/void`, { reason: 'duplicate' }, 'list-void');
  const all = await get(s.caller, '/invoices');
  t.is(all.status, 200);
  t.deepEqual(
    all.body.data.map((i: { id: string }) => i.id),
    [b.id, a.id],
    'newest first',
  );
  t.is(all.body.data[0].lines.length, 2, 'with their lines');
  const open = await get(s.caller, `/invoices?status=open&customerId=${s.customer}`);
  t.deepEqual(
    open.body.data.map((i: { id: string }) => i.id),
    [b.id],
  );
  const one = await get(s.caller, `/invoices/${b.id}`);
  t.deepEqual(one.body, all.body.data[0]);
  const other = await setup();
  t.is((await get(other.caller, `/invoices/${b.id}`)).status, 404);
  const foreign = await get(other.caller, `/invoices?customerId=${s.customer}`);
  t.is(foreign.status, 404);
  t.deepEqual(fields(foreign.body), ['/query/customerId']);
});

test('POST /invoices/{id}/void answers the voided invoice, puts the stock back, and a second void is 409 invalid_state', async (t) => {
  const s = await setup();
  const invoice = (await post(s.caller, '/invoices', sale(s), 'void-inv')).body;
  const voided = await post(
    s.caller,
    `/invoices/${invoice.id}/void`,
    { reason: 'Entered for the wrong customer' },
    'void-1',
  );
  t.is(voided.status, 200, voided.text);
  t.like(voided.body, {
    status: 'void',
    voidReason: 'Entered for the wrong customer',
    balance: ugx('0'),
    total: ugx('59000'),
  });
  t.regex(voided.body.voidedAt, /Z$/);
  const levels = await get(s.caller, `/stock-levels?locationId=${s.warehouse}`);
  t.deepEqual(
    levels.body.data.map((l: { productId: string; quantity: number }) => [l.productId, l.quantity]).sort(),
    [
      [s.soda, 240],
      [s.crate, 10],
    ].sort(),
  );
  const again = await post(s.caller, `/invoices/${invoice.id}/void`, { reason: 'again' }, 'void-2');
  t.is(again.status, 409);
  t.is(again.body.code, 'invalid_state');
  t.is((await post(s.caller, '/invoices/inv_nope/void', { reason: 'x' }, 'void-3')).status, 404);
  const empty = await post(s.caller, `/invoices/${invoice.id}/void`, {}, 'void-4');
  t.is(empty.status, 400);
  t.deepEqual(fields(empty.body), ['/reason']);
});

test('every refusal names its field: unknown customer and product, foreign currency, short stock, the credit limit, a van sale without a trip', async (t) => {
  const s = await setup();
  const refuse = async (body: unknown, key: string) => await post(s.caller, '/invoices', body, key);
  const customer = await refuse({ ...sale(s), customerId: 'cus_nope' }, 'e1');
  t.deepEqual(
    [customer.status, customer.body.code, fields(customer.body)],
    [422, 'customer_not_found', ['/customerId']],
  );
  const product = await refuse({ ...sale(s), lines: [{ ...sale(s).lines[0], productId: 'prd_nope' }] }, 'e2');
  t.deepEqual(
    [product.status, product.body.code, fields(product.body)],
    [422, 'product_not_found', ['/lines/0/productId']],
  );
  const currency = await refuse(
    { ...sale(s), lines: [{ ...sale(s).lines[0], unitPrice: { amount: '10', currency: 'USD' } }] },
    'e3',
  );
  t.deepEqual(
    [currency.status, currency.body.code, fields(currency.body)],
    [422, 'currency_not_supported', ['/lines/0/unitPrice/currency']],
  );
  const short = await refuse(sale(s, 11), 'e4');
  // 11 cases: the soda (264 bottles of 240) and the 11 crates they carry (of 10), each named by the line that sells them.
  t.deepEqual(
    [short.status, short.body.code, fields(short.body)],
    [422, 'insufficient_stock', ['/lines/0/quantity', '/lines/0/quantity']],
  );
  const credit = await refuse(sale(s, 4), 'e5'); // 118 000 twice passes 200 000
  t.is(credit.status, 201);
  const over = await refuse(sale(s, 4), 'e6');
  t.deepEqual([over.status, over.body.code, fields(over.body)], [422, 'credit_limit_exceeded', ['/customerId']]);
  const van = await refuse({ ...sale(s), locationId: s.van }, 'e7');
  t.deepEqual([van.status, van.body.code, fields(van.body)], [422, 'field_sales_disabled', ['/locationId']]);
  const zero = await refuse({ ...sale(s), lines: [{ ...sale(s).lines[0], quantity: 0 }] }, 'e8');
  t.deepEqual([zero.status, zero.body.code, fields(zero.body)], [400, 'invalid_field', ['/lines/0/quantity']]);
});

test('scopes: invoices:read reads but cannot post (403 insufficient_scope)', async (t) => {
  const s = await setup();
  const reader = await createCaller(pool(), { organizationId: s.caller.organizationId, scopes: ['invoices:read'] });
  t.is((await get(reader, '/invoices')).status, 200);
  const refused = await post(reader, '/invoices', sale(s), 'scope-1');
  t.is(refused.status, 403);
  t.is(refused.body.code, 'insufficient_scope');
});

test("an invoice created with externalCodes is read back by code; an unknown system or code, or another organisation's code, is 404; a code another invoice holds is 422 naming it and posts nothing", async (t) => {
  const s = await setup();
  const created = await post(
    s.caller,
    '/invoices',
    { ...sale(s, 1), externalCodes: { dms: 'CS-R01-000381' } },
    'code-a',
  );
  t.is(created.status, 201, created.text);
  t.deepEqual(created.body.externalCodes, { dms: 'CS-R01-000381' });
  const byCode = await get(s.caller, '/invoices/by-code/dms/CS-R01-000381');
  t.is(byCode.status, 200, byCode.text);
  t.deepEqual(byCode.body, (await get(s.caller, `/invoices/${created.body.id}`)).body);
  t.deepEqual(
    (await get(s.caller, '/invoices?limit=5')).body.data.find((i: { id: string }) => i.id === created.body.id)
      .externalCodes,
    { dms: 'CS-R01-000381' },
  );
  t.is((await get(s.caller, '/invoices/by-code/dms/CS-R01-999999')).body.code, 'not_found');
  t.is((await get(s.caller, '/invoices/by-code/nosuchsystem/CS-R01-000381')).status, 404);
  const other = await setup();
  t.is((await get(other.caller, '/invoices/by-code/dms/CS-R01-000381')).status, 404, 'a code is per organisation');
  const count = async () =>
    (
      await pool().query('SELECT count(*)::int AS n FROM invoices WHERE organization_id = $1', [
        s.caller.organizationId,
      ])
    ).rows[0].n;
  const before = await count();
  const reused = await post(
    s.caller,
    '/invoices',
    { ...sale(s, 1), externalCodes: { dms: 'CS-R01-000381' } },
    'code-b',
  );
  t.is(reused.status, 422, reused.text);
  t.is(reused.body.code, 'business_rule');
  t.deepEqual(fields(reused.body), ['/externalCodes/dms']);
  t.is(await count(), before, 'nothing posted');
});

test('Idempotency-Key is optional on POST /invoices/{id}/void, as on PUT and PATCH: without one the void is done once; sent, it is honoured (a retry replays the first answer)', async (t) => {
  const s = await setup();
  const plain = (await post(s.caller, '/invoices', sale(s, 1), 'opt-void-a')).body;
  const voided = await post(s.caller, `/invoices/${plain.id}/void`, { reason: 'No key sent' });
  t.is(voided.status, 200, voided.text);
  t.like(voided.body, { id: plain.id, status: 'void', voidReason: 'No key sent' });
  t.is(voided.headers.get('idempotent-replayed'), null);
  const keyed = (await post(s.caller, '/invoices', sale(s, 1), 'opt-void-b')).body;
  const first = await post(s.caller, `/invoices/${keyed.id}/void`, { reason: 'Keyed' }, 'opt-void-b-void');
  const retry = await post(s.caller, `/invoices/${keyed.id}/void`, { reason: 'Keyed' }, 'opt-void-b-void');
  t.deepEqual(
    [first.status, retry.status, retry.headers.get('idempotent-replayed'), retry.text],
    [200, 200, 'true', first.text],
  );
});

test('GET /invoices?externalCode= lists the invoice carrying that code in any code system (trimmed, case-sensitive), combined with the other filters, and nothing of another organisation', async (t) => {
  const s = await setup();
  const coded = (
    await post(s.caller, '/invoices', { ...sale(s, 1), externalCodes: { dms: 'CS-LIST-1' } }, 'list-code-1')
  ).body;
  await post(s.caller, '/invoices', sale(s, 1), 'list-code-2');
  const ids = async (query: string) =>
    (await get(s.caller, `/invoices?${query}`)).body.data.map((i: { id: string }) => i.id);
  t.deepEqual(await ids('externalCode=CS-LIST-1'), [coded.id]);
  t.deepEqual(await ids('externalCode=%20CS-LIST-1%20'), [coded.id]);
  t.deepEqual(await ids('externalCode=cs-list-1'), []);
  t.deepEqual(await ids('externalCode=CS-LIST-1&status=void'), []);
  t.deepEqual(await ids(`externalCode=CS-LIST-1&customerId=${s.customer}`), [coded.id]);
  const other = await setup();
  t.deepEqual((await get(other.caller, '/invoices?externalCode=CS-LIST-1')).body.data, []);
});
