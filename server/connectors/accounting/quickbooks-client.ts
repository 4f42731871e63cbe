// The accounting connector: a client of QuickBooks Online's REST API v3 (the same code whether it talks to Intuit or
// to the simulator; only the base URL and the token differ). Every write carries `requestid` (QuickBooks answers a
// repeated id with its first answer). Intuit's own clients report that the replay is not always honoured, so a create
// refused as a duplicate document number (6140) is looked up by its number: when the company already holds that very
// document (same total, same customer or vendor), the earlier attempt landed and its ref is the answer.
// Every answer is classified for the posting job: 429 (with its Retry-After), 5xx, timeouts and network errors are
// temporary; 6200/6210 is the closed period (with the date when the Detail names it); any other Fault is a refusal
// with QuickBooks' code and words. QuickBooks may answer HTTP 200 with a Fault: the body decides, not the status.
import { Decimal } from 'decimal.js';
import { assertOutsideTransaction } from '../../platform/database/transaction.js';
import { DestinationRefused } from '../../platform/webhooks/destination.js';
import { redirected, refusedDestination } from '../guarded-fetch.js';
import {
  failed,
  succeeded,
  type AccountingBill,
  type AccountingConnector,
  type AccountingCreditMemo,
  type AccountingInvoice,
  type AccountingJournalEntry,
  type AccountingLine,
  type AccountingHeld,
  type AccountingPayment,
  type AccountingRef,
  type AccountingRefund,
  type AccountingType,
  type ConnectorFailure,
  type ConnectorResult,
} from '../types.js';

export interface QuickBooksClientOptions {
  /** `https://quickbooks.api.intuit.com` (or the sandbox's), or the simulator's `/quickbooks` URL. */
  baseUrl: string;
  realmId: string;
  accessToken: string;
  /** Per call; a slower answer is a temporary failure. Default 30 s. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

const MINOR_VERSION = '75';
/** QuickBooks amounts are JSON numbers: the service's decimal strings become numbers only here, at the wire. */
const num = (amount: string) => Number(amount);

type Answer = { ok: true; body: Record<string, any> } | { ok: false; failure: ConnectorFailure };

export function createQuickBooksClient(options: QuickBooksClientOptions): AccountingConnector {
  const base = `${options.baseUrl.replace(/\/+$/, '')}/v3/company/${encodeURIComponent(options.realmId)}`;
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 30_000;

  async function call(
    method: 'GET' | 'POST',
    path: string,
    query: Record<string, string>,
    body?: unknown,
  ): Promise<Answer> {
    assertOutsideTransaction('a call to the accounting system');
    const url = `${base}/${path}?${new URLSearchParams({ ...query, minorversion: MINOR_VERSION })}`;
    let response: globalThis.Response;
    try {
      response = await doFetch(url, {
        method,
        headers: {
          authorization: `Bearer ${options.accessToken}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'manual', // never followed, whichever fetch runs: the token would go wherever the Location says
      });
    } catch (error) {
      if (error instanceof DestinationRefused) return { ok: false, failure: refusedDestination('QuickBooks', error) };
      const timedOut = (error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError';
      return {
        ok: false,
        failure: {
          kind: 'temporary',
          message: timedOut
            ? `QuickBooks did not answer within ${timeoutMs} ms`
            : `QuickBooks could not be reached: ${(error as Error).message}`,
          retryAfterSeconds: null,
        },
      };
    }
    if (response.status >= 300 && response.status < 400)
      return { ok: false, failure: redirected('QuickBooks', response) };
    const text = await response.text().catch(() => '');
    let parsed: Record<string, any> | null = null;
    try {
      parsed = JSON.parse(text) as Record<string, any>;
    } catch {
      parsed = null;
    }
    if (response.status === 429) {
      const wait = Number(response.headers.get('retry-after'));
      return {
        ok: false,
        failure: {
          kind: 'temporary',
          message: `QuickBooks throttled the request (429${faultText(parsed) ? `: ${faultText(parsed)}` : ''})`,
          retryAfterSeconds: Number.isFinite(wait) && wait > 0 ? wait : 60,
        },
      };
    }
    if (response.status >= 500)
      return {
        ok: false,
        failure: {
          kind: 'temporary',
          message: `QuickBooks answered ${response.status}${faultText(parsed) ? `: ${faultText(parsed)}` : ''}`,
          retryAfterSeconds: null,
        },
      };
    const fault = parsed?.Fault?.Error?.[0] as { code?: string; Message?: string; Detail?: string } | undefined;
    if (fault) {
      const code = String(fault.code ?? response.status);
      const message = [fault.Message, fault.Detail].filter(Boolean).join(': ');
      if (code === '6210' || code === '6200')
        return {
          ok: false,
          failure: {
            kind: 'period_closed',
            message: `QuickBooks ${code} ${message}`,
            closedThrough: /closed through (\d{4}-\d{2}-\d{2})/.exec(message)?.[1] ?? null,
          },
        };
      return { ok: false, failure: { kind: 'rejected', code, message } };
    }
    if (!response.ok || parsed === null)
      return {
        ok: false,
        failure: {
          kind: 'rejected',
          code: String(response.status),
          message: `QuickBooks answered ${response.status}: ${text.slice(0, 300)}`,
        },
      };
    return { ok: true, body: parsed };
  }

  /** Creates an entity; a 6140 duplicate of the very same document is the earlier attempt, found by its number. */
  async function create(
    entity: AccountingType,
    requestId: string,
    body: Record<string, any>,
    same: (held: Record<string, any>) => boolean,
  ): Promise<ConnectorResult<AccountingRef>> {
    const answer = await call('POST', entity.toLowerCase(), { requestid: requestId }, body);
    if (answer.ok) return succeeded({ type: entity, id: String(answer.body[entity]?.Id) });
    if (answer.failure.kind === 'rejected' && answer.failure.code === '6140' && typeof body.DocNumber === 'string') {
      const found = await call('GET', 'query', {
        query: `select * from ${entity} where DocNumber = '${body.DocNumber.replace(/'/g, "\\'")}'`,
      });
      if (!found.ok) return failed(found.failure);
      const held = ((found.body.QueryResponse?.[entity] ?? []) as Record<string, any>[]).find(same);
      if (held) return succeeded({ type: entity, id: String(held.Id) });
    }
    return failed(answer.failure);
  }

