// The accounting connector (the real QuickBooks Online client) against the QuickBooks simulator over real HTTP, one
// rule per test: what QuickBooks does, and how the client classifies it for the posting jobs.
import test from 'ava';
import { createQuickBooksClient } from '../../server/connectors/accounting/quickbooks-client.js';
import { injectFailure } from '../../server/connectors/simulators/failures.js';
import {
  closeQuickBooksBooks,
  holdQuickBooksEntity,
  quickBooksEntity,
  quickBooksPostingCount,
  releaseQuickBooksEntity,
} from '../../server/connectors/simulators/quickbooks/router.js';
import type { AccountingInvoice, AccountingConnector } from '../../server/connectors/types.js';
import { useSimulators } from '../support/simulators.js';

const sim = useSimulators(test, 'quickbooks');

let realms = 1000;
const company = (timeoutMs?: number) => {
  const realm = String(realms++);
  return {
    realm,
    client: createQuickBooksClient({
      baseUrl: `${sim().url}/quickbooks`,
      realmId: realm,
      accessToken: 'token',
      timeoutMs,
    }),
  };
};
const invoice = (number: string, over: Partial<AccountingInvoice> = {}): AccountingInvoice => ({
  docNumber: number,
  txnDate: '2026-11-24',
  currency: 'UGX',
  customer: { id: 'cus_1', name: 'Mama Shop' },
  lines: [
    {
      itemId: 'prd_1',
      description: 'Soda 300ml',
      quantity: '2',
      unitPrice: '25500',
      amount: '50000',
      taxAmount: '9000',
    },
  ],
  taxTotal: '9000',
  total: '59000',
  ...over,
});
const posted = async (client: AccountingConnector, number: string, requestId = `req-${number}`) => {
  const result = await client.postInvoice(requestId, invoice(number));
  if (!result.ok) throw new Error(JSON.stringify(result.failure));
  return result.value;
};

test("an invoice posts and its ref is the Invoice's Id; the same request id again books nothing and answers the same ref", async (t) => {
  const { realm, client } = company();
  const first = await posted(client, 'INV-000001', 'req-a');
  t.is(first.type, 'Invoice');
  t.regex(first.id, /^[0-9]+$/);
  t.deepEqual(await posted(client, 'INV-000001', 'req-a'), first);
  t.is(await quickBooksPostingCount(sim().db, realm, 'INV-000001'), 1);
});

test('a duplicate document number with a new request id: the same document is recognised as already posted (one held), a different one is refused with 6140', async (t) => {
  const { realm, client } = company();
  const first = await posted(client, 'INV-000002', 'req-1');
  t.deepEqual(await posted(client, 'INV-000002', 'req-2'), first, 'the earlier attempt landed: its ref');
  const other = await client.postInvoice(
    'req-3',
    invoice('INV-000002', {
      total: '118000',
      taxTotal: '18000',
      lines: [
        {
          itemId: 'prd_1',
          description: 'Soda',
          quantity: '4',
          unitPrice: '25000',
          amount: '100000',
          taxAmount: '18000',
        },
      ],
    }),
  );
  t.false(other.ok);
  if (!other.ok) t.like(other.failure, { kind: 'rejected', code: '6140' });
  t.is(await quickBooksPostingCount(sim().db, realm, 'INV-000002'), 1);
});

test("a document dated in the company's closed books is refused as period_closed naming the close date; one posted before the close is held", async (t) => {
  const { realm, client } = company();
  const before = await posted(client, 'INV-000099');
  t.deepEqual(await client.holds(before), { ok: true, value: false });
  await closeQuickBooksBooks(sim().db, realm, '2026-11-30');
  t.deepEqual(await client.holds(before), { ok: true, value: true });
  const result = await client.postInvoice('req', invoice('INV-000003'));
  t.false(result.ok);
  if (!result.ok) t.like(result.failure, { kind: 'period_closed', closedThrough: '2026-11-30' });
  await closeQuickBooksBooks(sim().db, realm, '2026-10-31');
  t.true((await client.postInvoice('req-after', invoice('INV-000003'))).ok);
});

