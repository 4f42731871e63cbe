// Money rules, pure (no database, no HTTP): the wire form has exactly the currency's minor units (ISO 4217: 0 for
// UGX, 2 for USD, 3 for KWD and BHD), and an incoming amount is refused when in another currency, negative, at or
// above 10^14 (NUMERIC(18, 4) holds 14 digits before the point) or with more decimals than its currency has.
// Each case changes one thing; each refusal is checked for its code, status and the field and reason it names.
import test, { type ExecutionContext } from 'ava';
import { ApiError } from '../../server/platform/errors/api-error.js';
import { acceptAmount, formatAmount, MAX_AMOUNT, minorUnits } from '../../server/domain/money.js';

function refusal(t: ExecutionContext, fn: () => unknown): ApiError {
  const error = t.throws(fn, { instanceOf: ApiError });
  return error as ApiError;
}

test('minor units come from ISO 4217: UGX 0, USD 2, KWD and BHD 3; a code the runtime does not know is given 2', (t) => {
  t.deepEqual(['UGX', 'JPY', 'USD', 'KES', 'KWD', 'BHD', 'TND'].map(minorUnits), [0, 0, 2, 2, 3, 3, 3]);
  t.is(minorUnits('not a currency'), 2);
  t.is(minorUnits('KWD'), 3, 'asked again (from the cache)');
  t.is(minorUnits('not a currency'), 2, 'asked again (from the cache)');
});

test('currencies with 3 minor digits (KWD, BHD) are written and accepted with 3 decimals, and refused with 4', (t) => {
  t.is(formatAmount('1.5', 'KWD'), '1.500');
  t.is(formatAmount(2, 'BHD'), '2.000');
  t.is(acceptAmount({ amount: '12.345', currency: 'KWD' }, '/price', 'KWD').toFixed(), '12.345');
  t.is(acceptAmount({ amount: '0.001', currency: 'BHD' }, '/price', 'BHD').toFixed(), '0.001');
  const error = refusal(t, () => acceptAmount({ amount: '12.3456', currency: 'KWD' }, '/price', 'KWD'));
  t.like(error, { code: 'invalid_field', status: 400 });
  t.deepEqual(error.errors, [{ field: '/price/amount', code: 'invalid_field', message: 'KWD has 3 decimal places' }]);
});

test('the wire form has exactly the currency\'s minor units: 500000 UGX, 12.50 USD, rounded half up', (t) => {
  t.is(formatAmount('500000', 'UGX'), '500000');
  t.is(formatAmount('12.5', 'USD'), '12.50');
  t.is(formatAmount('0.125', 'USD'), '0.13');
  t.is(formatAmount('1234.5', 'UGX'), '1235');
});

test('an amount below 10^14 is accepted; 10^14 itself and above are refused (the < 10^14 bound)', (t) => {
  t.is(MAX_AMOUNT.toFixed(), '100000000000000');
  t.is(acceptAmount({ amount: '99999999999999', currency: 'UGX' }, '/total', 'UGX').toFixed(), '99999999999999');
  t.is(acceptAmount({ amount: '99999999999999.99', currency: 'USD' }, '/total', 'USD').toFixed(), '99999999999999.99');
  for (const amount of ['100000000000000', '100000000000000.00', '100000000000001']) {
    const error = refusal(t, () => acceptAmount({ amount, currency: 'UGX' }, '/total', 'UGX'));
    t.like(error, { code: 'invalid_field', status: 400 }, amount);
    t.deepEqual(error.errors, [{ field: '/total/amount', code: 'invalid_field', message: 'must be less than 100000000000000' }], amount);
  }
});

test('more decimals than the currency has are refused; as many (or trailing zeros) are accepted', (t) => {
  t.is(acceptAmount({ amount: '12.50', currency: 'USD' }, '/unitPrice', 'USD').toFixed(), '12.5');
  t.is(acceptAmount({ amount: '0.01', currency: 'USD' }, '/unitPrice', 'USD').toFixed(), '0.01');
  t.is(acceptAmount({ amount: '500000.000', currency: 'UGX' }, '/unitPrice', 'UGX').toFixed(), '500000');
  const usd = refusal(t, () => acceptAmount({ amount: '12.505', currency: 'USD' }, '/lines/2/unitPrice', 'USD'));
  t.deepEqual(usd.errors, [{ field: '/lines/2/unitPrice/amount', code: 'invalid_field', message: 'USD has 2 decimal places' }]);
  t.is(usd.detail, 'Amount 12.505 USD: USD has 2 decimal places.');
  const ugx = refusal(t, () => acceptAmount({ amount: '500000.5', currency: 'UGX' }, '/unitPrice', 'UGX'));
  t.deepEqual(ugx.errors, [{ field: '/unitPrice/amount', code: 'invalid_field', message: 'UGX has 0 decimal places' }]);
});

test('a negative amount is refused; zero is accepted', (t) => {
  t.is(acceptAmount({ amount: '0', currency: 'UGX' }, '/total', 'UGX').toFixed(), '0');
  const error = refusal(t, () => acceptAmount({ amount: '-1', currency: 'UGX' }, '/total', 'UGX'));
  t.like(error, { code: 'invalid_field', status: 400 });
  t.deepEqual(error.errors, [{ field: '/total/amount', code: 'invalid_field', message: 'must not be negative' }]);
});

test('every problem of one amount is named, each as its own error on the amount', (t) => {
  const error = refusal(t, () => acceptAmount({ amount: '-100000000000000.005', currency: 'USD' }, '/total', 'USD'));
  t.deepEqual(error.errors?.map((e) => e.message), ['must not be negative', 'must be less than 100000000000000', 'USD has 2 decimal places']);
  t.is(error.detail, 'Amount -100000000000000.005 USD: must not be negative; must be less than 100000000000000; USD has 2 decimal places.');
});

test('an amount in another currency than the organisation\'s base is 422 currency_not_supported naming the currency field', (t) => {
  const error = refusal(t, () => acceptAmount({ amount: '1.00', currency: 'USD' }, '/unitPrice', 'UGX'));
  t.like(error, { code: 'currency_not_supported', status: 422 });
  t.deepEqual(error.errors, [{ field: '/unitPrice/currency', code: 'currency_not_supported', message: 'must be UGX' }]);
  t.is(error.detail, 'Amounts here must be in the organisation\'s base currency UGX; got USD.');
  // Judged before the amount: a bad amount in the wrong currency names the currency.
  t.is(refusal(t, () => acceptAmount({ amount: '-1.005', currency: 'USD' }, '/unitPrice', 'UGX')).code, 'currency_not_supported');
});
