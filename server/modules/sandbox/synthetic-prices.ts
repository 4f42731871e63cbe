// Prices of the sandbox catalogue: one per beverage, price group and selling unit, in whole shillings. WHOLESALE
// pays the base case price (moved a little by the seed), RETAIL-B 4 % more, RETAIL-A 8 % more; a single bottle
// or piece costs its share of the case plus 10 %. Empties are not priced: their deposit is what they cost.
import { PRICE_GROUPS } from './synthetic-outlets.js';
import { SANDBOX_SEED, seededRandom } from './seeded-random.js';
import type { SyntheticProduct } from './synthetic-products.js';

export interface SyntheticPrice {
  product_code: string;
  price_group: string;
  unit: string;
  amount: string;
  valid_from: string;
}

export const PRICES_VALID_FROM = '2026-01-01';
const MARKUP: Record<string, number> = { WHOLESALE: 1, 'RETAIL-B': 1.04, 'RETAIL-A': 1.08 };

export function syntheticPrices(products: SyntheticProduct[], seed = SANDBOX_SEED + 1): SyntheticPrice[] {
  const random = seededRandom(seed);
  return products
    .filter((product) => !product.is_empty)
    .flatMap((product) => {
      const casePrice = product.baseCasePrice * (0.97 + random() * 0.06);
      return PRICE_GROUPS.flatMap((group) =>
        product.selling_units.map((unit) => {
          const perCase = casePrice * MARKUP[group]!;
          const amount = unit === 'case' ? roundTo(perCase, 500) : roundTo((perCase / product.pack_size) * 1.1, 50);
          return {
            product_code: product.product_code,
            price_group: group,
            unit,
            amount: String(amount),
            valid_from: PRICES_VALID_FROM,
          };
        }),
      );
    });
}

function roundTo(value: number, step: number): number {
  return Math.round(value / step) * step;
}
