// Credit notes and returns over HTTP: POST /credit-notes issues once per Idempotency-Key and answers the credit note
// with its applications, replayed as is; GET by id, by code and the list with its filters; the cancel and its 409;
// currency_not_supported and the other errors name their fields; the scopes returns:read and returns:write; POST
// /returns and its reads; a credit note of more than 500 lines is cut with linesTruncated. The rules themselves are
// proved in test/domain/credit-notes.test.ts; the ledger checkers run over every organisation when the file ends.
import test from 'ava';
import { ALL_SCOPES, createCaller, type TestCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';

const api = useSharedService(test);
const pool = () => api().pool;

interface Setup {
  caller: TestCaller;
  soda: string;
  warehouse: string;
  customer: string;
  outletCode: string;
}

let codes = 500100;
async function setup(): Promise<Setup> {
  const caller = await createCaller(pool(), { scopes: ALL_SCOPES });
  const put = async (path: string, json: unknown) => {
    const res = await api().request('PUT', path, { headers: caller.auth, json });
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${res.text}`);
    return res.body.id as string;
  };
  const sodaCode = String(codes++);
  const soda = await put(`/products/by-code/dms/${sodaCode}`, {
    productCode: sodaCode,
    name: 'Soda 300ml',
    packSize: 24,
    sellingUnits: ['case', 'bottle'],
    tracksStock: true,
    taxRate: 18,
  });
  const warehouse = await put('/locations/by-code/dms/M01', { code: 'M01', name: 'Main warehouse' });
  const outletCode = `UG${String(codes++).padStart(7, '0')}`;
  const customer = await put(`/customers/by-code/dms/${outletCode}`, {
    outletCode,
    name: 'Mama Shop',
    channel: 'retail',
  });
  const stock = await post(
    caller,
    '/stock-adjustments',
    {
      reasonCode: 'OG01',
      lines: [{ productId: soda, locationId: warehouse, unit: 'case', quantity: 10, unitCost: ugx('24000') }],
    },
    `stock-${codes}`,
  );
  if (stock.status !== 201) throw new Error(`stock: ${stock.status} ${stock.text}`);
  return { caller, soda, warehouse, customer, outletCode };
}

const post = (caller: TestCaller, path: string, json: unknown, key?: string) =>
  api().request('POST', path, {
    headers: { ...caller.auth, ...(key === undefined ? {} : { 'Idempotency-Key': key }) },
    json,
  });
const get = (caller: TestCaller, path: string) => api().request('GET', path, { headers: caller.auth });
const ugx = (amount: string) => ({ amount, currency: 'UGX' });
const fields = (body: { errors?: { field: string }[] }) => body.errors?.map((e) => e.field);

/** One case of soda at 25 500 + 18 %: 30 090. */
async function invoice(s: Setup, key: string): Promise<{ id: string; number: string }> {
  const res = await post(
    s.caller,
    '/invoices',
    {
      customerId: s.customer,
      locationId: s.warehouse,
      issueDate: '2026-11-24',
      lines: [{ productId: s.soda, unit: 'case', quantity: 1, unitPrice: ugx('25500') }],
    },
    key,
  );
  if (res.status !== 201) throw new Error(`invoice: ${res.status} ${res.text}`);
  return res.body;
}

const credit = (s: Setup, invoiceId: string, amount: string, more: Record<string, unknown> = {}) => ({
  customer: { code: s.outletCode },
  invoiceId,
  type: 'adjustment',
  reason: 'Promotion price difference',
  issueDate: '2026-11-25',
  lines: [{ type: 'adjustment', description: 'Rebate', quantity: 1, unitPrice: ugx(amount) }],
  ...more,
});

test('POST /credit-notes issues once per Idempotency-Key: 201 applied to the invoice with the rest remaining; the replay answers the same; GET by id, by code and the filtered list read it', async (t) => {
  const s = await setup();
  const inv = await invoice(s, 'inv-1');
  const first = await post(
    s.caller,
    '/credit-notes',
    credit(s, inv.id, '40000', { externalCodes: { dms: 'CN-9' }, notes: 'Agreed by phone' }),
    'cn-1',
  );
  t.is(first.status, 201, first.text);
  t.like(first.body, {
    creditNoteNumber: 'CN-000001',
    status: 'applied',
    type: 'adjustment',
    invoiceId: inv.id,
    returnId: null,
    tripId: null,
    issueDate: '2026-11-25',
    customer: { id: s.customer, name: 'Mama Shop', code: s.outletCode },
    notes: 'Agreed by phone',
    total: ugx('40000'),
    remainingAmount: ugx('9910'),
    cashRefundAmount: null,
    currency: 'UGX',
    externalCodes: { dms: 'CN-9' },
    linesTruncated: false,
    fiscal: { status: null, fdn: null, verificationCode: null, qrCode: null, fiscalisedAt: null },
    posting: {
      status: 'not_applicable',
      accountingRef: null,
      accountingType: null,
      reason: 'The organisation has no accounting connection: nothing is posted to an accounting system.',
    },
  });
  t.true('phone' in first.body.customer, "a key with customers:pii sees the customer's phone");
  t.deepEqual(
    first.body.applications.map((a: { invoiceId: string; invoiceNumber: string; amount: unknown }) => [
      a.invoiceId,
      a.invoiceNumber,
      a.amount,
    ]),
    [[inv.id, inv.number, ugx('30090')]],
  );
  const again = await post(
    s.caller,
    '/credit-notes',
    credit(s, inv.id, '40000', { externalCodes: { dms: 'CN-9' }, notes: 'Agreed by phone' }),
    'cn-1',
  );
  t.is(again.status, 201);
  t.is(again.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(again.body, first.body);
  t.like((await get(s.caller, `/invoices/${inv.id}`)).body, { status: 'paid', balance: ugx('0') });

  t.deepEqual((await get(s.caller, `/credit-notes/${first.body.id}`)).body, first.body);
  t.deepEqual((await get(s.caller, '/credit-notes/by-code/dms/CN-9')).body, first.body);
  t.is((await get(s.caller, '/credit-notes/by-code/dms/CN-10')).status, 404);
  const other = await post(s.caller, '/credit-notes', credit(s, (await invoice(s, 'inv-2')).id, '100'), 'cn-2');
  t.is(other.status, 201, other.text);
  const ids = async (query: string) =>
    ((await get(s.caller, `/credit-notes${query}`)).body.data as { id: string }[]).map((c) => c.id);
  t.deepEqual(await ids(''), [other.body.id, first.body.id]);
  t.deepEqual(await ids(`?invoiceId=${inv.id}`), [first.body.id]);
  t.deepEqual(await ids(`?customerId=${s.customer}&status=applied`), [other.body.id, first.body.id]);
  t.deepEqual(await ids('?status=cancelled'), []);
  t.deepEqual(await ids('?externalCode=CN-9'), [first.body.id]);
  const unknown = await get(s.caller, '/credit-notes?invoiceId=inv_01JD4R7Q8S6T9V3X5Z7B9D1F3V');
  t.is(unknown.status, 404);
  t.deepEqual(fields(unknown.body), ['/query/invoiceId']);
  const missingKey = await post(s.caller, '/credit-notes', credit(s, inv.id, '1'));
  t.is(missingKey.body.code, 'idempotency_key_required');
});

test('POST /credit-notes/{id}/cancel removes the applications and answers the cancelled credit note; a second cancel is 409 invalid_state', async (t) => {
  const s = await setup();
  const inv = await invoice(s, 'inv-c');
  const note = (await post(s.caller, '/credit-notes', credit(s, inv.id, '10000'), 'cn-c')).body;
  t.like((await get(s.caller, `/invoices/${inv.id}`)).body, { balance: ugx('20090') });
  const cancelled = await post(s.caller, `/credit-notes/${note.id}/cancel`, { reason: 'Wrong invoice' }, 'cancel-1');
  t.is(cancelled.status, 200, cancelled.text);
  t.like(cancelled.body, {
    status: 'cancelled',
    cancelReason: 'Wrong invoice',
    remainingAmount: ugx('0'),
    applications: [],
  });
  t.like((await get(s.caller, `/invoices/${inv.id}`)).body, { status: 'open', balance: ugx('30090') });
  const twice = await post(s.caller, `/credit-notes/${note.id}/cancel`, { reason: 'Again' }, 'cancel-2');
  t.is(twice.status, 409);
  t.is(twice.body.code, 'invalid_state');
  const missing = await post(
    s.caller,
    '/credit-notes/cn_01JD4R7Q8S6T9V3X5Z7B9D1F4E/cancel',
    { reason: 'x' },
    'cancel-3',
  );
  t.is(missing.status, 404);
});

test("the errors of POST /credit-notes name their fields and write nothing: currency_not_supported, customer_not_found, invoice_not_found, product_not_found, business_rule, a body that is not the schema's", async (t) => {
  const s = await setup();
  const inv = await invoice(s, 'inv-e');
  const cases: [unknown, number, string, string[]][] = [
    [
      credit(s, inv.id, '100', {
        lines: [{ type: 'adjustment', description: 'x', quantity: 1, unitPrice: { amount: '100', currency: 'USD' } }],
      }),
      422,
      'currency_not_supported',
      ['/lines/0/unitPrice/currency'],
    ],
    [credit(s, inv.id, '100', { customer: { code: 'UG9999999' } }), 422, 'customer_not_found', ['/customer/code']],
    [
      credit(s, inv.id, '100', { invoiceId: 'inv_01JD4R7Q8S6T9V3X5Z7B9D1F3V' }),
      422,
      'invoice_not_found',
      ['/invoiceId'],
    ],
    [
      credit(s, inv.id, '100', {
        lines: [{ product: { id: 'prd_01JD4R7Q8S6T9V3X5Z7B9D1F3K' }, quantity: 1, unitPrice: ugx('100') }],
      }),
      422,
      'product_not_found',
      ['/lines/0/product/id'],
    ],
    [credit(s, inv.id, '100', { cashRefundAmount: ugx('1') }), 422, 'business_rule', ['/cashRefundAmount']],
    [credit(s, inv.id, '100', { type: 'return' }), 400, 'invalid_field', ['/type']],
    [credit(s, inv.id, '100', { surprise: true }), 400, 'unknown_field', ['/surprise']],
  ];
  for (const [i, [body, status, code, expected]] of cases.entries()) {
    const res = await post(s.caller, '/credit-notes', body, `bad-${i}`);
    t.deepEqual([res.status, res.body.code, fields(res.body)], [status, code, expected], JSON.stringify(body));
  }
  const { rows } = await pool().query('SELECT count(*)::int AS n FROM credit_notes WHERE organization_id = $1', [
    s.caller.organizationId,
  ]);
  t.is(rows[0].n, 0);
});

test('scopes: returns:read reads credit notes and returns but cannot create them (403 insufficient_scope); without customers:pii the customer has no phone or taxId', async (t) => {
  const s = await setup();
  const inv = await invoice(s, 'inv-s');
  const note = (await post(s.caller, '/credit-notes', credit(s, inv.id, '100'), 'cn-s')).body;
  const reader = await createCaller(pool(), { organizationId: s.caller.organizationId, scopes: ['returns:read'] });
  const read = await get(reader, `/credit-notes/${note.id}`);
  t.is(read.status, 200);
  t.false('phone' in read.body.customer);
  t.false('taxId' in read.body.customer);
  t.is((await get(reader, '/returns')).status, 200);
  for (const [path, body] of [
    ['/credit-notes', credit(s, inv.id, '100')],
    [
      '/returns',
      { invoiceId: inv.id, lines: [{ invoiceLineNumber: 1, unit: 'bottle', quantity: 1, condition: 'good' }] },
    ],
  ] as const) {
    const refused = await post(reader, path, body, `scope-${path}`);
    t.deepEqual([refused.status, refused.body.code], [403, 'insufficient_scope'], path);
  }
  const none = await createCaller(pool(), { organizationId: s.caller.organizationId, scopes: ['invoices:read'] });
  t.is((await get(none, '/credit-notes')).status, 403);
});

test("POST /returns processes a return: 201 with its lines at the invoice's prices and its credit note; GET by id and the list; externalCode with updatedSince is 400", async (t) => {
  const s = await setup();
  const inv = await invoice(s, 'inv-r');
  const res = await post(
    s.caller,
    '/returns',
    {
      invoiceId: inv.id,
      returnDate: '2026-11-25',
      reason: 'Expired',
      lines: [{ invoiceLineNumber: 1, unit: 'bottle', quantity: 2, condition: 'good' }],
    },
    'ret-1',
  );
  t.is(res.status, 201, res.text);
  // 25 500 / 24 = 1 062.5 -> 1 063 a bottle; 2 126 + 18 % (382.68 -> 383) = 2 509.
  t.like(res.body, {
    number: 'RT-000001',
    status: 'processed',
    invoiceId: inv.id,
    customerId: s.customer,
    locationId: s.warehouse,
    badStockLocationId: null,
    tripId: null,
    subtotal: ugx('2126'),
    discount: ugx('0'),
    tax: ugx('383'),
    total: ugx('2509'),
    linesTruncated: false,
    externalCodes: {},
  });
  t.like(res.body.lines[0], {
    lineNumber: 1,
    invoiceLineNumber: 1,
    productId: s.soda,
    unit: 'bottle',
    quantity: 2,
    condition: 'good',
    unitPrice: ugx('1063'),
    taxRate: 18,
    amount: ugx('2126'),
    tax: ugx('383'),
  });
  const note = (await get(s.caller, `/credit-notes/${res.body.creditNoteId}`)).body;
  t.like(note, { type: 'return', returnId: res.body.id, total: ugx('2509') });
  t.deepEqual((await get(s.caller, `/returns/${res.body.id}`)).body, res.body);
  t.deepEqual(
    ((await get(s.caller, `/returns?invoiceId=${inv.id}`)).body.data as { id: string }[]).map((r) => r.id),
    [res.body.id],
  );
  const both = await get(s.caller, '/returns?externalCode=RT1&updatedSince=2026-01-01T00:00:00Z');
  t.deepEqual([both.status, both.body.code, fields(both.body)], [400, 'invalid_field', ['/query/externalCode']]);
  const over = await post(
    s.caller,
    '/returns',
    { invoiceId: inv.id, lines: [{ invoiceLineNumber: 1, unit: 'bottle', quantity: 23, condition: 'good' }] },
    'ret-2',
  );
  t.deepEqual([over.status, over.body.code, fields(over.body)], [422, 'business_rule', ['/lines/0/quantity']]);
  const cancel = await post(s.caller, `/credit-notes/${note.id}/cancel`, { reason: 'Try' }, 'ret-cancel');
  t.deepEqual([cancel.status, cancel.body.code], [409, 'invalid_state']);
});

test('a credit note of 501 lines answers its first 500 with linesTruncated', async (t) => {
  const s = await setup();
  const inv = await invoice(s, 'inv-l');
  const lines = Array.from({ length: 501 }, (_, i) => ({
    type: 'adjustment',
    description: `Rebate ${i + 1}`,
    quantity: 1,
    unitPrice: ugx('1'),
  }));
  const created = await post(s.caller, '/credit-notes', credit(s, inv.id, '1', { lines }), 'cn-long');
  t.is(created.status, 400, 'a request takes at most 500 lines');
  // A request carries at most 500 lines, so the 501st is added behind the API's back (a DMS document may carry more).
  const note = (await post(s.caller, '/credit-notes', credit(s, inv.id, '1', { lines: lines.slice(0, 500) }), 'cn-500'))
    .body;
  t.is(note.lines.length, 500);
  t.false(note.linesTruncated);
  await pool().query(
    `INSERT INTO credit_note_lines (organization_id, credit_note_id, line_number, type, description, quantity, unit_price, discount, tax_rate, amount, tax)
    VALUES ($1, $2, 501, 'adjustment', 'Rebate 501', 1, 0, 0, 0, 0, 0)`,
    [s.caller.organizationId, note.id],
  );
  const read = (await get(s.caller, `/credit-notes/${note.id}`)).body;
  t.is(read.lines.length, 500);
  t.true(read.linesTruncated);
  t.is(read.lines.at(-1).lineNumber, 500);
});

test('Idempotency-Key is optional on POST /credit-notes/{id}/cancel, as on PUT and PATCH: without one the credit note is cancelled once; sent, a retry replays', async (t) => {
  const s = await setup();
  const inv = await invoice(s, 'inv-opt');
  const note = (await post(s.caller, '/credit-notes', credit(s, inv.id, '10000'), 'cn-opt')).body;
  const cancelled = await post(s.caller, `/credit-notes/${note.id}/cancel`, { reason: 'No key sent' });
  t.is(cancelled.status, 200, cancelled.text);
  t.like(cancelled.body, { status: 'cancelled', cancelReason: 'No key sent' });
  const keyedNote = (await post(s.caller, '/credit-notes', credit(s, inv.id, '5000'), 'cn-opt-2')).body;
  const first = await post(s.caller, `/credit-notes/${keyedNote.id}/cancel`, { reason: 'Keyed' }, 'cn-opt-2-cancel');
  const retry = await post(s.caller, `/credit-notes/${keyedNote.id}/cancel`, { reason: 'Keyed' }, 'cn-opt-2-cancel');
  t.deepEqual(
    [first.status, retry.status, retry.headers.get('idempotent-replayed'), retry.text],
    [200, 200, 'true', first.text],
  );
});
