// The fiscal connector: a client of URA's EFRIS system-to-system interface (the same code whether it talks to URA or
// to the simulator; only the base URL, TIN and device differ). One endpoint, one envelope: `globalInfo.interfaceCode`
// names the call, `data.content` carries its JSON as base64 (codeType 0: plain, as clients of URA's Offline Mode
// Enabler send; the signed and encrypted form is the enabler's job), `returnStateInfo.returnCode` '00' is success.
// Idempotency: the invoice's seller `referenceNo` is the service's number with `isCheckReferenceNo` 1, so EFRIS
// refuses a repeat with 2253; the client then reads the invoice already fiscalised under that reference (T106, T108)
// and answers it as the success it was. A credit note application repeated likewise is found again by its reference.
// Classification: network errors, timeouts, HTTP 5xx, 99 (unknown error) and 45 (partial failure) are temporary; any
// other code is a refusal with URA's code and words. EFRIS has no closed-period refusal.
import { randomUUID } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { assertOutsideTransaction } from '../../platform/database/transaction.js';
import { DestinationRefused } from '../../platform/webhooks/destination.js';
import { redirected, refusedDestination } from '../guarded-fetch.js';
import {
  failed,
  succeeded,
  type ConnectorFailure,
  type ConnectorResult,
  type FiscalApplication,
  type FiscalConnector,
  type FiscalCreditNote,
  type FiscalInvoice,
  type FiscalLine,
  type FiscalPaymentMode,
  type FiscalReceipt,
} from '../types.js';

