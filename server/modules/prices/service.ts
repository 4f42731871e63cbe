// The rules of prices: each item names a product of the organisation by code, in one of its selling units,
// priced in the base currency, at most once per batch. A batch is all or nothing, and every problem of every
// item is reported at once so that a partner can fix its price list in one round.
import type { components } from '../../../generated/api-types.js';
import type { Actor } from '../../platform/access/actor.js';
import type { Db, Tx } from '../../platform/database/transaction.js';
import { ApiError, type FieldError } from '../../platform/errors/api-error.js';
import type { ErrorCode } from '../../platform/errors/catalogue.js';
import type { ListRequest, Page } from '../../platform/lists/page.js';
import type { Filter } from '../../platform/lists/page.js';
import { acceptAmount } from '../../domain/money.js';
import { findRow, listRows } from '../../platform/resources/table.js';
import { findProductsByCode } from '../products/repository.js';
import { toPrice, type Price } from './representation.js';
import { priceTable, upsertPrices, type PriceToWrite } from './repository.js';
import { dateProblem } from '../../platform/dates.js';

type PriceItem = components['schemas']['PricesUpsert']['items'][number];

/** When items have problems of several kinds, the answer's code is the first kind present. */
const PRECEDENCE: readonly ErrorCode[] = [
  'invalid_field',
  'product_not_found',
  'currency_not_supported',
  'business_rule',
];

export async function setPrices(tx: Tx, actor: Actor, items: readonly PriceItem[]): Promise<Price[]> {
  const products = await findProductsByCode(
    tx,
    actor.organization.id,
    items.map((item) => item.productCode),
  );
  const problems: FieldError[] = [];
  const firstOfKey = new Map<string, number>();
  const toWrite: PriceToWrite[] = [];

  items.forEach((item, index) => {
    const at = `/items/${index}`;
    const product = products.get(item.productCode);
    if (!product) {
      problems.push({
        field: `${at}/productCode`,
        code: 'product_not_found',
        message: `no product ${item.productCode} in this organisation`,
      });
    } else if (!product.selling_units.includes(item.unit)) {
      problems.push({
        field: `${at}/unit`,
        code: 'business_rule',
        message: `product ${item.productCode} is sold in ${product.selling_units.join(', ')}, not ${item.unit}`,
      });
    }
    let amount: string | undefined;
    try {
      amount = acceptAmount(item.unitPrice, `${at}/unitPrice`, actor.organization.baseCurrency).toString();
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      problems.push(...(error.errors ?? []));
    }
    const invalidDate = dateProblem(item.validFrom);
    if (invalidDate) problems.push({ field: `${at}/validFrom`, code: 'invalid_field', message: invalidDate });
    const key = JSON.stringify([item.productCode, item.priceGroup, item.unit]);
    const first = firstOfKey.get(key);
    if (first === undefined) {
      firstOfKey.set(key, index);
    } else {
      const message = `the same productCode, priceGroup and unit as /items/${first}`;
      if (!problems.some((p) => p.field === `/items/${first}` && p.code === 'business_rule')) {
        problems.push({
          field: `/items/${first}`,
          code: 'business_rule',
          message: `the same productCode, priceGroup and unit as /items/${index}`,
        });
      }
      problems.push({ field: at, code: 'business_rule', message });
    }
    if (product && amount !== undefined) {
      toWrite.push({
        productId: product.id,
        productCode: product.product_code,
        priceGroup: item.priceGroup,
        unit: item.unit,
        amount,
        validFrom: item.validFrom,
      });
    }
  });

  if (problems.length > 0) {
    problems.sort((a, b) => itemIndex(a) - itemIndex(b)); // stable: an item's problems keep their order
    const code = PRECEDENCE.find((candidate) => problems.some((p) => p.code === candidate)) ?? 'business_rule';
    const rows = new Set(problems.map((p) => p.field.split('/')[2]));
    throw new ApiError(
      code,
      `${rows.size} of ${items.length} items cannot be set, so none was: see errors[].`,
      problems,
    );
  }
  return (await upsertPrices(tx, actor.organization.id, actor.organization.baseCurrency, toWrite)).map(toPrice);
}

function itemIndex(problem: FieldError): number {
  return Number(problem.field.split('/')[2]);
}

export async function getPrice(db: Db, actor: Actor, id: string): Promise<Price> {
  const row = await findRow(db, priceTable, actor.organization.id, id);
  if (!row) throw new ApiError('not_found', `No price ${id} in this organisation.`);
  return toPrice(row);
}

export async function listPrices(
  db: Db,
  actor: Actor,
  request: ListRequest,
  filters: Record<string, Filter | undefined>,
): Promise<Page<Price>> {
  const page = await listRows(db, priceTable, actor.organization.id, request, filters);
  return { ...page, rows: page.rows.map(toPrice) };
}
