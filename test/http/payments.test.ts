// Payments over HTTP: POST /payments records once per Idempotency-Key and answers { payments: [...] } (each receipt
// as GET /payments/{id} answers it), replayed as is; the list pages and filters; GET by id; the reversal and its 409;
// a void refused while a payment is allocated; the errors name their fields; the scopes; a collection's external
// code (decision 0030: it names the collection, read back whole by code and listed by the externalCode filter). The rules themselves are
// proved in test/domain/payments.test.ts; the ledger checkers run over every organisation when the file ends.
import test from 'ava';
import { ALL_SCOPES, createCaller, type TestCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';

const api = useSharedService(test);
const pool = () => api().pool;

interface Setup {
  caller: TestCaller;
  customer: string;
  invoices: string[];
}

let codes = 500100;
/** An organisation with a customer owing two invoices of 59 000 (2 cases at 25 500 less 1 000, 18 % tax). */
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
    sellingUnits: ['case'],
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
  const invoices: string[] = [];
  for (const n of [1, 2]) {
    const invoice = await post(
      caller,
      '/invoices',
      {
        customerId: customer,
        locationId: warehouse,
        issueDate: '2026-11-24',
        lines: [{ productId: soda, unit: 'case', quantity: 2, unitPrice: ugx('25500'), discount: ugx('1000') }],
      },
      `inv-${codes}-${n}`,
    );
    if (invoice.status !== 201) throw new Error(`invoice: ${invoice.status} ${invoice.text}`);
    invoices.push(invoice.body.id);
  }
  return { caller, customer, invoices };
}

const post = (caller: TestCaller, path: string, json: unknown, key?: string) =>
  api().request('POST', path, {
    headers: { ...caller.auth, ...(key === undefined ? {} : { 'Idempotency-Key': key }) },
    json,
  });
const get = (caller: TestCaller, path: string) => api().request('GET', path, { headers: caller.auth });
const ugx = (amount: string) => ({ amount, currency: 'UGX' });
const fields = (body: { errors?: { field: string }[] }) => body.errors?.map((e) => e.field);
const count = async (s: Setup, table: string) =>
  (await pool().query(`SELECT count(*)::int AS n FROM ${table} WHERE organization_id = $1`, [s.caller.organizationId]))
    .rows[0].n as number;

/** 130 000 by cheque: 59 000 pays the first invoice, 50 000 the second, 21 000 is left on the account. */
const split = (s: Setup) => ({
  customerId: s.customer,
  method: 'cheque',
  reference: '004512',
  amount: ugx('130000'),
  paymentDate: '2026-11-25',
  allocations: [
    { invoiceId: s.invoices[0], amount: ugx('59000') },
    { invoiceId: s.invoices[1], amount: ugx('50000') },
  ],
  unallocated: ugx('21000'),
});

