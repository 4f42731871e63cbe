// Postings to the accounting and fiscal systems, end to end: the real service (HTTP, the worker's posting jobs) and
// the real QuickBooks Online and EFRIS clients against the simulators it runs, one rule per test. Each test has its
// own organisation, connected to its own QuickBooks company and EFRIS taxpayer in the simulators, so failures
// injected for one test reach no other.
import test from 'ava';
import { kyselyOver } from '../../server/platform/database/database.js';
import { inTransaction, type Db } from '../../server/platform/database/transaction.js';
import {
  accountingConnectorOf,
  readConnection,
  setConnection,
  SIMULATOR_BASE_URL,
} from '../../server/connectors/connections.js';
import { injectFailure } from '../../server/connectors/simulators/failures.js';
import {
  holdQuickBooksEntity,
  quickBooksPostingCount,
  releaseQuickBooksEntity,
} from '../../server/connectors/simulators/quickbooks/router.js';
import { efrisDocumentCount } from '../../server/connectors/simulators/efris/router.js';
import { ALL_SCOPES, createCaller, type TestCaller } from '../support/callers.js';
import { useTestService } from '../support/service.js';
import { eventually } from '../webhooks/receiver.js';

const api = useTestService(test, 'postings', { env: { SIMULATORS: 'true', CONNECTOR_TIMEOUT_MS: '3000' } });
const pool = () => api().service.database.pool;
const db = (): Db => kyselyOver(pool());
const ugx = (amount: string) => ({ amount, currency: 'UGX' });

interface World {
  caller: TestCaller;
  organizationId: string;
  realm: string;
  tin: string;
  customer: string;
  soda: string;
  water: string;
  warehouse: string;
}

