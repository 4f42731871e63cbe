// The EFRIS simulator: an HTTP server of URA's system-to-system interface (one endpoint, `POST
// /efrisws/ws/taapp/getInformation`, one JSON envelope whose `data.content` is base64 JSON and whose
// `globalInfo.interfaceCode` names the call), with its state in Postgres. It answers plain content (codeType 0, as
// clients of the Offline Mode Enabler send) and follows URA's documented rules and return codes:
// - T109 uploads an invoice: FDN, 20-digit antifake (verification) code, QR URL and internal invoice id; a repeated
//   seller referenceNo is 2253; the figures must add up exactly (1342, 1344, 1345, 2270); payment modes are 101-110;
// - T106 finds invoices by seller reference, T108 reads one by FDN;
// - T110 applies for a credit note against a fiscalised invoice: the original must exist and match (1400, 1403), in
//   its currency (1411); each credited item must be on exactly one line of the original with its unit price and tax
//   rate (1480 otherwise), within what is left of that line (1434 quantity, 1460 amount). An application waits as 102
//   Submitted; the simulator approves it (101, with the credit note's own FDN) when it is asked about (T111) at least
//   1 s after it was submitted (how fast the real authority approves is not documented), or rejects it (103) when the
//   original's remaining quantity no longer covers it;
// - T120 voids a pending application (104); an approved one is refused;
// - a request time more than ten minutes off is 28; failures on demand and trigger values in the buyer's name.
import { randomInt } from 'node:crypto';
import { Decimal } from 'decimal.js';
import express, { type Request, type Response, type Router } from 'express';
import type { Generated, Kysely, Selectable, Transaction } from 'kysely';
import type { Db } from '../../../platform/database/transaction.js';
import { simulatorDb } from '../database.js';
import { takeFailure } from '../failures.js';
import { SIMULATED_REDIRECT_LOCATION } from '../quickbooks/router.js';

export const EFRIS_FAILURE_MODES = ['outage', 'slow', 'timeout', 'unknown_error', 'rejected', 'redirect'] as const;

export const EFRIS_TRIGGERS = [
  {
    value: '[sim:rejected]',
    effect: 'invoices and credit notes of this buyer are refused with 2122 (item code not configured)',
  },
  { value: '[sim:outage]', effect: 'the first upload of each reference number gets a 503; a retry succeeds' },
] as const;

export const EFRIS_QR_BASE = 'https://efristest.ura.go.ug/site_new/#/invoiceValidation?invoiceNo=';
const APPROVAL_DELAY_MS = 1_000;
const PAYMENT_MODES = new Set(['101', '102', '103', '104', '105', '106', '107', '108', '109', '110']);

interface Tables {
  efris_counters: { name: string; value: string };
  efris_documents: {
    tin: string;
    invoice_id: string;
    fdn: string;
    antifake_code: string;
    kind: string;
    reference_no: string;
    currency: string;
    buyer_name: string;
    gross_amount: string;
    tax_amount: string;
    lines: unknown;
    original_fdn: string | null;
    is_refund: Generated<number>;
    issued_at: Generated<Date>;
  };
  efris_applications: {
    tin: string;
    reference_no: string;
    seller_reference: string;
    ori_invoice_id: string;
    ori_fdn: string;
    reason_code: string;
    currency: string;
    lines: unknown;
    gross_amount: string;
    tax_amount: string;
    approve_status: string;
    credit_fdn: string | null;
    remark: string | null;
    submitted_at: Generated<Date>;
  };
  efris_trigger_attempts: { tin: string; reference_no: string };
}
type Sim = Kysely<Tables>;
type SimTx = Transaction<Tables>;

/** A goods line as kept: what the original said and what is still creditable. */
interface KeptLine {
  orderNumber: string;
  item: string;
  itemCode: string;
  qty: string;
  unitPrice: string;
  total: string;
  tax: string;
  taxRate: string;
  remainingQty: string;
  remainingTotal: string;
}

class Refusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function createEfrisSimulator(db: Db): Router {
  const sim = simulatorDb<Tables>(db);
  const router = express.Router();
  router.post('/efrisws/ws/taapp/getInformation', async (req: Request, res: Response) => {
    const envelope = (req.body ?? {}) as { data?: { content?: string }; globalInfo?: Record<string, string> };
    const global = envelope.globalInfo ?? {};
    const tin = String(global.tin ?? '');
    const reply = (returnCode: string, returnMessage: string, content: unknown = null) =>
      res.status(200).json({
        data: {
          content: content === null ? '' : Buffer.from(JSON.stringify(content)).toString('base64'),
          signature: '',
          dataDescription: { codeType: '0', encryptCode: '1', zipCode: '0' },
        },
        globalInfo: { ...global, responseCode: 'TA', requestCode: 'TA' },
        returnStateInfo: { returnCode, returnMessage },
      });
    try {
      const injected = await takeFailure(db, 'fiscal', tin);
      if (injected?.mode === 'slow') await sleep(injected.delayMs);
      if (injected?.mode === 'timeout') await sleep(35_000);
      if (injected?.mode === 'outage') {
        res.status(503).send('Service Unavailable');
        return;
      }
      if (injected?.mode === 'redirect') {
        res.redirect(307, SIMULATED_REDIRECT_LOCATION);
        return;
      }
      if (injected?.mode === 'unknown_error') {
        reply('99', 'Unknown error');
        return;
      }
      if (injected?.mode === 'rejected') {
        reply('2122', 'goodsDetails:itemCode is not configured with URA!');
        return;
      }
      if (!tin) {
        reply('04', 'globalInfo:tin cannot be empty!');
        return;
      }
      if (!requestTimeFresh(String(global.requestTime ?? ''))) {
        reply('28', 'The difference between RequestTime and the current time is greater than ten minutes');
        return;
      }
      let content: Record<string, any>;
      try {
        content = envelope.data?.content
          ? (JSON.parse(Buffer.from(envelope.data.content, 'base64').toString('utf8')) as Record<string, any>)
          : {};
      } catch {
        reply('06', 'data:content is not valid base64 JSON!');
        return;
      }
      const code = String(global.interfaceCode ?? '');
      if (code === 'T109' && (await outageTrigger(sim, tin, content))) {
        res.status(503).send('Service Unavailable');
        return;
      }
      const answer = await dispatch(sim, tin, code, content);
      reply('00', 'SUCCESS', answer);
    } catch (error) {
      if (error instanceof Refusal) reply(error.code, error.message);
      else reply('99', `Unknown error: ${(error as Error).message}`);
    }
  });
  return router;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `yyyy-MM-dd HH:mm:ss` in East Africa Time (UTC+3), within ten minutes of now. */
function requestTimeFresh(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/.exec(text);
  if (!match) return false;
  const at = Date.UTC(
    Number(match[1]),
    Number(match[2]) - 1,
    Number(match[3]),
    Number(match[4]) - 3,
    Number(match[5]),
    Number(match[6]),
  );
  return Math.abs(Date.now() - at) <= 10 * 60_000;
}

async function outageTrigger(sim: Sim, tin: string, content: Record<string, any>): Promise<boolean> {
  if (!String(content.buyerDetails?.buyerLegalName ?? '').includes('[sim:outage]')) return false;
  const first = await sim
    .insertInto('efris_trigger_attempts')
    .values({ tin, reference_no: String(content.sellerDetails?.referenceNo ?? '') })
    .onConflict((c) => c.columns(['tin', 'reference_no']).doNothing())
    .executeTakeFirst();
  return Number(first.numInsertedOrUpdatedRows ?? 0n) > 0;
}

async function dispatch(sim: Sim, tin: string, code: string, content: Record<string, any>): Promise<unknown> {
  switch (code) {
    case 'T101':
      return {
        currentTime: new Date(Date.now() + 3 * 3_600_000)
          .toISOString()
          .replace(/^(\d{4})-(\d{2})-(\d{2})T(\d{2}:\d{2}:\d{2}).*$/, '$3/$2/$1 $4'),
      };
    case 'T109':
      return sim.transaction().execute((tx) => uploadInvoice(tx, tin, content));
    case 'T106':
      return findInvoices(sim, tin, content);
    case 'T108':
      return invoiceDetails(sim, tin, String(content.invoiceNo ?? ''));
    case 'T110':
      return sim.transaction().execute((tx) => applyForCreditNote(tx, tin, content));
    case 'T111':
      return sim.transaction().execute((tx) => queryApplications(tx, tin, content));
    case 'T120':
      return sim.transaction().execute((tx) => voidApplication(tx, tin, content));
    default:
      throw new Refusal('12', `globalInfo:interfaceCode ${code} is not supported by this simulator`);
  }
}

const dec = (value: unknown, field: string): Decimal => {
  try {
    const amount = new Decimal(String(value));
    if (amount.isFinite()) return amount;
  } catch {
    /* refused below */
  }
  throw new Refusal('1301', `${field}:Invalid field value!`);
};

/** The figures of goods, taxDetails, summary and payWay must agree exactly (URA 1342, 1344, 1345, 2270). */
function checkFigures(content: Record<string, any>, sign: 1 | -1): { gross: Decimal; tax: Decimal } {
  const goods = (content.goodsDetails ?? []) as Record<string, string>[];
  if (goods.length === 0) throw new Refusal('1302', 'goodsDetails cannot be empty!');
  goods.forEach((line, i) => {
    const qty = dec(line.qty, `goodsDetails[${i}].qty`);
    const total = dec(line.total, `goodsDetails[${i}].total`);
    const tax = dec(line.tax, `goodsDetails[${i}].tax`);
    if (qty.times(sign).lte(0) || total.times(sign).lte(0))
      throw new Refusal(
        sign === 1 ? '1305' : '1434',
        `goodsDetails[${i}]: qty and total must be ${sign === 1 ? 'positive' : 'negative'}!`,
      );
    if (tax.abs().greaterThan(total.abs())) throw new Refusal('2776', `goodsDetails[${i}]: Tax calculation error`);
    if (
      qty
        .times(dec(line.unitPrice, `goodsDetails[${i}].unitPrice`))
        .minus(total)
        .abs()
        .greaterThan(new Decimal('0.01').times(qty.abs().ceil()))
    ) {
      throw new Refusal('1308', `goodsDetails[${i}]: total must be qty x unitPrice!`);
    }
  });
  const taxes = (content.taxDetails ?? []) as Record<string, string>[];
  taxes.forEach((row, i) => {
    if (
      !dec(row.netAmount, `taxDetails[${i}].netAmount`)
        .plus(dec(row.taxAmount, `taxDetails[${i}].taxAmount`))
        .equals(dec(row.grossAmount, `taxDetails[${i}].grossAmount`))
    ) {
      throw new Refusal('1342', `taxDetails[${i}]: netAmount + taxAmount must equal grossAmount!`);
    }
  });
  const summary = content.summary ?? {};
  const gross = dec(summary.grossAmount, 'summary.grossAmount');
  const tax = dec(summary.taxAmount, 'summary.taxAmount');
  const sum = (rows: Record<string, string>[], field: string) =>
    rows.reduce((total, row) => total.plus(dec(row[field], field)), new Decimal(0));
  if (!tax.equals(sum(taxes, 'taxAmount')))
    throw new Refusal('1344', 'summary:taxAmount must equal the sum of taxDetails taxAmount!');
  if (!gross.equals(sum(taxes, 'grossAmount')))
    throw new Refusal('1345', 'summary:grossAmount must equal the sum of taxDetails grossAmount!');
  if (!gross.equals(sum(goods, 'total')))
    throw new Refusal('1346', 'summary:grossAmount must equal the sum of goodsDetails total!');
  if (!dec(summary.netAmount, 'summary.netAmount').plus(tax).equals(gross))
    throw new Refusal('1343', 'summary:netAmount + taxAmount must equal grossAmount!');
  return { gross, tax };
}

const nextFdn = async (tx: SimTx): Promise<string> =>
  (
    await tx
      .updateTable('efris_counters')
      .set((eb) => ({ value: eb('value', '+', '1') }))
      .where('name', '=', 'fdn')
      .returning('value')
      .executeTakeFirstOrThrow()
  ).value;
const digits = (n: number) =>
  Array.from({ length: n }, (_, i) => String(i === 0 ? randomInt(1, 10) : randomInt(0, 10))).join('');

async function uploadInvoice(tx: SimTx, tin: string, content: Record<string, any>): Promise<unknown> {
  const seller = content.sellerDetails ?? {};
  const basic = content.basicInformation ?? {};
  const buyer = content.buyerDetails ?? {};
  if (String(seller.tin ?? tin) !== tin) throw new Refusal('2075', 'sellerDetails:tin does not match globalInfo:tin!');
  const referenceNo = String(seller.referenceNo ?? '');
  if (referenceNo === '' || referenceNo.length > 50)
    throw new Refusal('2250', 'sellerDetails:referenceNo cannot be empty or longer than 50!');
  if (String(content.summary?.modeCode ?? '1') === '1' && String(basic.invoiceNo ?? '') !== '')
    throw new Refusal('1323', 'basicInformation:invoiceNo must be empty when modeCode is 1!');
  if (String(buyer.buyerLegalName ?? '').includes('[sim:rejected]'))
    throw new Refusal('2122', 'goodsDetails:itemCode is not configured with URA!');
  if (String(seller.isCheckReferenceNo ?? '0') === '1') {
    const repeated = await tx
      .selectFrom('efris_documents')
      .select('fdn')
      .where('tin', '=', tin)
      .where('kind', '=', 'invoice')
      .where('reference_no', '=', referenceNo)
      .executeTakeFirst();
    if (repeated) throw new Refusal('2253', "The seller's reference number already exists!");
  }
  const { gross, tax } = checkFigures(content, 1);
  const payWay = (content.payWay ?? []) as Record<string, string>[];
  payWay.forEach((pay, i) => {
    if (!PAYMENT_MODES.has(String(pay.paymentMode)))
      throw new Refusal('2263', `payWay[${i}]:paymentMode ${pay.paymentMode} is invalid!`);
  });
  if (
    payWay.length > 0 &&
    !payWay.reduce((sum, pay) => sum.plus(dec(pay.paymentAmount, 'payWay.paymentAmount')), new Decimal(0)).equals(gross)
  ) {
    throw new Refusal('2270', 'Total Amount Paid and Gross Amount are inconsistent!');
  }
  const fdn = await nextFdn(tx);
  const invoiceId = digits(19);
  const antifakeCode = digits(20);
  const lines: KeptLine[] = ((content.goodsDetails ?? []) as Record<string, string>[]).map((line, i) => ({
    orderNumber: String(line.orderNumber ?? i),
    item: String(line.item ?? ''),
    itemCode: String(line.itemCode ?? ''),
    qty: String(line.qty),
    unitPrice: String(line.unitPrice),
    total: String(line.total),
    tax: String(line.tax),
    taxRate: String(line.taxRate),
    remainingQty: String(line.qty),
    remainingTotal: String(line.total),
  }));
  // A repeat of the same reference at the same moment: the unique index refuses the second.
  const inserted = await tx
    .insertInto('efris_documents')
    .values({
      tin,
      invoice_id: invoiceId,
      fdn,
      antifake_code: antifakeCode,
      kind: 'invoice',
      reference_no: referenceNo,
      currency: String(basic.currency ?? 'UGX'),
      buyer_name: String(buyer.buyerLegalName ?? ''),
      gross_amount: gross.toFixed(),
      tax_amount: tax.toFixed(),
      lines: JSON.stringify(lines),
    })
    .onConflict((c) => c.columns(['tin', 'reference_no']).where('kind', '=', 'invoice').doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0)
    throw new Refusal('2253', "The seller's reference number already exists!");
  return {
    ...content,
    basicInformation: { ...basic, invoiceNo: fdn, antifakeCode, invoiceId, issuedDate: basic.issuedDate ?? eatNow() },
    summary: { ...content.summary, qrCode: `${EFRIS_QR_BASE}${fdn}` },
  };
}

const eatNow = () => new Date(Date.now() + 3 * 3_600_000).toISOString().replace('T', ' ').slice(0, 19);

async function findInvoices(sim: Sim, tin: string, content: Record<string, any>): Promise<unknown> {
  let q = sim
    .selectFrom('efris_documents')
    .select(['invoice_id', 'fdn', 'antifake_code', 'reference_no', 'gross_amount', 'currency', 'issued_at', 'kind'])
    .where('tin', '=', tin)
    .orderBy('issued_at', 'desc')
    .limit(Math.min(Number(content.pageSize ?? 10) || 10, 100));
  if (content.referenceNo) q = q.where('reference_no', '=', String(content.referenceNo)).where('kind', '=', 'invoice');
  if (content.invoiceNo) q = q.where('fdn', '=', String(content.invoiceNo));
  const rows = await q.execute();
  return {
    page: { pageNo: '1', pageSize: String(rows.length), totalSize: String(rows.length), pageCount: '1' },
    records: rows.map((row) => ({
      id: row.invoice_id,
      invoiceNo: row.fdn,
      antifakeCode: row.antifake_code,
      referenceNo: row.reference_no,
      currency: row.currency,
      grossAmount: new Decimal(row.gross_amount).toFixed(),
      invoiceType: row.kind === 'invoice' ? '1' : '5',
      issuedDate: row.issued_at.toISOString(),
    })),
  };
}

async function invoiceDetails(sim: Sim, tin: string, fdn: string): Promise<unknown> {
  const row = await sim
    .selectFrom('efris_documents')
    .selectAll()
    .where('tin', '=', tin)
    .where('fdn', '=', fdn)
    .executeTakeFirst();
  if (!row) throw new Refusal('300', 'The original invoice does not exist!');
  return {
    basicInformation: {
      invoiceNo: row.fdn,
      antifakeCode: row.antifake_code,
      invoiceId: row.invoice_id,
      currency: row.currency,
      issuedDate: row.issued_at.toISOString(),
      invoiceType: row.kind === 'invoice' ? '1' : '5',
      isRefund: String(row.is_refund),
      oriInvoiceNo: row.original_fdn ?? '',
    },
    sellerDetails: { tin, referenceNo: row.reference_no },
    goodsDetails: row.lines,
    summary: {
      grossAmount: new Decimal(row.gross_amount).toFixed(),
      taxAmount: new Decimal(row.tax_amount).toFixed(),
      qrCode: `${EFRIS_QR_BASE}${row.fdn}`,
    },
  };
}

async function applyForCreditNote(tx: SimTx, tin: string, content: Record<string, any>): Promise<unknown> {
  const sellerReference = String(content.sellersReferenceNo ?? '');
  if (sellerReference === '') throw new Refusal('2250', 'sellersReferenceNo cannot be empty!');
  const repeated = await tx
    .selectFrom('efris_applications')
    .select('reference_no')
    .where('tin', '=', tin)
    .where('seller_reference', '=', sellerReference)
    .executeTakeFirst();
  if (repeated) throw new Refusal('2253', "The seller's reference number already exists!");
  if (String(content.buyerDetails?.buyerLegalName ?? '').includes('[sim:rejected]'))
    throw new Refusal('2122', 'goodsDetails:itemCode is not configured with URA!');
  const original = await tx
    .selectFrom('efris_documents')
    .selectAll()
    .where('tin', '=', tin)
    .where('kind', '=', 'invoice')
    .where('fdn', '=', String(content.oriInvoiceNo ?? ''))
    .forUpdate()
    .executeTakeFirst();
  if (!original) throw new Refusal('1400', 'The original invoice does not exist!');
  if (original.invoice_id !== String(content.oriInvoiceId ?? ''))
    throw new Refusal('1403', 'oriInvoiceId must match oriInvoiceNo!');
  if (original.currency !== String(content.currency ?? ''))
    throw new Refusal('1411', 'currency must be the same as the original invoice!');
  if (!['101', '102', '103', '104', '105'].includes(String(content.reasonCode)))
    throw new Refusal('1413', 'reasonCode:Invalid field value!');
  const { gross, tax } = checkFigures(content, -1);
  const kept = original.lines as KeptLine[];
  ((content.goodsDetails ?? []) as Record<string, string>[]).forEach((line, i) => {
    const matches = kept.filter((k) => k.itemCode === String(line.itemCode));
    if (matches.length !== 1) {
      throw new Refusal(
        '1480',
        `Credit Note request is illegal! goodsDetails[${i}]: item ${line.itemCode} is on ${matches.length} lines of invoice ${original.fdn}; a credited item must be on exactly one.`,
      );
    }
    const match = matches[0]!;
    if (!dec(line.unitPrice, 'unitPrice').equals(match.unitPrice))
      throw new Refusal(
        '1480',
        `Credit Note request is illegal! goodsDetails[${i}]: unitPrice ${line.unitPrice} is not the original invoice's ${match.unitPrice}.`,
      );
    if (String(line.taxRate) !== match.taxRate)
      throw new Refusal(
        '1480',
        `Credit Note request is illegal! goodsDetails[${i}]: taxRate ${line.taxRate} is not the original invoice's ${match.taxRate}.`,
      );
    if (dec(line.qty, 'qty').abs().greaterThan(match.remainingQty))
      throw new Refusal(
        '1434',
        `goodsDetails[${i}]: qty cannot be greater than the remaining quantity ${match.remainingQty} of the original line!`,
      );
    if (dec(line.total, 'total').abs().greaterThan(match.remainingTotal))
      throw new Refusal(
        '1460',
        `goodsDetails[${i}]: total cannot be greater than the remaining amount ${match.remainingTotal} of the original line!`,
      );
  });
  const referenceNo = `21${digits(11)}`;
  await tx
    .insertInto('efris_applications')
    .values({
      tin,
      reference_no: referenceNo,
      seller_reference: sellerReference,
      ori_invoice_id: original.invoice_id,
      ori_fdn: original.fdn,
      reason_code: String(content.reasonCode),
      currency: original.currency,
      lines: JSON.stringify(content.goodsDetails),
      gross_amount: gross.toFixed(),
      tax_amount: tax.toFixed(),
      approve_status: '102',
    })
    .execute();
  return { referenceNo };
}

/** T111: applications by reference, approving those that waited long enough (see the header). */
async function queryApplications(tx: SimTx, tin: string, content: Record<string, any>): Promise<unknown> {
  let q = tx
    .selectFrom('efris_applications')
    .selectAll()
    .where('tin', '=', tin)
    .orderBy('submitted_at', 'desc')
    .limit(Math.min(Number(content.pageSize ?? 10) || 10, 100))
    .forUpdate();
  if (content.referenceNo) q = q.where('reference_no', '=', String(content.referenceNo));
  if (content.sellersReferenceNo) q = q.where('seller_reference', '=', String(content.sellersReferenceNo));
  const statuses = String(content.approveStatus ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const rows = await q.execute();
  const records = [];
  for (const row of rows) {
    let current = row;
    if (row.approve_status === '102' && Date.now() - row.submitted_at.getTime() >= APPROVAL_DELAY_MS)
      current = await decide(tx, tin, row);
    if (statuses.length > 0 && !statuses.includes(current.approve_status)) continue;
    records.push({
      id: current.reference_no,
      referenceNo: current.reference_no,
      sellersReferenceNo: current.seller_reference,
      approveStatus: current.approve_status,
      invoiceNo: current.credit_fdn ?? '',
      oriInvoiceNo: current.ori_fdn,
      oriInvoiceId: current.ori_invoice_id,
      grossAmount: new Decimal(current.gross_amount).toFixed(),
      currency: current.currency,
      applicationTime: current.submitted_at.toISOString(),
      remark: current.remark ?? '',
    });
  }
  return {
    page: { pageNo: '1', pageSize: String(records.length), totalSize: String(records.length), pageCount: '1' },
    records,
  };
}

/** Approves an application (its credit note fiscalised, the original's lines reduced) or rejects it when they no longer cover it. */
async function decide(
  tx: SimTx,
  tin: string,
  row: Selectable<Tables['efris_applications']>,
): Promise<Selectable<Tables['efris_applications']>> {
  const original = await tx
    .selectFrom('efris_documents')
    .selectAll()
    .where('tin', '=', tin)
    .where('invoice_id', '=', row.ori_invoice_id)
    .forUpdate()
    .executeTakeFirstOrThrow();
  const kept = original.lines as KeptLine[];
  const credited = row.lines as Record<string, string>[];
  const short = credited.find((line) => {
    const match = kept.find((k) => k.itemCode === String(line.itemCode))!;
    return (
      new Decimal(String(line.qty)).abs().greaterThan(match.remainingQty) ||
      new Decimal(String(line.total)).abs().greaterThan(match.remainingTotal)
    );
  });
  if (short) {
    const remark = `3163 Insufficient remaining quantity of item ${short.itemCode} on invoice ${original.fdn}.`;
    await tx
      .updateTable('efris_applications')
      .set({ approve_status: '103', remark })
      .where('tin', '=', tin)
      .where('reference_no', '=', row.reference_no)
      .execute();
    return { ...row, approve_status: '103', remark };
  }
  const reduced = kept.map((k) => {
    const line = credited.find((c) => String(c.itemCode) === k.itemCode);
    return line
      ? {
          ...k,
          remainingQty: new Decimal(k.remainingQty).minus(new Decimal(String(line.qty)).abs()).toFixed(),
          remainingTotal: new Decimal(k.remainingTotal).minus(new Decimal(String(line.total)).abs()).toFixed(),
        }
      : k;
  });
  await tx
    .updateTable('efris_documents')
    .set({ lines: JSON.stringify(reduced), is_refund: 1 })
    .where('tin', '=', tin)
    .where('invoice_id', '=', original.invoice_id)
    .execute();
  const fdn = await nextFdn(tx);
  await tx
    .insertInto('efris_documents')
    .values({
      tin,
      invoice_id: digits(19),
      fdn,
      antifake_code: digits(20),
      kind: 'credit_note',
      reference_no: row.seller_reference,
      currency: row.currency,
      buyer_name: original.buyer_name,
      gross_amount: row.gross_amount,
      tax_amount: row.tax_amount,
      lines: JSON.stringify(credited),
      original_fdn: original.fdn,
    })
    .execute();
  await tx
    .updateTable('efris_applications')
    .set({ approve_status: '101', credit_fdn: fdn })
    .where('tin', '=', tin)
    .where('reference_no', '=', row.reference_no)
    .execute();
  return { ...row, approve_status: '101', credit_fdn: fdn };
}

async function voidApplication(tx: SimTx, tin: string, content: Record<string, any>): Promise<unknown> {
  const row = await tx
    .selectFrom('efris_applications')
    .selectAll()
    .where('tin', '=', tin)
    .where('reference_no', '=', String(content.referenceNo ?? ''))
    .forUpdate()
    .executeTakeFirst();
  if (!row) throw new Refusal('1400', 'The credit note application does not exist!');
  if (row.approve_status === '104') throw new Refusal('313', 'The application has been voided!');
  if (row.approve_status !== '102')
    throw new Refusal(
      '1480',
      `Credit Note request is illegal! Application ${row.reference_no} is ${row.approve_status === '101' ? 'approved' : 'rejected'} and cannot be voided.`,
    );
  await tx
    .updateTable('efris_applications')
    .set({ approve_status: '104' })
    .where('tin', '=', tin)
    .where('reference_no', '=', row.reference_no)
    .execute();
  return { referenceNo: row.reference_no, approveStatus: '104' };
}

/** How many fiscalised invoices the taxpayer holds, all or with one seller reference number. */
export async function efrisDocumentCount(db: Db, tin: string, referenceNo?: string): Promise<number> {
  let q = simulatorDb<Tables>(db)
    .selectFrom('efris_documents')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('tin', '=', tin)
    .where('kind', '=', 'invoice');
  if (referenceNo !== undefined) q = q.where('reference_no', '=', referenceNo);
  return Number((await q.executeTakeFirstOrThrow()).n);
}
