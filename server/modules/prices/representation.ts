// The exact JSON of a price (spec: components/schemas/Price).
import type { components } from '../../../generated/api-types.js';
import { formatAmount } from '../../domain/money.js';
import type { PriceRow } from './repository.js';

export type Price = components['schemas']['Price'];

export function toPrice(row: PriceRow): Price {
  return {
    id: row.id,
    productId: row.product_id,
    productCode: row.product_code,
    priceGroup: row.price_group,
    unit: row.unit as Price['unit'],
    unitPrice: { amount: formatAmount(row.amount, row.currency), currency: row.currency },
    validFrom: row.valid_from,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