export interface EfrisClientOptions {
  /** URA's `https://efris.ura.go.ug/efrisws` host (or the test one), or the simulator's `/efris` URL. */
  baseUrl: string;
  tin: string;
  deviceNo: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** URA's payWay codes (T109/T110 PayWay table). */
export const PAYMENT_MODE_CODES: Record<FiscalPaymentMode, string> = {
  credit: '101',
  cash: '102',
  cheque: '103',
  mobile_money: '105',
  card: '106',
  bank_transfer: '107',
};
const TAX_CATEGORY: Record<string, string> = { '0.18': '01', '0': '02', '-': '03' };
const TEMPORARY_CODES = new Set(['99', '45']);

type Answer = { ok: true; content: Record<string, any> } | { ok: false; failure: ConnectorFailure; code?: string };

export function createEfrisClient(options: EfrisClientOptions): FiscalConnector {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/efrisws/ws/taapp/getInformation`;
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 30_000;

  async function call(interfaceCode: string, content: unknown): Promise<Answer> {
    assertOutsideTransaction('a call to the fiscal system');
    const envelope = {
      data: {
        content: Buffer.from(JSON.stringify(content)).toString('base64'),
        signature: '',
        dataDescription: { codeType: '0', encryptCode: '1', zipCode: '0' },
      },
      globalInfo: {
        appId: 'AP04',
        version: '1.1.20191201',
        dataExchangeId: randomUUID().replace(/-/g, ''),
        interfaceCode,
        requestCode: 'TP',
        requestTime: eatNow(),
        responseCode: 'TA',
        userName: 'admin',
        deviceMAC: 'FFFFFFFFFFFF',
        deviceNo: options.deviceNo,
        tin: options.tin,
        brn: '',
        taxpayerID: '1',
        longitude: '0',
        latitude: '0',
        agentType: '0',
        extendField: { responseDateFormat: 'dd/MM/yyyy', responseTimeFormat: 'dd/MM/yyyy HH:mm:ss' },
      },
      returnStateInfo: { returnCode: '', returnMessage: '' },
    };
    let response: globalThis.Response;
    try {
      // redirect 'manual': never followed, whichever fetch runs (the documents would go wherever the Location says).
      response = await doFetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(envelope),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'manual',
      });
    } catch (error) {
      if (error instanceof DestinationRefused) return { ok: false, failure: refusedDestination('EFRIS', error) };
      const timedOut = (error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError';
      return {
        ok: false,
        failure: {
          kind: 'temporary',
          message: timedOut
            ? `EFRIS did not answer within ${timeoutMs} ms`
            : `EFRIS could not be reached: ${(error as Error).message}`,
          retryAfterSeconds: null,
        },
      };
    }
    if (response.status >= 300 && response.status < 400) return { ok: false, failure: redirected('EFRIS', response) };
    const text = await response.text().catch(() => '');
    if (response.status >= 500 || response.status === 429)
      return {
        ok: false,
        failure: { kind: 'temporary', message: `EFRIS answered HTTP ${response.status}`, retryAfterSeconds: null },
      };
    let parsed: { data?: { content?: string }; returnStateInfo?: { returnCode?: string; returnMessage?: string } };
    try {
      parsed = JSON.parse(text);
    } catch {
      return {
        ok: false,
        failure: {
          kind: 'temporary',
          message: `EFRIS answered HTTP ${response.status} with no envelope`,
          retryAfterSeconds: null,
        },
      };
    }
    const code = String(parsed.returnStateInfo?.returnCode ?? '');
    const message = String(parsed.returnStateInfo?.returnMessage ?? '');
    if (code !== '00') {
      if (TEMPORARY_CODES.has(code))
        return {
          ok: false,
          code,
          failure: { kind: 'temporary', message: `EFRIS ${code} ${message}`, retryAfterSeconds: null },
        };
      return { ok: false, code, failure: { kind: 'rejected', code, message } };
    }
    const raw = parsed.data?.content ?? '';
    try {
      return {
        ok: true,
        content: raw === '' ? {} : (JSON.parse(Buffer.from(raw, 'base64').toString('utf8')) as Record<string, any>),
      };
    } catch {
      return {
        ok: false,
        failure: {
          kind: 'temporary',
          message: 'EFRIS answered content that is not base64 JSON',
          retryAfterSeconds: null,
        },
      };
    }
  }

  /** The fiscalised document with this FDN, as a receipt (T108). */
  async function receiptOf(fdn: string): Promise<ConnectorResult<FiscalReceipt>> {
    const details = await call('T108', { invoiceNo: fdn });
    if (!details.ok) return failed(details.failure);
    const basic = details.content.basicInformation ?? {};
    return succeeded({
      fdn,
      verificationCode: String(basic.antifakeCode),
      qrCode: String(details.content.summary?.qrCode ?? ''),
      fiscalId: String(basic.invoiceId),
      fiscalisedAt: new Date().toISOString(),
    });
  }

  async function application(referenceNo: string, bySeller: boolean): Promise<ConnectorResult<FiscalApplication>> {
    const listed = await call('T111', {
      ...(bySeller ? { sellersReferenceNo: referenceNo } : { referenceNo }),
      approveStatus: '101,102,103,104',
      pageNo: '1',
      pageSize: '10',
    });
    if (!listed.ok) return failed(listed.failure);
    const record = (listed.content.records ?? [])[0] as Record<string, string> | undefined;
    if (!record)
      return failed({
        kind: 'rejected',
        code: '1400',
        message: `EFRIS holds no credit note application ${referenceNo}.`,
      });
    const id = String(record.referenceNo);
    switch (record.approveStatus) {
      case '101': {
        const receipt = await receiptOf(String(record.invoiceNo));
        return receipt.ok
          ? succeeded({ status: 'approved', applicationId: id, receipt: receipt.value })
          : failed(receipt.failure);
      }
      case '103':
        return succeeded({
          status: 'rejected',
          applicationId: id,
          reason: record.remark || 'rejected by the tax authority',
        });
      case '104':
        return succeeded({ status: 'cancelled', applicationId: id });
      default:
        return succeeded({ status: 'submitted', applicationId: id });
    }
  }

  return {
    async submitInvoice(invoice: FiscalInvoice) {
      const uploaded = await call('T109', {
        sellerDetails: { tin: options.tin, referenceNo: invoice.referenceNo, isCheckReferenceNo: '1' },
        basicInformation: {
          invoiceNo: '',
          antifakeCode: '',
          deviceNo: options.deviceNo,
          issuedDate: eatAt(invoice.issuedAt),
          operator: 'integration',
          currency: invoice.currency,
          invoiceType: '1',
          invoiceKind: '1',
          dataSource: '103',
          invoiceIndustryCode: '101',
        },
        buyerDetails: {
          buyerTin: invoice.buyer.tin ?? '',
          buyerLegalName: invoice.buyer.name,
          buyerType: invoice.buyer.tin ? '0' : '1',
        },
        goodsDetails: goods(invoice.lines, 1),
        taxDetails: taxDetails(invoice.lines, 1),
        summary: {
          netAmount: invoice.netAmount,
          taxAmount: invoice.taxAmount,
          grossAmount: invoice.grossAmount,
          itemCount: String(invoice.lines.length),
          modeCode: '1',
          remarks: '',
          qrCode: '',
        },
        payWay: invoice.payments.map((payment, i) => ({
          paymentMode: PAYMENT_MODE_CODES[payment.mode],
          paymentAmount: payment.amount,
          orderNumber: String.fromCharCode(97 + i),
        })),
      });
      if (uploaded.ok) {
        const basic = uploaded.content.basicInformation ?? {};
        return succeeded({
          fdn: String(basic.invoiceNo),
          verificationCode: String(basic.antifakeCode),
          qrCode: String(uploaded.content.summary?.qrCode ?? ''),
          fiscalId: String(basic.invoiceId),
          fiscalisedAt: new Date().toISOString(),
        });
      }
      if (uploaded.code !== '2253') return failed(uploaded.failure);
      // Already fiscalised under this reference (an earlier attempt whose answer was lost): read it back.
      const found = await call('T106', { referenceNo: invoice.referenceNo, pageNo: '1', pageSize: '10' });
      if (!found.ok) return failed(found.failure);
      const record = (found.content.records ?? [])[0] as Record<string, string> | undefined;
      if (!record) return failed(uploaded.failure);
      return receiptOf(String(record.invoiceNo));
    },

    async submitCreditNote(note: FiscalCreditNote) {
      const applied = await call('T110', {
        oriInvoiceId: note.original.fiscalId,
        oriInvoiceNo: note.original.fdn,
        reasonCode: note.reasonCode,
        reason: note.reason,
        applicationTime: eatNow(),
        invoiceApplyCategoryCode: '101',
        currency: note.currency,
        contactName: '',
        contactMobileNum: '',
        contactEmail: '',
        source: '103',
        remarks: note.reason,
        sellersReferenceNo: note.referenceNo,
        goodsDetails: goods(note.lines, -1),
        taxDetails: taxDetails(note.lines, -1),
        summary: {
          netAmount: negate(note.netAmount),
          taxAmount: negate(note.taxAmount),
          grossAmount: negate(note.grossAmount),
          itemCount: String(note.lines.length),
          modeCode: '1',
          qrCode: '',
        },
        payWay: [],
        buyerDetails: {},
        basicInformation: { operator: 'integration', invoiceKind: '1', invoiceIndustryCode: '101' },
      });
      if (applied.ok) return succeeded({ status: 'submitted', applicationId: String(applied.content.referenceNo) });
      if (applied.code === '2253') return application(note.referenceNo, true);
      return failed(applied.failure);
    },

    queryCreditNote: (referenceNo) => application(referenceNo, true),

    async readReceipt(fdn) {
      const receipt = await receiptOf(fdn);
      // 300: EFRIS holds no document with this number.
      if (!receipt.ok)
        return receipt.failure.kind === 'rejected' && receipt.failure.code === '300'
          ? succeeded(null)
          : failed(receipt.failure);
      return receipt;
    },

    async cancelCreditNote(applicationId) {
      const voided = await call('T120', { referenceNo: applicationId });
      return voided.ok ? succeeded(undefined) : failed(voided.failure);
    },
  };
}

const negate = (amount: string) => new Decimal(amount).negated().toFixed();

/**
 * EFRIS goods lines: its unit price includes tax (total = qty x unitPrice), so the service's tax-exclusive price after
 * the line's discount becomes total / qty (to 8 places). A credit note's figures are negative.
 */
function goods(lines: FiscalLine[], sign: 1 | -1) {
  return lines.map((line, i) => ({
    item: line.itemName,
    itemCode: line.itemCode,
    qty: new Decimal(line.quantity).times(sign).toFixed(),
    unitOfMeasure: '101',
    unitPrice: new Decimal(line.total).dividedBy(line.quantity).toDecimalPlaces(8).toFixed(),
    total: new Decimal(line.total).times(sign).toFixed(),
    taxRate: line.taxRate,
    tax: new Decimal(line.tax).times(sign).toFixed(),
    orderNumber: String(i),
    discountFlag: '2',
    deemedFlag: '2',
    exciseFlag: '2',
    goodsCategoryId: '50202306',
  }));
}

function taxDetails(lines: FiscalLine[], sign: 1 | -1) {
  const byRate = new Map<string, { net: Decimal; tax: Decimal; gross: Decimal }>();
  for (const line of lines) {
    const row = byRate.get(line.taxRate) ?? { net: new Decimal(0), tax: new Decimal(0), gross: new Decimal(0) };
    row.tax = row.tax.plus(line.tax);
    row.gross = row.gross.plus(line.total);
    row.net = row.gross.minus(row.tax);
    byRate.set(line.taxRate, row);
  }
  return [...byRate].map(([rate, row]) => ({
    taxCategoryCode: TAX_CATEGORY[rate] ?? '01',
    netAmount: row.net.times(sign).toFixed(),
    taxRate: rate,
    taxAmount: row.tax.times(sign).toFixed(),
    grossAmount: row.gross.times(sign).toFixed(),
  }));
}

/** `yyyy-MM-dd HH:mm:ss` in East Africa Time (UTC+3), as EFRIS reads its request times. */
const eatAt = (iso: string) =>
  new Date(new Date(iso).getTime() + 3 * 3_600_000).toISOString().replace('T', ' ').slice(0, 19);
const eatNow = () => eatAt(new Date().toISOString());
