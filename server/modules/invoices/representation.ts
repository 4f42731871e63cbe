// The JSON of an invoice, exactly as the spec's Invoice schema says: money as { amount, currency } with the
// currency's minor units, dates as YYYY-MM-DD, timestamps in UTC.
import { Decimal } from 'decimal.js';
import type { components } from '../../../generated/api-types.js';
import { formatAmount } from '../../domain/money.js';
import { toFiscalBlock, toPostingBlock } from '../postings/blocks.js';
import type { InvoiceLineRow, InvoiceRow } from './repository.js';

export type Invoice = components['schemas']['Invoice'];

const money = (amount: string, currency: string) => ({ amount: formatAmount(amount, currency), currency });

export function toInvoice(
  row: InvoiceRow,
  lines: InvoiceLineRow[],
  linesTruncated: boolean,
  externalCodes: Record<string, string>,
): Invoice {
  const currency = row.currency;
  return {
    id: row.id,
    number: row.number,
    customerId: row.customer_id,
    status: row.status as Invoice['status'],
    issueDate: row.issue_date,
    dueDate: row.due_date,
    currency,
    locationId: row.location_id,
    tripId: row.trip_id,
    salespersonId: row.salesperson_id,
    orderId: row.order_id,
    subtotal: money(row.subtotal, currency),
    discount: money(row.discount, currency),
    tax: money(row.tax, currency),
    total: money(row.total, currency),
    balance: money(row.balance, currency),
    voidReason: row.void_reason,
    voidedAt: row.voided_at === null ? null : row.voided_at.toISOString(),
    fiscal: toFiscalBlock(row),
    posting: toPostingBlock(row),
    lines: lines.map((line) => ({
      lineNumber: line.line_number,
      kind: line.kind as Invoice['lines'][number]['kind'],
      productId: line.product_id,
      unit: line.unit as Invoice['lines'][number]['unit'],
      quantity: line.quantity,
      unitPrice: money(line.unit_price, currency),
      discount: money(line.discount, currency),
      // A percentage as written: trailing zeros dropped (18.00 -> 18, 12.50 -> 12.5).
      taxRate: new Decimal(line.tax_rate).toString(),
      amount: money(line.amount, currency),
      tax: money(line.tax, currency),
    })),
    linesTruncated,
    externalCodes,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
