// The rules of products: codes are unique (see repository.ts); the empties a product carries are products of
// the organisation that are empties; a deposit price is only for empties, in the base currency; a product that
// others carry as an empty stays one. Every change writes its event in the same transaction (the shared base).
import type { components } from '../../../generated/api-types.js';
import type { Actor } from '../../platform/access/actor.js';
import type { Tx } from '../../platform/database/transaction.js';
import { ApiError, type FieldError } from '../../platform/errors/api-error.js';
import { acceptAmount } from '../../domain/money.js';
import { resourceService, type ResourceService } from '../../platform/resources/service.js';
import { toProduct, type Product } from './representation.js';
import type { ColumnsOf } from '../../platform/resources/table.js';
import { findProductsByCode, productsCarrying, productTable, type StoredEmpty } from './repository.js';

type ProductFields = components['schemas']['ProductFields'];

type ProductColumns = ColumnsOf<'products'>;

const base = resourceService({
  table: productTable,
  idPrefix: 'prd',
  events: { created: 'product.created', updated: 'product.updated' },
  defaults: {
    brand: null,
    category: null,
    status: 'active',
    tracks_stock: true,
    tax_rate: '0',
    is_empty: false,
    deposit_amount: null,
    deposit_currency: null,
    empties: [],
  },
  requiredOnCreate: ['productCode', 'name', 'packSize', 'sellingUnits'],
  toColumns,
  represent: (row, codes) => toProduct(row, codes),
});

/**
 * The base service, with the rules that concern the product as it is after the change (the fields of a partial
 * update alone cannot tell): checked inside the write's transaction, so a refusal rolls the change back.
 */
export const products: ResourceService<ProductFields, Product> = {
  ...base,
  async create(tx, actor, fields, externalCodes) {
    return checkResult(tx, actor, fields, await base.create(tx, actor, fields, externalCodes));
  },
  async change(tx, actor, id, fields) {
    return checkResult(tx, actor, fields, await base.change(tx, actor, id, fields));
  },
  async upsertByCode(tx, actor, system, code, fields) {
    const result = await base.upsertByCode(tx, actor, system, code, fields);
    return { created: result.created, body: await checkResult(tx, actor, fields, result.body) };
  },
};

async function checkResult(tx: Tx, actor: Actor, fields: ProductFields, product: Product): Promise<Product> {
  if (!product.isEmpty && product.depositPrice !== null) {
    throw new ApiError(
      'business_rule',
      `Only empties carry a deposit price; product ${product.productCode} is not an empty (isEmpty is false).`,
      [{ field: '/depositPrice', code: 'business_rule', message: 'only an empty (isEmpty true) has a deposit price' }],
    );
  }
  // Only a write that sets isEmpty false can turn an empty into a full product (a new record is carried by none).
  if (fields.isEmpty === false) {
    const carriers = await productsCarrying(tx, actor.organization.id, product.id);
    if (carriers.length > 0) {
      throw new ApiError(
        'business_rule',
        `Product ${product.productCode} is carried as an empty by ${carriers.join(', ')}, so it must stay an empty.`,
        [{ field: '/isEmpty', code: 'business_rule', message: `carried as an empty by ${carriers.join(', ')}` }],
      );
    }
  }
  return product;
}

/** The columns a set of fields writes, after checking tax rate, deposit money and the empties' references. */
async function toColumns(tx: Tx, actor: Actor, fields: ProductFields): Promise<Partial<ProductColumns>> {
  const columns: Partial<ProductColumns> = {};
  if (fields.productCode !== undefined) columns.product_code = fields.productCode;
  if (fields.name !== undefined) columns.name = fields.name;
  if (fields.brand !== undefined) columns.brand = fields.brand;
  if (fields.category !== undefined) columns.category = fields.category;
  if (fields.status !== undefined) columns.status = fields.status;
  if (fields.packSize !== undefined) columns.pack_size = fields.packSize;
  if (fields.sellingUnits !== undefined) columns.selling_units = fields.sellingUnits;
  if (fields.tracksStock !== undefined) columns.tracks_stock = fields.tracksStock;
  if (fields.taxRate !== undefined) columns.tax_rate = acceptTaxRate(fields.taxRate);
  if (fields.isEmpty !== undefined) columns.is_empty = fields.isEmpty;
  if (fields.depositPrice !== undefined) {
    columns.deposit_amount =
      fields.depositPrice === null
        ? null
        : acceptAmount(fields.depositPrice, '/depositPrice', actor.organization.baseCurrency).toString();
    columns.deposit_currency = fields.depositPrice === null ? null : fields.depositPrice.currency;
  }
  if (fields.empties !== undefined) columns.empties = await resolveEmpties(tx, actor, fields.empties);
  return columns;
}

/** A percentage with at most 2 decimals, as the NUMERIC(5,2) text it is stored as. */
function acceptTaxRate(rate: number): string {
  const hundredths = Math.round(rate * 100);
  if (Math.abs(hundredths - rate * 100) > 1e-6) {
    throw new ApiError('invalid_field', `A tax rate has at most 2 decimals; got ${rate}.`, [
      { field: '/taxRate', code: 'invalid_field', message: 'must have at most 2 decimals' },
    ]);
  }
  return (hundredths / 100).toFixed(2);
}

/** The empties by product id; every code must name an empty of the organisation (all problems listed at once). */
async function resolveEmpties(
  tx: Tx,
  actor: Actor,
  empties: NonNullable<ProductFields['empties']>,
): Promise<StoredEmpty[]> {
  if (empties.length === 0) return [];
  const found = await findProductsByCode(
    tx,
    actor.organization.id,
    empties.map((empty) => empty.productCode),
  );
  const missing: FieldError[] = [];
  const notEmpties: FieldError[] = [];
  empties.forEach((empty, index) => {
    const product = found.get(empty.productCode);
    const field = `/empties/${index}/productCode`;
    if (!product)
      missing.push({
        field,
        code: 'product_not_found',
        message: `no product ${empty.productCode} in this organisation`,
      });
    else if (!product.is_empty)
      notEmpties.push({
        field,
        code: 'business_rule',
        message: `product ${empty.productCode} is not an empty (isEmpty is false)`,
      });
  });
  if (missing.length > 0) {
    throw new ApiError(
      'product_not_found',
      `The empties name products that do not exist: ${missing.map((e) => e.field).join(', ')}.`,
      [...missing, ...notEmpties],
    );
  }
  if (notEmpties.length > 0) {
    throw new ApiError(
      'business_rule',
      `The empties must be products with isEmpty true: ${notEmpties.map((e) => e.field).join(', ')}.`,
      notEmpties,
    );
  }
  return empties.map((empty) => ({
    productId: found.get(empty.productCode)!.id,
    quantity: empty.quantity,
    per: empty.per,
  }));
}