test('an outage is temporary; a rate limit is temporary with the Retry-After QuickBooks asked for; a stale object is a refusal with 5010', async (t) => {
  const { realm, client } = company();
  await injectFailure(sim().db, 'accounting', realm, 'outage', 1);
  await injectFailure(sim().db, 'accounting', realm, 'rate_limit', 1, 7_000);
  await injectFailure(sim().db, 'accounting', realm, 'stale', 1);
  const outage = await client.postInvoice('r1', invoice('INV-000004'));
  const limited = await client.postInvoice('r2', invoice('INV-000004'));
  const stale = await client.postInvoice('r3', invoice('INV-000004'));
  t.like(outage, { ok: false, failure: { kind: 'temporary', retryAfterSeconds: null } });
  t.like(limited, { ok: false, failure: { kind: 'temporary', retryAfterSeconds: 7 } });
  t.like(stale, { ok: false, failure: { kind: 'rejected', code: '5010' } });
  t.true((await client.postInvoice('r4', invoice('INV-000004'))).ok, 'the failures were used up');
});

test("an answer slower than the client's timeout is a temporary failure", async (t) => {
  const { realm, client } = company(300);
  await injectFailure(sim().db, 'accounting', realm, 'slow', 1, 1_500);
  const result = await client.postInvoice('r', invoice('INV-000005'));
  t.like(result, { ok: false, failure: { kind: 'temporary' } });
  if (!result.ok) t.regex(result.failure.message, /within 300 ms/);
});

test('a payment linked to an invoice lowers its balance; more than the balance is refused with 6000; deposited it is held (6540 on a void); taken out and voided, the balance is back', async (t) => {
  const { realm, client } = company();
  const inv = await posted(client, 'INV-000006');
  const pay = (amount: string) =>
    client.postPayment(`pay-${amount}-${Math.random()}`, {
      docNumber: 'RCT-000001',
      txnDate: '2026-11-25',
      currency: 'UGX',
      customer: { id: 'cus_1', name: 'Mama Shop' },
      method: 'cash',
      total: amount,
      links: [{ invoice: inv, amount }],
    });
  const over = await pay('60000');
  t.like(over, { ok: false, failure: { kind: 'rejected', code: '6000' } });
  const paid = await pay('59000');
  t.true(paid.ok);
  if (!paid.ok) return;
  t.like(await pay('1'), { ok: false, failure: { kind: 'rejected', code: '6000' } }, 'nothing left to pay');
  t.like(
    await client.reverse('void-invoice', inv),
    { ok: false, failure: { kind: 'rejected', code: '6000' } },
    'an invoice with a payment applied is not voided',
  );
  t.deepEqual(await client.holds(paid.value), { ok: true, value: false }, 'posted, not deposited: it may be voided');
  await holdQuickBooksEntity(sim().db, realm, paid.value.id);
  t.deepEqual(await client.holds(paid.value), { ok: true, value: true }, 'deposited: held');
  t.like(await client.reverse('void-held', paid.value), { ok: false, failure: { kind: 'rejected', code: '6540' } });
  await releaseQuickBooksEntity(sim().db, realm, paid.value.id);
  t.true((await client.reverse('void-pay', paid.value)).ok);
  t.true((await client.reverse('void-pay-again', paid.value)).ok, 'voiding twice changes nothing');
  t.deepEqual(await client.holds(paid.value), { ok: true, value: false });
  t.true((await pay('59000')).ok, 'the balance is back');
});

test('a credit memo cannot be voided in QuickBooks: reverse deletes it, and it is no longer held', async (t) => {
  const { client } = company();
  const memo = await client.postCreditMemo('cm', {
    docNumber: 'CN-000001',
    txnDate: '2026-11-25',
    currency: 'UGX',
    customer: { id: 'cus_1', name: 'Mama Shop' },
    lines: invoice('x').lines,
    taxTotal: '9000',
    total: '59000',
    invoice: null,
  });
  t.true(memo.ok);
  if (!memo.ok) return;
  t.is(memo.value.type, 'CreditMemo');
  t.true((await client.reverse('cm-del', memo.value)).ok);
  t.deepEqual(await client.holds(memo.value), { ok: true, value: false });
});

