// Money is a decimal string on the wire, NUMERIC in Postgres and Decimal in code: never a float.
import { Decimal } from 'decimal.js';
import { ApiError } from '../platform/errors/api-error.js';

export interface Money {
  amount: string;
  currency: string;
}

const MINOR_UNITS = new Map<string, number>();
/** Amounts are stored as NUMERIC(18, 4): 14 digits before the point. */
export const MAX_AMOUNT = new Decimal('1e14');

/** Digits after the decimal point of a currency (ISO 4217 minor units, from the runtime's CLDR data; cached,
 * since building an Intl.NumberFormat costs more than formatting a whole record). */
export function minorUnits(currency: string): number {
  let digits = MINOR_UNITS.get(currency);
  if (digits === undefined) {
    try {
      digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
    } catch {
      digits = 2;
    }
    MINOR_UNITS.set(currency, digits);
  }
  return digits;
}

/** The wire form: exactly the currency's minor units (`500000` UGX, `12.50` USD). */
export function formatAmount(amount: Decimal.Value, currency: string): string {
  return new Decimal(amount).toFixed(minorUnits(currency));
}

/**
 * Checks an incoming amount: in the organisation's base currency (422 currency_not_supported), not negative and
 * with no more decimals than the currency has (400 invalid_field). `field` is the JSON pointer of the money object.
 */
export function acceptAmount(money: Money, field: string, baseCurrency: string): Decimal {
  if (money.currency !== baseCurrency) {
    throw new ApiError('currency_not_supported', `Amounts here must be in the organisation's base currency ${baseCurrency}; got ${money.currency}.`, [
      { field: `${field}/currency`, code: 'currency_not_supported', message: `must be ${baseCurrency}` },
    ]);
  }
  const amount = new Decimal(money.amount);
  const problems: string[] = [];
  if (amount.isNegative()) problems.push('must not be negative');
  if (amount.abs().greaterThanOrEqualTo(MAX_AMOUNT)) problems.push(`must be less than ${MAX_AMOUNT.toFixed()}`);
  if (amount.decimalPlaces() > minorUnits(money.currency)) problems.push(`${money.currency} has ${minorUnits(money.currency)} decimal places`);
  if (problems.length > 0) {
    throw new ApiError('invalid_field', `Amount ${money.amount} ${money.currency}: ${problems.join('; ')}.`, problems.map((message) => ({ field: `${field}/amount`, code: 'invalid_field', message })));
  }
  return amount;
}

/**
 * Money arithmetic: decimal.js with room for 18-digit amounts times quantities and rates (its default of 20
 * significant digits would round them), rounding half-up as the rules say.
 */
export const MoneyDecimal = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP });

/** A signed amount rounded half-up to the currency's minor units (UGX 0, USD 2). */
export function roundToCurrency(value: Decimal.Value, currency: string): string {
  return new MoneyDecimal(value).toDecimalPlaces(minorUnits(currency), Decimal.ROUND_HALF_UP).toFixed(minorUnits(currency));
}

/**
 * Splits `total` over `weights` so that the parts add up to the total exactly (a document discount spread over its
 * lines, a payment over invoices): in integer minor units, each part is the floor of its proportional share, and
 * the units left over go one each to the largest weights (the earlier first on a tie). Zero weights get nothing;
 * the parts take the total's sign. Weights are quantities or minor-unit amounts: integers, not negative, not all zero.
 */
export function allocate(total: string, currency: string, weights: readonly (number | string | bigint)[]): string[] {
  const digits = minorUnits(currency);
  const exact = new MoneyDecimal(total);
  if (exact.decimalPlaces() > digits) throw new Error(`allocate: ${total} has more decimals than ${currency} allows (${digits})`);
  const ratios = weights.map((weight) => BigInt(weight));
  if (ratios.some((ratio) => ratio < 0n)) throw new Error('allocate: a weight is negative');
  const sum = ratios.reduce((a, b) => a + b, 0n);
  if (sum === 0n) throw new Error('allocate: every weight is zero');
  const units = BigInt(exact.times(new MoneyDecimal(10).pow(digits)).toFixed(0));
  const sign = units < 0n ? -1n : 1n;
  const magnitude = units * sign;
  const shares = ratios.map((ratio) => (magnitude * ratio) / sum); // BigInt division floors for non-negatives
  let left = magnitude - shares.reduce((a, b) => a + b, 0n);
  const byWeight = ratios.map((ratio, index) => ({ ratio, index })).filter(({ ratio }) => ratio > 0n)
    .sort((a, b) => (a.ratio === b.ratio ? a.index - b.index : a.ratio > b.ratio ? -1 : 1));
  for (let i = 0; left > 0n; i = (i + 1) % byWeight.length, left -= 1n) shares[byWeight[i]!.index]! += 1n;
  return shares.map((share) => new MoneyDecimal((share * sign).toString()).dividedBy(new MoneyDecimal(10).pow(digits)).toFixed(digits));
}

/** One line of a sales document, as its caller gives it: unit prices exclude tax. */
export interface LineInput {
  quantity: Decimal.Value;
  unitPrice: Decimal.Value;
  discount?: Decimal.Value;
  /** Percent (18 for 18 %). */
  taxRate: Decimal.Value;
}

export interface LineAmounts {
  /** quantity x unitPrice */
  gross: string;
  discount: string;
  /** gross - discount */
  amount: string;
  /** amount x taxRate / 100, rounded half-up per line */
  tax: string;
}

/** A line's amounts: amount = quantity x unitPrice - discount; tax = amount x taxRate / 100, rounded per line. */
export function lineAmounts(line: LineInput, currency: string): LineAmounts {
  const gross = new MoneyDecimal(line.quantity).times(line.unitPrice);
  const discount = new MoneyDecimal(line.discount ?? 0);
  const amount = gross.minus(discount);
  return {
    gross: roundToCurrency(gross, currency),
    discount: roundToCurrency(discount, currency),
    amount: roundToCurrency(amount, currency),
    tax: roundToCurrency(amount.times(line.taxRate).dividedBy(100), currency),
  };
}

export interface DocumentTotals {
  subtotal: string;
  discount: string;
  tax: string;
  total: string;
}

/** subtotal = sum(quantity x unitPrice), discount = sum(line discounts), tax = sum(line tax), total = subtotal - discount + tax. */
export function documentTotals(lines: readonly LineAmounts[], currency: string): DocumentTotals {
  const sum = (pick: (line: LineAmounts) => string) => lines.reduce((total, line) => total.plus(pick(line)), new MoneyDecimal(0));
  const subtotal = sum((line) => line.gross);
  const discount = sum((line) => line.discount);
  const tax = sum((line) => line.tax);
  return {
    subtotal: roundToCurrency(subtotal, currency),
    discount: roundToCurrency(discount, currency),
    tax: roundToCurrency(tax, currency),
    total: roundToCurrency(subtotal.minus(discount).plus(tax), currency),
  };
}
