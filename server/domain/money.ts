// Money is a decimal string on the wire, NUMERIC in Postgres and Decimal in code: never a float.
import { Decimal } from 'decimal.js';
import { ApiError } from '../platform/errors/api-error.js';

/**
 * The module's own decimal.js: every amount here is one of these. decimal.js's default of 20 significant digits
 * would round an 18-digit amount times a quantity; 40 holds amount x quantity x rate. Half-up (away from zero on
 * a tie: 2.5 -> 3, -2.5 -> -3), as the money rules say.
 */
const MoneyDecimal = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP });

export interface Money {
  amount: string;
  currency: string;
}

const MINOR_UNITS = new Map<string, number>();
/** Amounts are stored as NUMERIC(18, 4): 14 digits before the point. */
export const MAX_AMOUNT = new MoneyDecimal('1e14');

/** Digits after the decimal point of a currency (ISO 4217 minor units, from the runtime's CLDR data; cached,
 * since building an Intl.NumberFormat costs more than formatting a whole record). */
export function minorUnits(currency: string): number {
  let digits = MINOR_UNITS.get(currency);
  if (digits === undefined) {
    try {
      digits =
        new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
    } catch {
      digits = 2;
    }
    MINOR_UNITS.set(currency, digits);
  }
  return digits;
}

/** The wire form: exactly the currency's minor units (`500000` UGX, `12.50` USD), rounded half-up. */
export function formatAmount(amount: Decimal.Value, currency: string): string {
  return roundToCurrency(amount, currency);
}

/**
 * A signed amount rounded half-up to the currency's minor units (UGX 0, USD 2), written with exactly that many
 * decimals. Rounded before it is written, so that a negative amount rounding to zero is `0.00`, not `-0.00`.
 */
export function roundToCurrency(value: Decimal.Value, currency: string): string {
  const digits = minorUnits(currency);
  return new MoneyDecimal(value).toDecimalPlaces(digits, Decimal.ROUND_HALF_UP).toFixed(digits);
}

/**
 * Checks an incoming amount: in the organisation's base currency (422 currency_not_supported), not negative and
 * with no more decimals than the currency has (400 invalid_field). `field` is the JSON pointer of the money object.
 */
export function acceptAmount(money: Money, field: string, baseCurrency: string): Decimal {
  if (money.currency !== baseCurrency) {
    throw new ApiError(
      'currency_not_supported',
      `Amounts here must be in the organisation's base currency ${baseCurrency}; got ${money.currency}.`,
      [{ field: `${field}/currency`, code: 'currency_not_supported', message: `must be ${baseCurrency}` }],
    );
  }
  const amount = new MoneyDecimal(money.amount);
  const problems: string[] = [];
  if (amount.isNegative()) problems.push('must not be negative');
  if (amount.abs().greaterThanOrEqualTo(MAX_AMOUNT)) problems.push(`must be less than ${MAX_AMOUNT.toFixed()}`);
  if (amount.decimalPlaces() > minorUnits(money.currency))
    problems.push(`${money.currency} has ${minorUnits(money.currency)} decimal places`);
  if (problems.length > 0) {
    throw new ApiError(
      'invalid_field',
      `Amount ${money.amount} ${money.currency}: ${problems.join('; ')}.`,
      problems.map((message) => ({ field: `${field}/amount`, code: 'invalid_field', message })),
    );
  }
  return amount;
}

/**
 * Splits `total` over `weights` so that the parts add up to the total exactly (a document discount spread over its
 * lines, a payment over invoices, a freight charge over quantities): dinero.js's `distribute` on integer minor
 * units. Each part is floor(total x weight / sum of weights) in minor units (towards zero for a negative total:
 * the parts take the total's sign); the units left over, fewer than the positive weights, go one each to the
 * largest weights, the earlier first on a tie. A zero weight gets nothing. Weights are quantities or amounts
 * (`3`, `'12.50'`, `7n`); only their ratios count. The results are written with the currency's minor units.
 *
 * Refused with a plain Error, being a programming error rather than a caller's: a negative or non-numeric weight,
 * no positive weight, a total with more decimals than the currency has.
 */
