// The JSON of a return, exactly as the spec's Return schema says.
import { Decimal } from 'decimal.js';
import type { components } from '../../../generated/api-types.js';
import { formatAmount } from '../../domain/money.js';
import type { ReturnParts, ReturnRow } from './repository.js';

export type SalesReturn = components['schemas']['Return'];

export function toReturn(row: ReturnRow, parts: ReturnParts): SalesReturn {
  const currency = row.currency;
  const money = (amount: string) => ({ amount: formatAmount(amount, currency), currency });
  return {
    id: row.id,
    number: row.number,
    status: row.status as SalesReturn['status'],
    customerId: row.customer_id,
    invoiceId: row.invoice_id,
    creditNoteId: parts.creditNoteId,
    locationId: row.location_id,
    badStockLocationId: row.bad_stock_location_id,
    tripId: row.trip_id,
    returnDate: row.return_date,
    reason: row.reason,
    currency,
    subtotal: money(row.subtotal),
    discount: money(row.discount),
    tax: money(row.tax),
    total: money(row.total),
    lines: parts.lines.map((line) => ({
      lineNumber: line.line_number,
      invoiceLineNumber: line.invoice_line_number,
      productId: line.product_id,
      unit: line.unit as SalesReturn['lines'][number]['unit'],
      quantity: line.quantity,
      condition: line.condition as SalesReturn['lines'][number]['condition'],
      unitPrice: money(line.unit_price),
      discount: money(line.discount),
      taxRate: new Decimal(line.tax_rate).toNumber(),
      amount: money(line.amount),
      tax: money(line.tax),
    })),
    linesTruncated: parts.linesTruncated,
    externalCodes: parts.externalCodes,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
