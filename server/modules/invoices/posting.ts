// An invoice as the external systems take it (its posting subject): a QuickBooks Invoice, and an EFRIS invoice
// (T109) paid as it was at issue (a payment recorded with it) or on credit. Free lines go to the accounting system
// at zero; the fiscal system gets only lines with a value. Its block writers send `invoice.updated`.
import { getAccounts } from '../../platform/access/accounts.js';
import { Decimal } from 'decimal.js';
import { sql } from 'kysely';
import type { Tx } from '../../platform/database/transaction.js';
import { recordEvent } from '../../platform/events/outbox.js';
import type { AccountingInvoice, FiscalInvoice, FiscalPaymentMode } from '../../connectors/types.js';
import type { FiscalBlock, PostingBlock, PostingSubject } from '../postings/subject.js';
import { INVOICE, INVOICE_UPDATED } from './documents.js';

/** The fiscal system's payment mode of each of the service's methods (all five are among EFRIS's payWay codes). */
export const FISCAL_MODE: Record<string, FiscalPaymentMode> = {
  cash: 'cash',
  mobile_money: 'mobile_money',
  cheque: 'cheque',
  bank_transfer: 'bank_transfer',
  card: 'card',
};

/** Percent as stored (18.00) to the fiscal system's rate ('0.18'). */
export const fiscalRate = (percent: string) => new Decimal(percent).dividedBy(100).toFixed();

async function readInvoice(tx: Tx, organizationId: string, id: string) {
  const invoice = await tx
    .selectFrom('invoices as i')
    .innerJoin('customers as c', (join) =>
      join.onRef('c.organization_id', '=', 'i.organization_id').onRef('c.id', '=', 'i.customer_id'),
    )
    .select([
      'i.number',
      'i.currency',
      'i.tax',
      'i.total',
      'i.subtotal',
      'i.discount',
      'i.customer_id',
      'i.created_at',
      'c.name as customer_name',
      'c.tax_id',
    ])
    // The issue date as its calendar string: pg would make a DATE a Date at local midnight, which can shift the day.
    .select(sql<string>`to_char(i.issue_date, 'YYYY-MM-DD')`.as('issue_day'))
    .where('i.organization_id', '=', organizationId)
    .where('i.id', '=', id)
    .executeTakeFirstOrThrow();
  const lines = await tx
    .selectFrom('invoice_lines as l')
    .innerJoin('products as p', (join) =>
      join.onRef('p.organization_id', '=', 'l.organization_id').onRef('p.id', '=', 'l.product_id'),
    )
    .select([
      'l.line_number',
      'l.kind',
      'l.product_id',
      'l.quantity',
      'l.unit_price',
      'l.discount',
      'l.tax_rate',
      'l.amount',
      'l.tax',
      'p.name',
      'p.product_code',
    ])
    .where('l.organization_id', '=', organizationId)
    .where('l.invoice_id', '=', id)
    .orderBy('l.line_number')
    .execute();
  return { invoice, lines };
}

export const invoicePosting: PostingSubject = {
  async accounting(tx, organizationId, id) {
    const { invoice, lines } = await readInvoice(tx, organizationId, id);
    const document: AccountingInvoice = {
      docNumber: invoice.number,
      txnDate: invoice.issue_day,
      currency: invoice.currency,
      customer: { id: invoice.customer_id, name: invoice.customer_name },
      lines: lines.map((line) => ({
        itemId: line.product_id,
        description: line.name,
        quantity: String(line.quantity),
        unitPrice: String(line.unit_price),
        amount: String(line.amount),
        taxAmount: String(line.tax),
      })),
      taxTotal: String(invoice.tax),
      total: String(invoice.total),
      incomeAccount: (await getAccounts(tx, organizationId)).salesAccount,
    };
    return { kind: 'call', call: (connector, requestId) => connector.postInvoice(requestId, document) };
  },

  async fiscal(tx, organizationId, id) {
    const { invoice, lines } = await readInvoice(tx, organizationId, id);
    const valued = lines.filter((line) => new Decimal(line.amount).greaterThan(0));
    if (valued.length === 0)
      return { kind: 'skip', reason: 'The invoice has no line with a value: there is nothing to fiscalise.' };
    // How it was paid at issue: the receipts recorded in its own transaction (a cash sale's payment block; the same
    // now() stamps both), the rest on credit.
    const paidAtIssue = await tx
      .selectFrom('payments')
      .select(['method', 'amount'])
      .where('organization_id', '=', organizationId)
      .where('invoice_id', '=', id)
      .where('created_at', '=', invoice.created_at)
      .execute();
    const paid = paidAtIssue.reduce((sum, payment) => sum.plus(payment.amount), new Decimal(0));
    const onCredit = new Decimal(invoice.total).minus(paid);
    const document: FiscalInvoice = {
      referenceNo: invoice.number,
      issuedAt: invoice.created_at.toISOString(),
      currency: invoice.currency,
      buyer: { name: invoice.customer_name, tin: invoice.tax_id },
      lines: valued.map((line) => ({
        itemCode: line.product_code,
        itemName: line.name,
        quantity: String(line.quantity),
        unitPrice: String(line.unit_price),
        total: new Decimal(line.amount).plus(line.tax).toFixed(),
        tax: String(line.tax),
        taxRate: fiscalRate(String(line.tax_rate)),
      })),
      netAmount: new Decimal(invoice.total).minus(invoice.tax).toFixed(),
      taxAmount: String(invoice.tax),
      grossAmount: String(invoice.total),
      payments: [
        ...paidAtIssue.map((payment) => ({ mode: FISCAL_MODE[payment.method]!, amount: String(payment.amount) })),
        ...(onCredit.greaterThan(0) ? [{ mode: 'credit' as const, amount: onCredit.toFixed() }] : []),
      ],
    };
    return {
      kind: 'call',
      call: async (connector) => {
        const result = await connector.submitInvoice(document);
        return result.ok ? { ok: true, value: { state: 'fiscalised', receipt: result.value } } : result;
      },
    };
  },

  async setPosting(tx, organizationId, id, block: PostingBlock) {
    await tx
      .updateTable('invoices')
      .set((eb) => ({
        posting_status: block.status,
        accounting_ref: block.accountingRef,
        accounting_type: block.accountingType,
        posting_reason: block.reason,
        updated_at: eb.fn<Date>('now'),
      }))
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .execute();
    await recordEvent(tx, organizationId, INVOICE_UPDATED, INVOICE, id);
  },

  async setFiscal(tx, organizationId, id, block: FiscalBlock) {
    await tx
      .updateTable('invoices')
      .set((eb) => ({
        fiscal_status: block.status === 'submitted' ? 'pending' : block.status === 'rejected' ? 'failed' : block.status,
        fiscal_fdn: block.receipt?.fdn ?? null,
        fiscal_verification_code: block.receipt?.verificationCode ?? null,
        fiscal_qr_code: block.receipt?.qrCode ?? null,
        fiscal_id: block.receipt?.fiscalId ?? null,
        fiscalised_at: block.receipt ? new Date(block.receipt.fiscalisedAt) : null,
        updated_at: eb.fn<Date>('now'),
      }))
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .execute();
    await recordEvent(tx, organizationId, INVOICE_UPDATED, INVOICE, id);
  },
};
