// The exact JSON of a product (spec: components/schemas/Product).
import type { components } from '../../../generated/api-types.js';
import { formatAmount } from '../../domain/money.js';
import type { ProductRow } from './repository.js';

export type Product = components['schemas']['Product'];

export function toProduct(row: ProductRow, externalCodes: Record<string, string>): Product {
  return {
    id: row.id,
    productCode: row.product_code,
    name: row.name,
    brand: row.brand,
    category: row.category,
    status: row.status as Product['status'],
    packSize: row.pack_size,
    sellingUnits: row.selling_units as Product['sellingUnits'],
    tracksStock: row.tracks_stock,
    taxRate: Number(row.tax_rate),
    isEmpty: row.is_empty,
    depositPrice:
      row.deposit_amount === null
        ? null
        : { amount: formatAmount(row.deposit_amount, row.deposit_currency!), currency: row.deposit_currency! },
    empties: row.empties_view.map((empty) => ({
      productId: empty.productId,
      productCode: empty.productCode,
      quantity: empty.quantity,
      per: empty.per,
    })),
    externalCodes,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