  const sameParty = (body: Record<string, any>, total: string) => (held: Record<string, any>) =>
    Number(held.TotalAmt) === num(total) &&
    String((held.CustomerRef ?? held.VendorRef)?.value ?? '') ===
      String((body.CustomerRef ?? body.VendorRef)?.value ?? '');

  return {
    async postInvoice(requestId, invoice: AccountingInvoice) {
      const body = { ...salesDocument(invoice), TxnTaxDetail: { TotalTax: num(invoice.taxTotal) } };
      return create('Invoice', requestId, body, sameParty(body, invoice.total));
    },
    async postPayment(requestId, payment: AccountingPayment) {
      const body = {
        PaymentRefNum: payment.docNumber,
        TxnDate: payment.txnDate,
        CurrencyRef: { value: payment.currency },
        CustomerRef: { value: payment.customer.id, name: payment.customer.name },
        TotalAmt: num(payment.total),
        PrivateNote: `Receipt ${payment.docNumber} (${payment.method.replace('_', ' ')})`,
        Line: payment.links.map((link) => ({
          Amount: num(link.amount),
          LinkedTxn: [{ TxnId: link.invoice.id, TxnType: 'Invoice' }],
        })),
        ...(payment.depositAccount
          ? { DepositToAccountRef: { value: payment.depositAccount, name: payment.depositAccount } }
          : {}),
      };
      return create('Payment', requestId, body, sameParty(body, payment.total));
    },
    async postCreditMemo(requestId, memo: AccountingCreditMemo) {
      const body = {
        ...salesDocument(memo),
        TxnTaxDetail: { TotalTax: num(memo.taxTotal) },
        ...(memo.invoice ? { PrivateNote: `Credits ${memo.invoice.type} ${memo.invoice.id}` } : {}),
      };
      return create('CreditMemo', requestId, body, sameParty(body, memo.total));
    },
    async postRefund(requestId, refund: AccountingRefund) {
      const body = {
        DocNumber: refund.docNumber,
        TxnDate: refund.txnDate,
        CurrencyRef: { value: refund.currency },
        CustomerRef: { value: refund.customer.id, name: refund.customer.name },
        PrivateNote: `${refund.description} (${refund.method.replace('_', ' ')})`,
        Line: [
          {
            Amount: num(refund.amount),
            Description: refund.description,
            DetailType: 'SalesItemLineDetail',
            SalesItemLineDetail: { ItemRef: { value: 'refund', name: 'Cash refund' } },
          },
        ],
      };
      return create('RefundReceipt', requestId, body, sameParty(body, refund.amount));
    },
    async postBill(requestId, bill: AccountingBill) {
      const body = {
        DocNumber: bill.docNumber,
        TxnDate: bill.txnDate,
        CurrencyRef: { value: bill.currency },
        VendorRef: { value: bill.supplier.id, name: bill.supplier.name },
        Line: bill.lines.map((line) => ({
          Amount: num(line.amount),
          Description: line.description,
          DetailType: 'ItemBasedExpenseLineDetail',
          ItemBasedExpenseLineDetail: {
            ItemRef: { value: line.itemId, name: line.description },
            Qty: num(line.quantity),
            UnitPrice: num(line.unitPrice),
          },
        })),
      };
      return create('Bill', requestId, body, sameParty(body, bill.total));
    },
    async postJournalEntry(requestId, entry: AccountingJournalEntry) {
      const body = {
        DocNumber: entry.docNumber,
        TxnDate: entry.txnDate,
        CurrencyRef: { value: entry.currency },
        PrivateNote: entry.description,
        Line: entry.lines.map((line) => ({
          Amount: num(line.amount),
          Description: line.description,
          DetailType: 'JournalEntryLineDetail',
          JournalEntryLineDetail: {
            PostingType: line.side === 'debit' ? 'Debit' : 'Credit',
            AccountRef: { value: line.account, name: line.account },
          },
        })),
      };
      const debits = entry.lines
        .filter((line) => line.side === 'debit')
        .reduce((sum, line) => sum.plus(line.amount), new Decimal(0));
      return create('JournalEntry', requestId, body, (held) => Number(held.TotalAmt) === num(debits.toFixed()));
    },
    async reverse(requestId, ref: AccountingRef) {
      const current = await call('GET', `${ref.type.toLowerCase()}/${encodeURIComponent(ref.id)}`, {});
      // Already gone (deleted) or voided: the reversal has nothing left to do there.
      if (!current.ok)
        return current.failure.kind === 'rejected' && current.failure.code === '610'
          ? succeeded(undefined)
          : failed(current.failure);
      if (String(current.body[ref.type]?.PrivateNote ?? '').startsWith('Voided')) return succeeded(undefined);
      const syncToken = String(current.body[ref.type]?.SyncToken ?? '0');
      const path = ref.type.toLowerCase();
      const answer =
        ref.type === 'Invoice'
          ? await call('POST', path, { operation: 'void', requestid: requestId }, { Id: ref.id, SyncToken: syncToken })
          : ref.type === 'Payment'
            ? await call(
                'POST',
                path,
                { operation: 'update', include: 'void', requestid: requestId },
                { Id: ref.id, SyncToken: syncToken, sparse: true },
              )
            : await call(
                'POST',
                path,
                { operation: 'delete', requestid: requestId },
                { Id: ref.id, SyncToken: syncToken },
              );
      return answer.ok ? succeeded(undefined) : failed(answer.failure);
    },
    async holds(ref: AccountingRef) {
      const answer = await call('GET', `${ref.type.toLowerCase()}/${encodeURIComponent(ref.id)}`, {});
      // Deleted, or voided (kept with its amounts zeroed and its note starting "Voided"): nothing there to keep.
      if (!answer.ok)
        return answer.failure.kind === 'rejected' && answer.failure.code === '610'
          ? succeeded(false)
          : failed(answer.failure);
      const held = answer.body[ref.type] as Record<string, any>;
      if (String(held?.PrivateNote ?? '').startsWith('Voided')) return succeeded(false);
      // Deposited (QuickBooks refuses to change it: 6540), or dated in the company's closed books (6210).
      if (((held?.LinkedTxn ?? []) as { TxnType: string }[]).some((link) => link.TxnType === 'Deposit'))
        return succeeded(true);
      const preferences = await call('GET', 'preferences', {});
      if (!preferences.ok) return failed(preferences.failure);
      const closed = preferences.body.Preferences?.AccountingInfoPrefs?.BookCloseDate as string | null | undefined;
      return succeeded(typeof closed === 'string' && typeof held?.TxnDate === 'string' && held.TxnDate <= closed);
    },
    async read(ref: AccountingRef): Promise<ConnectorResult<AccountingHeld | null>> {
      const answer = await call('GET', `${ref.type.toLowerCase()}/${encodeURIComponent(ref.id)}`, {});
      // 610: deleted (or never there); QuickBooks keeps no trace to show.
      if (!answer.ok)
        return answer.failure.kind === 'rejected' && answer.failure.code === '610'
          ? succeeded(null)
          : failed(answer.failure);
      const held = (answer.body[ref.type] ?? {}) as Record<string, any>;
      const number = held.DocNumber ?? held.PaymentRefNum;
      const deposited = ((held.LinkedTxn ?? []) as { TxnType: string }[]).some((link) => link.TxnType === 'Deposit');
      return succeeded({
        type: ref.type,
        id: String(held.Id ?? ref.id),
        docNumber: typeof number === 'string' && number !== '' ? number : null,
        txnDate: typeof held.TxnDate === 'string' ? held.TxnDate : null,
        total: decimalOf(held.TotalAmt ?? 0),
        currency: typeof held.CurrencyRef?.value === 'string' ? held.CurrencyRef.value : null,
        balance: held.Balance === undefined || held.Balance === null ? null : decimalOf(held.Balance),
        state: String(held.PrivateNote ?? '').startsWith('Voided') ? 'voided' : deposited ? 'deposited' : 'active',
      });
    },
  };
}

