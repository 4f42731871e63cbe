// The JSON of a credit note, exactly as the spec's CreditNote schema says: money as { amount, currency } with the
// currency's minor units, dates as YYYY-MM-DD, timestamps in UTC; the customer's phone and taxId only for an actor
// with customers:pii.
import { toFiscalBlock, toPostingBlock } from '../postings/blocks.js';
import { Decimal } from 'decimal.js';
import type { components } from '../../../generated/api-types.js';
import type { Actor } from '../../platform/access/actor.js';
import { formatAmount } from '../../domain/money.js';
import type { CreditNoteParts, CreditNoteRow } from './repository.js';

export type CreditNote = components['schemas']['CreditNote'];

/** The scope that unlocks a customer's personal fields. */
const PII_SCOPE = 'customers:pii';

export function toCreditNote(row: CreditNoteRow, parts: CreditNoteParts, actor: Actor): CreditNote {
  const currency = row.currency;
  const money = (amount: string) => ({ amount: formatAmount(amount, currency), currency });
  const customer: CreditNote['customer'] = { id: row.customer_id, name: row.customer_name, code: row.customer_code };
  if (actor.scopes.has(PII_SCOPE)) {
    customer.phone = row.customer_phone;
    customer.taxId = row.customer_tax_id;
  }
  return {
    id: row.id,
    creditNoteNumber: row.number,
    status: row.status as CreditNote['status'],
    type: row.type as CreditNote['type'],
    customer,
    invoiceId: row.invoice_id,
    returnId: row.return_id,
    tripId: row.trip_id,
    issueDate: row.issue_date,
    reason: row.reason,
    notes: row.notes,
    lines: parts.lines.map((line) => ({
      lineNumber: line.line_number,
      type: line.type as CreditNote['lines'][number]['type'],
      product:
        line.product_id === null ? null : { id: line.product_id, code: line.product_code!, name: line.product_name! },
      description: line.description,
      quantity: new Decimal(line.quantity).toNumber(),
      unitPrice: money(line.unit_price),
      discount: money(line.discount),
      taxRate: new Decimal(line.tax_rate).toNumber(),
      tax: money(line.tax),
      amount: money(line.amount),
    })),
    linesTruncated: parts.linesTruncated,
    subtotal: money(row.subtotal),
    discount: money(row.discount),
    tax: money(row.tax),
    total: money(row.total),
    remainingAmount: money(row.remaining_amount),
    cashRefundAmount: row.cash_refund_amount === null ? null : money(row.cash_refund_amount),
    currency,
    // An application lowers the invoice's balance: the entries are negative, the application's amount is not.
    applications: parts.applications.map((a) => ({
      invoiceId: a.invoice_id,
      invoiceNumber: a.invoice_number,
      amount: money(new Decimal(a.amount).negated().toFixed()),
      date: a.date,
      refundPaymentId: null,
    })),
    fiscal: toFiscalBlock(row),
    posting: toPostingBlock(row),
    cancelReason: row.cancel_reason,
    cancelledAt: row.cancelled_at === null ? null : row.cancelled_at.toISOString(),
    externalCodes: parts.externalCodes,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