export function allocate(total: string, currency: string, weights: readonly (string | number | bigint)[]): string[] {
  const digits = minorUnits(currency);
  const amount = new MoneyDecimal(total);
  if (!amount.isFinite() || amount.decimalPlaces() > digits) {
    throw new Error(`allocate: ${total} is not an amount of ${currency}, which has ${digits} decimal places`);
  }
  const ratios = integerRatios(weights);
  const sum = ratios.reduce((a, b) => a + b, 0n);
  if (sum === 0n) throw new Error('allocate: no weight is positive, so there is nothing to allocate over');
  const units = scaledToIntegers([amount], digits)[0]!;
  // BigInt division truncates towards zero: each share is the floor of its exact share in magnitude, with the
  // total's sign. The leftover has the total's sign too, and fewer units than there are positive weights.
  const shares = ratios.map((ratio) => (units * ratio) / sum);
  const left = units - shares.reduce((a, b) => a + b, 0n);
  const unit = left < 0n ? -1n : 1n;
  // Largest weights first; sort is stable, so equal weights keep their order (the earlier is served first). The
  // zero weights sort last and the leftover never reaches them.
  const largestFirst = ratios.map((_, index) => index).sort((a, b) => Number(ratios[b]! - ratios[a]!));
  for (const index of largestFirst.slice(0, Number(left * unit))) shares[index]! += unit;
  return shares.map((share) => new MoneyDecimal(share.toString()).dividedBy(10 ** digits).toFixed(digits));
}

/** Weights as integers with the same ratios: each written with as many decimals as the most precise one, point removed. */
function integerRatios(weights: readonly (string | number | bigint)[]): bigint[] {
  const values = weights.map((weight) => new MoneyDecimal(weight));
  for (const value of values) {
    if (!value.isFinite()) throw new Error(`allocate: the weight ${value.toString()} is not a number`);
    if (value.lessThan(0)) throw new Error(`allocate: the weight ${value.toFixed()} is negative`);
  }
  return scaledToIntegers(values, Math.max(0, ...values.map((value) => value.decimalPlaces())));
}

/** Each value times 10^decimals, exactly (written out with that many decimals, point removed; no arithmetic to round). */
function scaledToIntegers(values: readonly Decimal[], decimals: number): bigint[] {
  return values.map((value) => BigInt(value.toFixed(decimals).replace('.', '')));
}

/** One line of a sales document, as its caller gives it. Unit prices exclude tax. */
export interface LineInput {
  quantity: Decimal.Value;
  unitPrice: Decimal.Value;
  /** An amount off the line (not a percentage); none when absent. */
  discount?: Decimal.Value;
  /** Percent: 18 for 18 %. */
  taxRate: Decimal.Value;
}

/** A line's amounts, each written with the currency's minor units. */
export interface LineAmounts {
  currency: string;
  /** quantity x unitPrice */
  gross: string;
  discount: string;
  /** gross - discount: what the line costs before tax */
  amount: string;
  /** amount x taxRate / 100 */
  tax: string;
}

/**
 * A line's amounts: amount = quantity x unitPrice - discount; tax = amount x taxRate / 100, rounded half-up per
 * line. Each amount is rounded to minor units before the next is computed from it, so the line as written checks
 * out by hand (tax is the rate of the written amount) and a document's totals are sums of what its lines show.
 */
export function lineAmounts(line: LineInput, currency: string): LineAmounts {
  const gross = roundToCurrency(new MoneyDecimal(line.quantity).times(line.unitPrice), currency);
  const discount = roundToCurrency(line.discount ?? 0, currency);
  const amount = roundToCurrency(new MoneyDecimal(gross).minus(discount), currency);
  const tax = roundToCurrency(new MoneyDecimal(amount).times(line.taxRate).dividedBy(100), currency);
  return { currency, gross, discount, amount, tax };
}

export interface DocumentTotals {
  currency: string;
  /** sum of quantity x unitPrice */
  subtotal: string;
  /** sum of the line discounts */
  discount: string;
  /** sum of the line taxes (each rounded on its line, never the tax of the subtotal) */
  tax: string;
  /** subtotal - discount + tax */
  total: string;
}

/**
 * A document's totals from its lines (`lineAmounts`): subtotal = sum(quantity x unitPrice), discount = sum(line
 * discounts), tax = sum(line tax), total = subtotal - discount + tax; exact, the lines being in minor units. The
 * currency is the lines'; a document without lines must name it. Lines in another currency are refused.
 */
export function documentTotals(
  lines: readonly LineAmounts[],
  currency: string | undefined = lines[0]?.currency,
): DocumentTotals {
  if (currency === undefined) throw new Error('documentTotals: a document without lines must name its currency');
  const stranger = lines.find((line) => line.currency !== currency);
  if (stranger) throw new Error(`documentTotals: a line in ${stranger.currency} on a document in ${currency}`);
  const sum = (pick: (line: LineAmounts) => string) =>
    lines.reduce((total, line) => total.plus(pick(line)), new MoneyDecimal(0));
  const subtotal = sum((line) => line.gross);
  const discount = sum((line) => line.discount);
  const tax = sum((line) => line.tax);
  return {
    currency,
    subtotal: roundToCurrency(subtotal, currency),
    discount: roundToCurrency(discount, currency),
    tax: roundToCurrency(tax, currency),
    total: roundToCurrency(subtotal.minus(discount).plus(tax), currency),
  };
}