function salesDocument(document: {
  docNumber: string;
  txnDate: string;
  currency: string;
  customer: { id: string; name: string };
  lines: AccountingLine[];
  incomeAccount?: string | null;
}): Record<string, any> {
  return {
    DocNumber: document.docNumber,
    TxnDate: document.txnDate,
    CurrencyRef: { value: document.currency },
    CustomerRef: { value: document.customer.id, name: document.customer.name },
    Line: document.lines.map((line) => ({
      Amount: num(line.amount),
      Description: line.description,
      DetailType: 'SalesItemLineDetail',
      SalesItemLineDetail: {
        ItemRef: { value: line.itemId, name: line.description },
        Qty: num(line.quantity),
        UnitPrice: num(line.unitPrice),
        TaxCodeRef: { value: num(line.taxAmount) > 0 ? 'TAX' : 'NON' },
        // The organisation's sales account by name, so the income lands there whatever account the item defaults to.
        ...(document.incomeAccount
          ? { ItemAccountRef: { value: document.incomeAccount, name: document.incomeAccount } }
          : {}),
      },
    })),
  };
}

/** A QuickBooks JSON number as the service's decimal string. */
const decimalOf = (value: unknown) => new Decimal(String(value)).toFixed();

function faultText(parsed: Record<string, any> | null): string {
  const error = parsed?.Fault?.Error?.[0];
  return error ? [error.Message, error.Detail].filter(Boolean).join(': ') : '';
}