test('POST /payments records once per Idempotency-Key: 201 with one receipt per allocation and one for the rest, each as GET answers it; the replay answers the same and records nothing', async (t) => {
  const s = await setup();
  const first = await post(s.caller, '/payments', split(s), 'pay-1');
  t.is(first.status, 201, first.text);
  const receipts = first.body.payments as {
    id: string;
    number: string;
    invoiceId: string | null;
    amount: unknown;
    status: string;
    receiptGroupId: string;
  }[];
  t.deepEqual(
    receipts.map((r) => [r.number, r.invoiceId, r.amount, r.status]),
    [
      ['RCT-000001', s.invoices[0], ugx('59000'), 'posted'],
      ['RCT-000002', s.invoices[1], ugx('50000'), 'posted'],
      ['RCT-000003', null, ugx('21000'), 'posted'],
    ],
  );
  t.is(new Set(receipts.map((r) => r.receiptGroupId)).size, 1, 'one receipt group');
  for (const receipt of receipts) t.deepEqual((await get(s.caller, `/payments/${receipt.id}`)).body, receipt);
  t.like((await get(s.caller, `/invoices/${s.invoices[0]}`)).body, { status: 'paid', balance: ugx('0') });
  t.like((await get(s.caller, `/invoices/${s.invoices[1]}`)).body, { status: 'open', balance: ugx('9000') });

  const again = await post(s.caller, '/payments', split(s), 'pay-1');
  t.is(again.status, 201);
  t.is(again.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(again.body, first.body);
  t.is(await count(s, 'payments'), 3);
  const reused = await post(s.caller, '/payments', { ...split(s), reference: '004513' }, 'pay-1');
  t.deepEqual([reused.status, reused.body.code], [422, 'idempotency_key_reused']);
  const missingKey = await post(s.caller, '/payments', split(s));
  t.deepEqual([missingKey.status, missingKey.body.code], [400, 'idempotency_key_required']);
});

test("GET /payments pages newest first with the customerId, invoiceId, status and tripId filters; another organisation's ids are 404", async (t) => {
  const s = await setup();
  const recorded = (await post(s.caller, '/payments', split(s), 'list-1')).body.payments as { id: string }[];
  const ids = recorded.map((r) => r.id);
  await post(s.caller, `/payments/${ids[2]}/reverse`, { reason: 'entered twice' }, 'list-rev');
  const all = await get(s.caller, '/payments');
  t.is(all.status, 200);
  t.deepEqual(all.body.data.map((p: { id: string }) => p.id).sort(), [...ids].sort());
  t.deepEqual(
    (await get(s.caller, `/payments?invoiceId=${s.invoices[1]}`)).body.data.map((p: { id: string }) => p.id),
    [ids[1]],
  );
  t.deepEqual(
    (await get(s.caller, '/payments?status=reversed')).body.data.map((p: { id: string }) => p.id),
    [ids[2]],
  );
  t.is((await get(s.caller, `/payments?customerId=${s.customer}&status=posted`)).body.data.length, 2);
  const feed = await get(s.caller, '/payments?updatedSince=2000-01-01T00:00:00.000Z');
  t.is(feed.body.data.at(-1).id, ids[2], 'the reversal is the latest change');
  const other = await setup();
  t.is((await get(other.caller, `/payments/${ids[0]}`)).status, 404);
  for (const [parameter, id] of [
    ['customerId', s.customer],
    ['invoiceId', s.invoices[0]],
    ['tripId', 'trp_nope'],
  ] as const) {
    const foreign = await get(other.caller, `/payments?${parameter}=${id}`);
    t.deepEqual([foreign.status, fields(foreign.body)], [404, [`/query/${parameter}`]], parameter);
  }
});

test('POST /payments/{id}/reverse answers the reversed receipt and reopens its invoice; a second reversal is 409 invalid_state; a void is refused while a payment is allocated and passes after its reversal', async (t) => {
  const s = await setup();
  const [paid] = (
    await post(
      s.caller,
      '/payments',
      { ...split(s), amount: ugx('59000'), allocations: [split(s).allocations[0]], unallocated: undefined },
      'rev-1',
    )
  ).body.payments as { id: string }[];
  const refusedVoid = await post(
    s.caller,
    `/invoices/${s.invoices[0]}/void`,
    { reason: 'wrong customer' },
    'rev-void-1',
  );
  t.deepEqual([refusedVoid.status, refusedVoid.body.code], [409, 'invalid_state']);
  const reversed = await post(
    s.caller,
    `/payments/${paid!.id}/reverse`,
    { reason: 'Cheque 004512 returned unpaid' },
    'rev-2',
  );
  t.is(reversed.status, 200, reversed.text);
  t.like(reversed.body, { id: paid!.id, status: 'reversed', reversalReason: 'Cheque 004512 returned unpaid' });
  t.regex(reversed.body.reversedAt, /Z$/);
  t.like((await get(s.caller, `/invoices/${s.invoices[0]}`)).body, { status: 'open', balance: ugx('59000') });
  const replay = await post(
    s.caller,
    `/payments/${paid!.id}/reverse`,
    { reason: 'Cheque 004512 returned unpaid' },
    'rev-2',
  );
  t.deepEqual([replay.status, replay.headers.get('idempotent-replayed')], [200, 'true']);
  const again = await post(s.caller, `/payments/${paid!.id}/reverse`, { reason: 'again' }, 'rev-3');
  t.deepEqual([again.status, again.body.code], [409, 'invalid_state']);
  t.deepEqual((await post(s.caller, '/payments/pmt_nope/reverse', { reason: 'x' }, 'rev-4')).status, 404);
  const noReason = await post(s.caller, `/payments/${paid!.id}/reverse`, {}, 'rev-5');
  t.deepEqual([noReason.status, fields(noReason.body)], [400, ['/reason']]);
  const voided = await post(s.caller, `/invoices/${s.invoices[0]}/void`, { reason: 'wrong customer' }, 'rev-void-2');
  t.is(voided.status, 200, voided.text);
});

test('every refusal names its field and records nothing', async (t) => {
  const s = await setup();
  const before = await count(s, 'payments');
  const refuse = (change: Record<string, unknown>, key: string) =>
    post(s.caller, '/payments', { ...split(s), ...change }, key);
  const cases: [Record<string, unknown>, number, string, string[]][] = [
    [{ unallocated: ugx('20000') }, 422, 'unallocated_amount', ['/unallocated']],
    [
      { allocations: [{ invoiceId: s.invoices[0], amount: ugx('60000') }], unallocated: ugx('70000') },
      422,
      'over_allocation',
      ['/allocations/0/amount'],
    ],
    [
      { allocations: [{ invoiceId: 'inv_nope', amount: ugx('59000') }, split(s).allocations[1]] },
      422,
      'invoice_not_found',
      ['/allocations/0/invoiceId'],
    ],
    [
      { allocations: [split(s).allocations[0], { invoiceId: s.invoices[0], amount: ugx('50000') }] },
      422,
      'business_rule',
      ['/allocations/1/invoiceId'],
    ],
    [{ unallocated: { amount: '21000', currency: 'KES' } }, 422, 'currency_mismatch', ['/unallocated/currency']],
    [{ amount: { amount: '130000', currency: 'USD' } }, 422, 'currency_not_supported', ['/amount/currency']],
    [{ customerId: 'cus_nope' }, 422, 'customer_not_found', ['/customerId']],
    [{ tripId: 'trp_nope' }, 422, 'no_open_trip', ['/tripId']],
    [{ reference: undefined }, 400, 'required_field', ['/reference']],
    [{ method: 'barter' }, 400, 'invalid_field', ['/method']],
    [{ amount: 130000 }, 400, 'invalid_field', ['/amount']],
    [{ tip: ugx('1') }, 400, 'unknown_field', ['/tip']],
  ];
  for (const [i, [change, status, code, expected]] of cases.entries()) {
    const res = await refuse(change, `err-${i}`);
    t.deepEqual([res.status, res.body.code, fields(res.body)], [status, code, expected], JSON.stringify(change));
  }
  t.is(await count(s, 'payments'), before);
  t.like((await get(s.caller, `/invoices/${s.invoices[0]}`)).body, { status: 'open', balance: ugx('59000') });
});

test('scopes: payments:read reads but cannot record or reverse (403 insufficient_scope); without payments:read nothing is read', async (t) => {
  const s = await setup();
  const [receipt] = (await post(s.caller, '/payments', split(s), 'scope-0')).body.payments as { id: string }[];
  const reader = await createCaller(pool(), { organizationId: s.caller.organizationId, scopes: ['payments:read'] });
  t.is((await get(reader, '/payments')).status, 200);
  t.is((await get(reader, `/payments/${receipt!.id}`)).status, 200);
  const refused = await post(reader, '/payments', split(s), 'scope-1');
  t.deepEqual([refused.status, refused.body.code], [403, 'insufficient_scope']);
  const reverse = await post(reader, `/payments/${receipt!.id}/reverse`, { reason: 'x' }, 'scope-2');
  t.deepEqual([reverse.status, reverse.body.code], [403, 'insufficient_scope']);
  const invoicesOnly = await createCaller(pool(), {
    organizationId: s.caller.organizationId,
    scopes: ['invoices:read', 'invoices:write'],
  });
  t.deepEqual((await get(invoicesOnly, '/payments')).status, 403);
});

test('POST /invoices with a payment block answers the invoice paid, and its receipt for the total is at GET /payments?invoiceId=', async (t) => {
  const s = await setup();
  const first = await get(s.caller, `/invoices/${s.invoices[0]}`);
  const sale = {
    customerId: s.customer,
    locationId: first.body.locationId,
    issueDate: '2026-11-24',
    lines: [{ productId: first.body.lines[0].productId, unit: 'case', quantity: 1, unitPrice: ugx('25500') }],
  };
  const paid = await post(
    s.caller,
    '/invoices',
    { ...sale, payment: { method: 'mobile_money', reference: 'MP-77' } },
    'cash-sale-1',
  );
  t.is(paid.status, 201, paid.text);
  t.like(paid.body, { status: 'paid', total: ugx('30090'), balance: ugx('0') });
  const receipts = await get(s.caller, `/payments?invoiceId=${paid.body.id}`);
  t.like(receipts.body.data, [
    {
      invoiceId: paid.body.id,
      amount: ugx('30090'),
      method: 'mobile_money',
      reference: 'MP-77',
      paymentDate: '2026-11-24',
      status: 'posted',
    },
  ]);
  const noReference = await post(s.caller, '/invoices', { ...sale, payment: { method: 'cheque' } }, 'cash-sale-2');
  t.deepEqual(
    [noReference.status, noReference.body.code, fields(noReference.body)],
    [400, 'required_field', ['/payment/reference']],
  );
});

test('Idempotency-Key is optional on POST /payments/{id}/reverse, as on PUT and PATCH: without one the receipt is reversed once (a second call is 409, nothing replayed)', async (t) => {
  const s = await setup();
  const [paid] = (
    await post(
      s.caller,
      '/payments',
      { ...split(s), amount: ugx('59000'), allocations: [split(s).allocations[0]], unallocated: undefined },
      'opt-rev-1',
    )
  ).body.payments as { id: string }[];
  const reversed = await post(s.caller, `/payments/${paid!.id}/reverse`, { reason: 'No key sent' });
  t.is(reversed.status, 200, reversed.text);
  t.like(reversed.body, { id: paid!.id, status: 'reversed', reversalReason: 'No key sent' });
  t.is(reversed.headers.get('idempotent-replayed'), null);
  const again = await post(s.caller, `/payments/${paid!.id}/reverse`, { reason: 'No key sent' });
  t.deepEqual([again.status, again.body.code], [409, 'invalid_state']);
});

test("a collection created with externalCodes is read back by code as POST /payments answered it, stored once for the receipt group (resource payment_collection), with a reversed receipt in its status; an unknown system or code, a code of another case, or another organisation's code is 404", async (t) => {
  const s = await setup();
  const created = await post(s.caller, '/payments', { ...split(s), externalCodes: { dms: ' PYR01000045 ' } }, 'code-1');
  t.is(created.status, 201, created.text);
  const receipts = created.body.payments as { id: string; receiptGroupId: string }[];
  const stored = await pool().query(
    'SELECT resource, code_system, code, record_id FROM external_codes WHERE organization_id = $1 AND resource = $2',
    [s.caller.organizationId, 'payment_collection'],
  );
  t.deepEqual(
    stored.rows,
    [
      {
        resource: 'payment_collection',
        code_system: 'dms',
        code: 'PYR01000045',
        record_id: receipts[0]!.receiptGroupId,
      },
    ],
    'one code, trimmed, naming the group',
  );

  const byCode = await get(s.caller, '/payments/by-code/dms/PYR01000045');
  t.is(byCode.status, 200, byCode.text);
  t.deepEqual(byCode.body, created.body, 'the same shape and receipts, in the order of their numbers');
  t.deepEqual((await get(s.caller, '/payments/by-code/dms/%20PYR01000045%20')).body, created.body, 'trimmed');

  // A reversed receipt stays in its collection, in its status, as GET /payments/{id} answers it.
  t.is((await post(s.caller, `/payments/${receipts[2]!.id}/reverse`, { reason: 'Refunded' }, 'code-rev')).status, 200);
  const after = await get(s.caller, '/payments/by-code/dms/PYR01000045');
  t.deepEqual(
    after.body.payments.map((p: { status: string }) => p.status),
    ['posted', 'posted', 'reversed'],
  );
  for (const [i, receipt] of receipts.entries())
    t.deepEqual(after.body.payments[i], (await get(s.caller, `/payments/${receipt.id}`)).body);

  for (const path of [
    '/payments/by-code/dms/PYR01000099',
    '/payments/by-code/dms/pyr01000045',
    '/payments/by-code/nosuchsystem/PYR01000045',
  ]) {
    const missing = await get(s.caller, path);
    t.deepEqual([missing.status, missing.body.code], [404, 'not_found'], path);
  }
  const other = await setup();
  const foreign = await get(other.caller, '/payments/by-code/dms/PYR01000045');
  t.deepEqual([foreign.status, foreign.body.code], [404, 'not_found'], "another organisation's code is not reachable");
  t.is(
    (await post(other.caller, '/payments', { ...split(other), externalCodes: { dms: 'PYR01000045' } }, 'code-other'))
      .status,
    201,
    'a code is unique per organisation only',
  );
  t.deepEqual(
    (await get(s.caller, '/payments/by-code/dms/PYR01000045')).body,
    after.body,
    "the other organisation's collection of the same code is not this one's",
  );
});

test('a code another collection holds, or a code system not registered, is 422 business_rule naming /externalCodes/{system} and records nothing', async (t) => {
  const s = await setup();
  t.is(
    (await post(s.caller, '/payments', { ...split(s), externalCodes: { dms: 'PYR01000046' } }, 'dup-1')).status,
    201,
  );
  const tables = ['payments', 'customer_account_entries', 'external_codes', 'events'];
  const counts = async () => Promise.all(tables.map((table) => count(s, table)));
  const before = await counts();
  const rest = {
    customerId: s.customer,
    method: 'cash',
    amount: ugx('5000'),
    paymentDate: '2026-11-26',
    unallocated: ugx('5000'),
  };
  const invoice = {
    customerId: s.customer,
    method: 'cash',
    amount: ugx('9000'),
    paymentDate: '2026-11-26',
    allocations: [{ invoiceId: s.invoices[1], amount: ugx('9000') }],
  };
  for (const [i, [body, field, code]] of (
    [
      [{ ...rest, externalCodes: { dms: 'PYR01000046' } }, '/externalCodes/dms', 'duplicate_code'],
      [{ ...invoice, externalCodes: { dms: 'PYR01000046' } }, '/externalCodes/dms', 'duplicate_code'],
      [
        { ...rest, externalCodes: { nosuchsystem: 'PYR01000047' } },
        '/externalCodes/nosuchsystem',
        'unknown_code_system',
      ],
    ] as const
  ).entries()) {
    const refused = await post(s.caller, '/payments', body, `dup-${i + 2}`);
    t.deepEqual(
      [refused.status, refused.body.code, fields(refused.body), refused.body.errors?.[0]?.code],
      [422, 'business_rule', [field], code],
      refused.text,
    );
  }
  t.deepEqual(await counts(), before, 'nothing recorded');
  t.like((await get(s.caller, `/invoices/${s.invoices[1]}`)).body, { status: 'open', balance: ugx('9000') });
});

test('GET /payments?externalCode= lists the receipts of the collection carrying that code (trimmed, case-sensitive), combined with the other filters, and nothing of another organisation', async (t) => {
  const s = await setup();
  const coded = (
    (await post(s.caller, '/payments', { ...split(s), externalCodes: { dms: 'PY-LIST-1' } }, 'list-code-1')).body
      .payments as { id: string }[]
  ).map((r) => r.id);
  t.is(
    (
      await post(
        s.caller,
        '/payments',
        {
          customerId: s.customer,
          method: 'cash',
          amount: ugx('5000'),
          paymentDate: '2026-11-26',
          unallocated: ugx('5000'),
        },
        'list-code-2',
      )
    ).status,
    201,
  );
  const ids = async (query: string) => {
    const res = await get(s.caller, `/payments?${query}`);
    t.is(res.status, 200, res.text);
    return (res.body.data as { id: string }[]).map((p) => p.id).sort();
  };
  t.deepEqual(
    await ids('externalCode=PY-LIST-1'),
    [...coded].sort(),
    'every receipt of the collection, not the other collection',
  );
  t.deepEqual(await ids('externalCode=%20PY-LIST-1%20'), [...coded].sort());
  t.deepEqual(await ids('externalCode=py-list-1'), []);
  t.deepEqual(await ids('externalCode=PY-LIST-9'), []);
  t.deepEqual(await ids(`externalCode=PY-LIST-1&invoiceId=${s.invoices[1]}`), [coded[1]]);
  t.deepEqual(await ids('externalCode=PY-LIST-1&status=reversed'), []);
  const page = await get(s.caller, '/payments?externalCode=PY-LIST-1&limit=2');
  t.deepEqual([page.body.data.length, page.body.hasMore], [2, true]);
  const next = await get(
    s.caller,
    `/payments?externalCode=PY-LIST-1&limit=2&cursor=${encodeURIComponent(page.body.nextCursor)}`,
  );
  t.deepEqual(
    [...page.body.data, ...next.body.data].map((p: { id: string }) => p.id).sort(),
    [...coded].sort(),
    'the filter pages',
  );
  const other = await setup();
  const foreign = await get(other.caller, '/payments?externalCode=PY-LIST-1');
  t.deepEqual([foreign.status, foreign.body.data], [200, []], "another organisation's code lists nothing");
});

test('scopes of the read by code: payments:read reads a collection by code; a key without it is 403', async (t) => {
  const s = await setup();
  t.is(
    (await post(s.caller, '/payments', { ...split(s), externalCodes: { dms: 'PYR01000048' } }, 'code-scope')).status,
    201,
  );
  const reader = await createCaller(pool(), { organizationId: s.caller.organizationId, scopes: ['payments:read'] });
  t.is((await get(reader, '/payments/by-code/dms/PYR01000048')).status, 200);
  const invoicesOnly = await createCaller(pool(), {
    organizationId: s.caller.organizationId,
    scopes: ['invoices:read'],
  });
  const refused = await get(invoicesOnly, '/payments/by-code/dms/PYR01000048');
  t.deepEqual([refused.status, refused.body.code], [403, 'insufficient_scope']);
});
