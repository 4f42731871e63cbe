// The exact JSON of a sales order (spec: components/schemas/Order). Amounts are written with the currency's minor
// units; the tax rate with its two decimals.
import type { components } from '../../../generated/api-types.js';
import { formatAmount } from '../../domain/money.js';
import type { OrderStatus } from './lifecycle.js';
import type { OrderLineRow, OrderRow } from './repository.js';

export type Order = components['schemas']['Order'];

export function toOrder(row: OrderRow, lines: OrderLineRow[], externalCodes: Record<string, string>): Order {
  const money = (amount: string) => ({ amount: formatAmount(amount, row.currency), currency: row.currency });
  return {
    id: row.id,
    number: row.number,
    status: row.status as OrderStatus,
    customerId: row.customer_id,
    orderDate: row.order_date,
    currency: row.currency,
    salespersonId: row.salesperson_id,
    locationId: row.location_id,
    subtotal: money(row.subtotal),
    discount: money(row.discount),
    tax: money(row.tax),
    total: money(row.total),
    note: row.note,
    cancelReason: row.cancel_reason,
    cancelledAt: row.cancelled_at === null ? null : row.cancelled_at.toISOString(),
    lines: lines.map((line) => ({
      lineNumber: line.line_number,
      productId: line.product_id,
      unit: line.unit as Order['lines'][number]['unit'],
      quantity: line.quantity,
      unitPrice: money(line.unit_price),
      discount: money(line.discount),
      taxRate: Number(line.tax_rate).toFixed(2),
      amount: money(line.amount),
      tax: money(line.tax),
    })),
    externalCodes,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