test('a journal entry posts when it balances and is refused (6000) when it does not; a bill and a refund post', async (t) => {
  const { client } = company();
  const entry = (credit: string) =>
    client.postJournalEntry(`je-${credit}`, {
      docNumber: `JE-${credit}`,
      txnDate: '2026-11-25',
      currency: 'UGX',
      description: 'Trip TRP-000001 cash short',
      lines: [
        { account: 'Cash shortages', side: 'debit', amount: '500', description: 'short' },
        { account: 'Cash on hand', side: 'credit', amount: credit, description: 'short' },
      ],
    });
  t.like(await entry('500'), { ok: true, value: { type: 'JournalEntry' } });
  t.like(await entry('400'), { ok: false, failure: { kind: 'rejected', code: '6000' } });
  t.like(
    await client.postBill('bill', {
      docNumber: 'GRN-1',
      txnDate: '2026-11-25',
      currency: 'UGX',
      supplier: { id: 'sup_1', name: 'Brewery' },
      lines: invoice('x').lines,
      total: '50000',
    }),
    { ok: true, value: { type: 'Bill' } },
  );
  t.like(
    await client.postRefund('refund', {
      docNumber: 'CN-000009',
      txnDate: '2026-11-25',
      currency: 'UGX',
      customer: { id: 'cus_1', name: 'Mama Shop' },
      method: 'cash',
      amount: '2000',
      description: 'Cash refund',
    }),
    { ok: true, value: { type: 'RefundReceipt' } },
  );
});

test("a stock journal and a supplier's bill as the stock postings send them: each line needs its account (journal) or its item (bill), 2020 otherwise; a bill sent again under a new request id is recognised by its number, vendor and total", async (t) => {
  const { realm, client } = company();
  const journal = (account: string) =>
    client.postJournalEntry(`adj-${account || 'none'}`, {
      docNumber: `ADJ-00000${account ? 1 : 2}`,
      txnDate: '2026-11-20',
      currency: 'UGX',
      description: 'Stock adjustment ADJ-000001 (OPENING)',
      lines: [
        { account: 'Inventory Asset', side: 'debit', amount: '240000', description: 'stock added' },
        { account, side: 'credit', amount: '240000', description: 'stock added' },
      ],
    });
  t.like(await journal('Opening Balance Equity'), { ok: true, value: { type: 'JournalEntry' } });
  t.like(await journal(''), { ok: false, failure: { kind: 'rejected', code: '2020' } });
  const bill = (itemId: string, requestId: string) =>
    client.postBill(requestId, {
      docNumber: itemId ? 'ADJ-000003' : 'ADJ-000004',
      txnDate: '2026-11-20',
      currency: 'UGX',
      supplier: { id: 'Nile Breweries', name: 'Nile Breweries' },
      lines: [
        { itemId, description: 'Soda 300ml', quantity: '120', unitPrice: '750', amount: '90000', taxAmount: '0' },
      ],
      total: '90000',
    });
  const first = await bill('prd_1', 'bill-a');
  t.like(first, { ok: true, value: { type: 'Bill' } });
  t.deepEqual(await bill('prd_1', 'bill-b'), first, 'the earlier attempt landed: its ref');
  t.like(await quickBooksEntity(sim().db, realm, 'Bill', 'ADJ-000003'), {
    VendorRef: { value: 'Nile Breweries' },
    TotalAmt: 90000,
    Line: [
      {
        DetailType: 'ItemBasedExpenseLineDetail',
        ItemBasedExpenseLineDetail: { ItemRef: { value: 'prd_1' }, Qty: 120, UnitPrice: 750 },
      },
    ],
  });
  t.like(await bill('', 'bill-c'), { ok: false, failure: { kind: 'rejected', code: '2020' } });
  t.is(await quickBooksPostingCount(sim().db, realm), 2);
});

