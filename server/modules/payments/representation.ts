// The JSON of a receipt, exactly as the spec's Payment schema says: money as { amount, currency } with the
// currency's minor units, the date as YYYY-MM-DD, timestamps in UTC.
import type { components } from '../../../generated/api-types.js';
import { formatAmount } from '../../domain/money.js';
import { toPostingBlock } from '../postings/blocks.js';
import type { PaymentRow } from './repository.js';

export type Payment = components['schemas']['Payment'];

export function toPayment(row: PaymentRow): Payment {
  return {
    id: row.id,
    number: row.number,
    receiptGroupId: row.receipt_group_id,
    status: row.status as Payment['status'],
    customerId: row.customer_id,
    method: row.method as Payment['method'],
    invoiceId: row.invoice_id,
    amount: { amount: formatAmount(row.amount, row.currency), currency: row.currency },
    paymentDate: row.payment_date,
    reference: row.reference,
    tripId: row.trip_id,
    salespersonId: row.salesperson_id,
    reversalReason: row.reversal_reason,
    reversedAt: row.reversed_at === null ? null : row.reversed_at.toISOString(),
    posting: toPostingBlock(row),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
