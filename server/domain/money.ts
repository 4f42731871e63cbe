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