test("trigger values in the customer's name: [sim:period_closed] is 6210, [sim:rejected] 6000, [sim:outage] fails the first attempt of a request id only", async (t) => {
  const { realm, client } = company();
  const named = (name: string, requestId: string) =>
    client.postInvoice(requestId, invoice(`INV-${requestId}`, { customer: { id: 'cus_9', name } }));
  t.like(await named('Shop [sim:period_closed]', 't1'), { ok: false, failure: { kind: 'period_closed' } });
  t.like(await named('Shop [sim:rejected]', 't2'), { ok: false, failure: { kind: 'rejected', code: '6000' } });
  t.like(await named('Shop [sim:outage]', 't3'), { ok: false, failure: { kind: 'temporary' } });
  t.like(await named('Shop [sim:outage]', 't3'), { ok: true, value: { type: 'Invoice' } });
  t.is(await quickBooksPostingCount(sim().db, realm, 'INV-t3'), 1);
});

test('a request without a bearer token is refused (3200); more than 10 at once to one company are throttled with 429', async (t) => {
  const { realm } = company();
  const anonymous = createQuickBooksClient({ baseUrl: `${sim().url}/quickbooks`, realmId: realm, accessToken: '' });
  t.like(await anonymous.postInvoice('x', invoice('INV-1')), {
    ok: false,
    failure: { kind: 'rejected', code: '3200' },
  });
  const { realm: busy, client } = company();
  await injectFailure(sim().db, 'accounting', busy, 'slow', 12, 400);
  const results = await Promise.all(
    Array.from({ length: 12 }, (_, i) => client.postInvoice(`c${i}`, invoice(`INV-C${i}`))),
  );
  const throttled = results.filter(
    (r) => !r.ok && r.failure.kind === 'temporary' && r.failure.retryAfterSeconds === 60,
  );
  t.true(throttled.length >= 1, `${throttled.length} of 12 throttled`);
});

test("the organisation's mapped accounts reach QuickBooks by name: an invoice's sales account on each line (ItemAccountRef), a cash receipt's cash account (DepositToAccountRef)", async (t) => {
  const { realm, client } = company();
  const inv = await client.postInvoice('req-mapped', invoice('INV-000090', { incomeAccount: 'Sales - Beverages' }));
  if (!inv.ok) return t.fail(JSON.stringify(inv.failure));
  const pay = await client.postPayment('pay-mapped', {
    docNumber: 'RCT-000090',
    txnDate: '2026-11-25',
    currency: 'UGX',
    customer: { id: 'cus_1', name: 'Mama Shop' },
    method: 'cash',
    total: '59000',
    links: [{ invoice: inv.value, amount: '59000' }],
    depositAccount: 'Cash at Kampala depot',
  });
  t.true(pay.ok);
  const held = await quickBooksEntity(sim().db, realm, 'Invoice', 'INV-000090');
  t.deepEqual(
    (held!.Line as { SalesItemLineDetail: { ItemAccountRef?: { value: string } } }[]).map(
      (line) => line.SalesItemLineDetail.ItemAccountRef?.value,
    ),
    ['Sales - Beverages'],
  );
  const receipt = await quickBooksEntity(sim().db, realm, 'Payment', 'RCT-000090');
  t.is((receipt?.DepositToAccountRef as { value: string } | undefined)?.value, 'Cash at Kampala depot');
});

test('read: what QuickBooks holds under a ref (number, date, total, balance, state): active, deposited, voided with its amounts zeroed; nothing for an id it does not hold', async (t) => {
  const { realm, client } = company();
  const ref = await posted(client, 'INV-000301');
  t.deepEqual(await client.read(ref), {
    ok: true,
    value: {
      type: 'Invoice',
      id: ref.id,
      docNumber: 'INV-000301',
      txnDate: '2026-11-24',
      total: '59000',
      currency: 'UGX',
      balance: '59000',
      state: 'active',
    },
  });
  await holdQuickBooksEntity(sim().db, realm, ref.id);
  t.like(await client.read(ref), { ok: true, value: { state: 'deposited' } });
  await releaseQuickBooksEntity(sim().db, realm, ref.id);
  t.true((await client.reverse('req-void-301', ref)).ok);
  t.like(await client.read(ref), { ok: true, value: { docNumber: 'INV-000301', total: '0', state: 'voided' } });
  t.deepEqual(await client.read({ type: 'Invoice', id: '987654321' }), { ok: true, value: null });
});