let codes = 700100;
/** An organisation with a customer, two products in stock and, unless told otherwise, both connections. */
async function world(
  connect: { accounting?: boolean; fiscal?: boolean } = { accounting: true, fiscal: true },
): Promise<World> {
  const caller = await createCaller(pool(), { scopes: ALL_SCOPES });
  const put = async (path: string, json: unknown) => {
    const res = await api().request('PUT', path, { headers: caller.auth, json });
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${res.text}`);
    return res.body.id as string;
  };
  const sodaCode = String(codes++);
  const waterCode = String(codes++);
  const soda = await put(`/products/by-code/dms/${sodaCode}`, {
    productCode: sodaCode,
    name: 'Soda 300ml',
    packSize: 24,
    sellingUnits: ['case'],
    tracksStock: true,
    taxRate: 18,
  });
  const water = await put(`/products/by-code/dms/${waterCode}`, {
    productCode: waterCode,
    name: 'Water 500ml',
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
  const stock = await post(caller, '/stock-adjustments', {
    reasonCode: 'OG01',
    lines: [
      { productId: soda, locationId: warehouse, unit: 'case', quantity: 50, unitCost: ugx('24000') },
      { productId: water, locationId: warehouse, unit: 'case', quantity: 50, unitCost: ugx('9000') },
    ],
  });
  if (stock.status !== 201) throw new Error(`stock: ${stock.status} ${stock.text}`);
  const realm = String(codes++);
  const tin = `10000${codes++}`;
  await inTransaction(db(), async (tx) => {
    if (connect.accounting)
      await setConnection(
        tx,
        caller.organizationId,
        'accounting',
        { baseUrl: SIMULATOR_BASE_URL, account: realm },
        null,
      );
    if (connect.fiscal)
      await setConnection(
        tx,
        caller.organizationId,
        'fiscal',
        { baseUrl: SIMULATOR_BASE_URL, account: tin, deviceNo: 'TCS01' },
        null,
      );
  });
  return { caller, organizationId: caller.organizationId, realm, tin, customer, soda, water, warehouse };
}

let keys = 0;
const post = (caller: TestCaller, path: string, json: unknown) =>
  api().request('POST', path, { headers: { ...caller.auth, 'Idempotency-Key': `postings-${keys++}` }, json });
const get = (caller: TestCaller, path: string) => api().request('GET', path, { headers: caller.auth });

/** Two cases of soda at 25 500 less 1 000, 18 % tax: 59 000. */
async function invoice(w: World): Promise<{ id: string; number: string; body: any }> {
  const res = await post(w.caller, '/invoices', {
    customerId: w.customer,
    locationId: w.warehouse,
    issueDate: '2026-11-24',
    lines: [{ productId: w.soda, unit: 'case', quantity: 2, unitPrice: ugx('25500'), discount: ugx('1000') }],
  });
  if (res.status !== 201) throw new Error(`invoice: ${res.status} ${res.text}`);
  return { id: res.body.id, number: res.body.number, body: res.body };
}

/** GET the document until `ready` says so (the posting jobs run in the background). */
async function until(
  w: World,
  path: string,
  ready: (body: any) => boolean,
  what: string,
  timeoutMs = 20_000,
): Promise<any> {
  let last: any;
  try {
    return await eventually(
      async () => {
        last = (await get(w.caller, path)).body;
        return ready(last) ? last : null;
      },
      timeoutMs,
      what,
    );
  } catch (error) {
    const rows = await db()
      .selectFrom('external_postings')
      .select(['system', 'status', 'attempts', 'reason', 'external_ref'])
      .where('document_id', '=', last?.id ?? '')
      .execute();
    throw new Error(
      `${(error as Error).message}; the document: posting ${JSON.stringify(last?.posting)}, fiscal ${JSON.stringify(last?.fiscal)}; its postings ${JSON.stringify(rows)}`,
    );
  }
}

const postingRow = async (documentId: string, system: 'accounting' | 'fiscal') =>
  db()
    .selectFrom('external_postings')
    .selectAll()
    .where('document_id', '=', documentId)
    .where('system', '=', system)
    .where('operation', '=', 'post')
    .executeTakeFirstOrThrow();

const updatedEvents = async (w: World, type: string, id: string) =>
  (
    await db()
      .selectFrom('events')
      .select('id')
      .where('organization_id', '=', w.organizationId)
      .where('type', '=', type)
      .where('record_id', '=', id)
      .execute()
  ).length;

test('an invoice is posted to the accounting system and fiscalised: its posting block names its QuickBooks Invoice, its fiscal block the FDN, verification code and QR; each change is an invoice.updated event; the simulators hold it once', async (t) => {
  const w = await world();
  const sold = await invoice(w);
  t.like(sold.body, {
    posting: { status: 'pending', accountingRef: null, accountingType: null, reason: null },
    fiscal: { status: 'pending', fdn: null },
  });

  const done = await until(
    w,
    `/invoices/${sold.id}`,
    (b) => b.posting.status === 'posted' && b.fiscal.status === 'fiscalised',
    'posted and fiscalised',
  );
  t.is(done.posting.accountingType, 'Invoice');
  t.regex(done.posting.accountingRef, /^[0-9]+$/);
  t.is(done.posting.reason, null);
  t.regex(done.fiscal.fdn, /^[0-9]{6,}$/);
  t.regex(done.fiscal.verificationCode, /^[0-9]{10,}$/);
  t.true(done.fiscal.qrCode.includes(done.fiscal.fdn));
  t.truthy(done.fiscal.fiscalisedAt);
  t.is(await updatedEvents(w, 'invoice.updated', sold.id), 2, 'one invoice.updated per block change');
  t.is(await quickBooksPostingCount(db(), w.realm, sold.number), 1);
  t.is(await efrisDocumentCount(db(), w.tin, sold.number), 1);
  t.like(await postingRow(sold.id, 'accounting'), {
    status: 'posted',
    attempts: 1,
    external_type: 'Invoice',
    external_ref: done.posting.accountingRef,
  });
});

test('without connections nothing is queued: the posting block is not_applicable and says why, the fiscal block is all null', async (t) => {
  const w = await world({});
  const sold = await invoice(w);
  t.like(sold.body.posting, { status: 'not_applicable', accountingRef: null });
  t.regex(sold.body.posting.reason, /no accounting connection/);
  t.deepEqual(sold.body.fiscal, { status: null, fdn: null, verificationCode: null, qrCode: null, fiscalisedAt: null });
  t.is(
    (await db().selectFrom('external_postings').select('id').where('organization_id', '=', w.organizationId).execute())
      .length,
    0,
  );
});

test('a closed period in the accounting system marks the posting failed with a reason naming the closed period; the invoice stays posted in the service; retried after, it posts', async (t) => {
  const w = await world({ accounting: true });
  await injectFailure(db(), 'accounting', w.realm, 'period_closed', 1);
  const sold = await invoice(w);
  const failed = await until(w, `/invoices/${sold.id}`, (b) => b.posting.status === 'failed', 'the posting failed');
  t.regex(failed.posting.reason, /books are closed/i);
  t.regex(failed.posting.reason, /period/i);
  t.like(failed, { status: 'open', balance: ugx('59000') }, 'the invoice stands in the service');
  t.is(await quickBooksPostingCount(db(), w.realm, sold.number), 0);

  const { retryPostings } = await import('../../server/modules/postings/operations.js');
  const retried = await retryPostings(db(), w.organizationId, sold.id);
  t.is(retried.length, 1);
  await until(w, `/invoices/${sold.id}`, (b) => b.posting.status === 'posted', 'posted after the retry');
  t.is(await quickBooksPostingCount(db(), w.realm, sold.number), 1);
});

test('an outage is retried and then succeeds, with the same request id: the accounting system holds the invoice once', async (t) => {
  const w = await world({ accounting: true });
  await injectFailure(db(), 'accounting', w.realm, 'outage', 1);
  const sold = await invoice(w);
  await until(w, `/invoices/${sold.id}`, (b) => b.posting.status === 'posted', 'posted after the outage');
  t.like(await postingRow(sold.id, 'accounting'), { status: 'posted', attempts: 2 });
  t.is(await quickBooksPostingCount(db(), w.realm, sold.number), 1);
});

test('a rate limit is honoured: the next attempt waits at least the Retry-After the accounting system asked for', async (t) => {
  const w = await world({ accounting: true });
  await injectFailure(db(), 'accounting', w.realm, 'rate_limit', 1, 4_000); // the simulator answers 429 with Retry-After: 4
  const sold = await invoice(w);
  await until(w, `/invoices/${sold.id}`, (b) => b.posting.status === 'posted', 'posted after the rate limit');
  const row = await postingRow(sold.id, 'accounting');
  t.is(row.attempts, 2);
  // The first attempt follows the document within the dispatcher's poll; the second came no sooner than Retry-After.
  const waited = row.last_attempt_at!.getTime() - row.created_at.getTime();
  t.true(waited >= 4_000, `the second attempt came ${waited} ms after the invoice, before the 4 s Retry-After`);
});

test("a receipt is posted as a QuickBooks Payment linked to its invoice's Invoice, after the invoice; payment.updated says so", async (t) => {
  const w = await world({ accounting: true });
  const sold = await invoice(w);
  const paid = await post(w.caller, '/payments', {
    customerId: w.customer,
    method: 'cash',
    amount: ugx('59000'),
    paymentDate: '2026-11-25',
    allocations: [{ invoiceId: sold.id, amount: ugx('59000') }],
  });
  t.is(paid.status, 201, paid.text);
  const receipt = paid.body.payments[0];
  t.is(receipt.posting.status, 'pending');
  const done = await until(w, `/payments/${receipt.id}`, (b) => b.posting.status === 'posted', 'the receipt posted');
  t.is(done.posting.accountingType, 'Payment');
  const invoiceRef = (await get(w.caller, `/invoices/${sold.id}`)).body.posting.accountingRef;
  t.truthy(invoiceRef);
  t.is(await updatedEvents(w, 'payment.updated', receipt.id), 1, 'one payment.updated: pending -> posted');
  t.is(await quickBooksPostingCount(db(), w.realm, receipt.number), 1);
  // Linked: QuickBooks will not void the invoice while the payment is applied to it.
  const connection = (await readConnection(db(), w.organizationId, 'accounting'))!;
  const client = accountingConnectorOf(connection, api().service.connectors);
  t.like(await client.reverse('try-void', { type: 'Invoice', id: invoiceRef }), {
    ok: false,
    failure: { kind: 'rejected', code: '6000' },
  });
});

test('a posted invoice voided in the service is voided in the accounting system too: its block says reversed once QuickBooks voided it', async (t) => {
  const w = await world({ accounting: true });
  const sold = await invoice(w);
  const posted = await until(w, `/invoices/${sold.id}`, (b) => b.posting.status === 'posted', 'the invoice posted');
  const voided = await post(w.caller, `/invoices/${sold.id}/void`, { reason: 'wrong customer' });
  t.is(voided.status, 200, voided.text);
  t.like(voided.body, { status: 'void', posting: { status: 'posted' } });
  const done = await until(w, `/invoices/${sold.id}`, (b) => b.posting.status === 'reversed', 'voided in QuickBooks');
  t.is(done.posting.accountingRef, posted.posting.accountingRef);
  t.regex(done.posting.reason, /voided in the accounting system/);
  t.is(await quickBooksPostingCount(db(), w.realm, sold.number), 0, 'QuickBooks keeps it voided, not active');
});

test('a payment reversed after the accounting system holds it (deposited) is refused with 409 naming the Payment to void there by hand; once voided there, the same reversal goes through and the block says reversed', async (t) => {
  const w = await world({ accounting: true });
  const sold = await invoice(w);
  const paid = await post(w.caller, '/payments', {
    customerId: w.customer,
    method: 'cheque',
    reference: '000981',
    amount: ugx('59000'),
    paymentDate: '2026-11-25',
    allocations: [{ invoiceId: sold.id, amount: ugx('59000') }],
  });
  const receipt = paid.body.payments[0];
  const posted = await until(w, `/payments/${receipt.id}`, (b) => b.posting.status === 'posted', 'the receipt posted');
  const ref = posted.posting.accountingRef as string;
  await holdQuickBooksEntity(db(), w.realm, ref); // the company's accountant deposits it

  const refused = await post(w.caller, `/payments/${receipt.id}/reverse`, { reason: 'cheque bounced' });
  t.is(refused.status, 409, refused.text);
  t.is(refused.body.code, 'invalid_state');
  t.true(
    refused.body.detail.includes(`Void Payment ${ref} in the accounting system by hand first`),
    refused.body.detail,
  );
  t.like((await get(w.caller, `/payments/${receipt.id}`)).body, { status: 'posted', posting: { status: 'posted' } });
  t.like((await get(w.caller, `/invoices/${sold.id}`)).body, { status: 'paid' }, 'nothing changed');

  // A person takes it out of the deposit and voids it in QuickBooks (with the same client the service uses).
  await releaseQuickBooksEntity(db(), w.realm, ref);
  const connection = (await readConnection(db(), w.organizationId, 'accounting'))!;
  const voided = await accountingConnectorOf(connection, api().service.connectors).reverse('by-hand-1', {
    type: 'Payment',
    id: ref,
  });
  t.true(voided.ok, JSON.stringify(voided));

  const reversed = await post(w.caller, `/payments/${receipt.id}/reverse`, { reason: 'cheque bounced' });
  t.is(reversed.status, 200, reversed.text);
  t.like(reversed.body, { status: 'reversed' });
  await until(
    w,
    `/payments/${receipt.id}`,
    (b) => b.posting.status === 'reversed' && b.posting.accountingRef === ref,
    'the block says reversed',
  );
  t.like((await get(w.caller, `/invoices/${sold.id}`)).body, { status: 'open', balance: ugx('59000') });
});

test('a credit note with a cash refund is posted as a CreditMemo and a RefundReceipt; cancelled, both are deleted in QuickBooks and the block says reversed', async (t) => {
  const w = await world({ accounting: true });
  const sold = await invoice(w);
  const paid = await post(w.caller, '/payments', {
    customerId: w.customer,
    method: 'cash',
    amount: ugx('59000'),
    paymentDate: '2026-11-25',
    allocations: [{ invoiceId: sold.id, amount: ugx('59000') }],
  });
  t.is(paid.status, 201, paid.text);
  // The invoice is paid: the whole credit is left over, and 10 000 of it is paid out in cash.
  const credited = await post(w.caller, '/credit-notes', {
    customer: { id: w.customer },
    invoiceId: sold.id,
    reason: 'One case came back',
    cashRefundAmount: ugx('10000'),
    lines: [{ product: { id: w.soda }, quantity: 1, unitPrice: ugx('25500') }],
  });
  t.is(credited.status, 201, credited.text);
  const note = credited.body;
  await until(w, `/credit-notes/${note.id}`, (b) => b.posting.status === 'posted', 'the credit note posted');
  t.is(await quickBooksPostingCount(db(), w.realm, note.creditNoteNumber), 1, 'the CreditMemo');
  t.is(await quickBooksPostingCount(db(), w.realm, `${note.creditNoteNumber}-R`), 1, 'the RefundReceipt');
  t.deepEqual(
    (await postingRow(note.id, 'accounting')).related_refs?.map((ref) => ref.split(':')[0]),
    ['RefundReceipt'],
  );

  const cancelled = await post(w.caller, `/credit-notes/${note.id}/cancel`, { reason: 'keyed twice' });
  t.is(cancelled.status, 200, cancelled.text);
  await until(w, `/credit-notes/${note.id}`, (b) => b.posting.status === 'reversed', 'deleted in QuickBooks');
  t.is(await quickBooksPostingCount(db(), w.realm, note.creditNoteNumber), 0);
  t.is(await quickBooksPostingCount(db(), w.realm, `${note.creditNoteNumber}-R`), 0);
});

test('a reversal while the accounting posting is under way waits: 409 saying to retry when it is posted or failed', async (t) => {
  const w = await world({ accounting: true });
  await injectFailure(db(), 'accounting', w.realm, 'slow', 1, 2_500);
  const sold = await invoice(w);
  await eventually(
    async () => (await postingRow(sold.id, 'accounting')).last_attempt_at !== null,
    10_000,
    'the first attempt started',
  );
  const waiting = await post(w.caller, `/invoices/${sold.id}/void`, { reason: 'wrong customer' });
  t.is(waiting.status, 409, waiting.text);
  t.like(waiting.body, { code: 'invalid_state', reason: 'posting_under_way' });
  t.regex(waiting.body.detail, /under way/);
  await until(w, `/invoices/${sold.id}`, (b) => b.posting.status === 'posted', 'posted');
});

test('a credit note for a product that is not on exactly one line of the fiscalised invoice is refused by the fiscal system: fiscal.status rejected, the reason kept; the credit note stands and is posted to the accounting system', async (t) => {
  const w = await world();
  const sold = await invoice(w);
  await until(
    w,
    `/invoices/${sold.id}`,
    (b) => b.fiscal.status === 'fiscalised' && b.posting.status === 'posted',
    'the invoice fiscalised',
  );
  const credited = await post(w.caller, '/credit-notes', {
    customer: { id: w.customer },
    invoiceId: sold.id,
    reason: 'Price difference',
    lines: [{ product: { id: w.water }, quantity: 1, unitPrice: ugx('5000') }],
  });
  t.is(credited.status, 201, credited.text);
  const note = await until(
    w,
    `/credit-notes/${credited.body.id}`,
    (b) => b.fiscal.status === 'rejected' && b.posting.status === 'posted',
    'the credit note refused by the fiscal system',
  );
  t.is(note.fiscal.fdn, null);
  t.is(note.status, 'applied');
  const row = await postingRow(credited.body.id, 'fiscal');
  t.is(row.status, 'failed');
  t.regex(row.reason!, /fiscal system/i);
});

test("a credit note on a line of the fiscalised invoice (a discounted line: EFRIS credits it at the line's own price) is applied for, approved, and fiscalised with its own FDN; a fiscalised credit note cannot be cancelled", async (t) => {
  const w = await world();
  const sold = await invoice(w); // 2 cases at 25 500 less 1 000: EFRIS's line price is 29 500 a case with tax
  const fiscalised = await until(
    w,
    `/invoices/${sold.id}`,
    (b) => b.fiscal.status === 'fiscalised',
    'the invoice fiscalised',
  );
  const credited = await post(w.caller, '/credit-notes', {
    customer: { id: w.customer },
    invoiceId: sold.id,
    reason: 'One case came back damaged',
    lines: [{ product: { id: w.soda }, quantity: 1, unitPrice: ugx('25500') }],
  });
  t.is(credited.status, 201, credited.text);
  const note = await until(
    w,
    `/credit-notes/${credited.body.id}`,
    (b) => b.fiscal.status === 'fiscalised',
    'the credit note fiscalised',
    30_000,
  );
  t.regex(note.fiscal.fdn, /^[0-9]{6,}$/);
  t.not(note.fiscal.fdn, fiscalised.fiscal.fdn);
  const cancel = await post(w.caller, `/credit-notes/${credited.body.id}/cancel`, { reason: 'entered by mistake' });
  t.is(cancel.status, 409);
  t.regex(cancel.body.detail, /fiscal/);
  t.deepEqual(note.total, ugx('30090'), 'the credit note is 1 case at 25 500 with 18 % tax');
});

test('a fiscalised invoice is never voided: 409 saying to correct it with a credit note', async (t) => {
  const w = await world({ fiscal: true });
  const sold = await invoice(w);
  await until(w, `/invoices/${sold.id}`, (b) => b.fiscal.status === 'fiscalised', 'the invoice fiscalised');
  const voided = await post(w.caller, `/invoices/${sold.id}/void`, { reason: 'wrong customer' });
  t.is(voided.status, 409, voided.text);
  t.regex(voided.body.detail, /credit note/);
  t.like((await get(w.caller, `/invoices/${sold.id}`)).body, { status: 'open' });
});
