// Money rules, pure (no database, no HTTP): the wire form has exactly the currency's minor units (ISO 4217: 0 for
// UGX, 2 for USD, 3 for KWD and BHD), and an incoming amount is refused when in another currency, negative, at or
// above 10^14 (NUMERIC(18, 4) holds 14 digits before the point) or with more decimals than its currency has.
// Each case changes one thing; each refusal is checked for its code, status and the field and reason it names.
// The arithmetic (rounding, allocation, line and document amounts) is pinned here by examples, so that
// `npm run mutate -- money` holds it; test/unit/money-allocation.test.ts proves its properties.
import test, { type ExecutionContext } from 'ava';
import { ApiError } from '../../server/platform/errors/api-error.js';
import {
  acceptAmount,
  allocate,
  documentTotals,
  formatAmount,
  lineAmounts,
  MAX_AMOUNT,
  minorUnits,
  roundToCurrency,
} from '../../server/domain/money.js';

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

test("the wire form has exactly the currency's minor units: 500000 UGX, 12.50 USD, rounded half up", (t) => {
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
    t.deepEqual(
      error.errors,
      [{ field: '/total/amount', code: 'invalid_field', message: 'must be less than 100000000000000' }],
      amount,
    );
  }
});

test('more decimals than the currency has are refused; as many (or trailing zeros) are accepted', (t) => {
  t.is(acceptAmount({ amount: '12.50', currency: 'USD' }, '/unitPrice', 'USD').toFixed(), '12.5');
  t.is(acceptAmount({ amount: '0.01', currency: 'USD' }, '/unitPrice', 'USD').toFixed(), '0.01');
  t.is(acceptAmount({ amount: '500000.000', currency: 'UGX' }, '/unitPrice', 'UGX').toFixed(), '500000');
  const usd = refusal(t, () => acceptAmount({ amount: '12.505', currency: 'USD' }, '/lines/2/unitPrice', 'USD'));
  t.deepEqual(usd.errors, [
    { field: '/lines/2/unitPrice/amount', code: 'invalid_field', message: 'USD has 2 decimal places' },
  ]);
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
  t.deepEqual(
    error.errors?.map((e) => e.message),
    ['must not be negative', 'must be less than 100000000000000', 'USD has 2 decimal places'],
  );
  t.is(
    error.detail,
    'Amount -100000000000000.005 USD: must not be negative; must be less than 100000000000000; USD has 2 decimal places.',
  );
});

test("an amount in another currency than the organisation's base is 422 currency_not_supported naming the currency field", (t) => {
  const error = refusal(t, () => acceptAmount({ amount: '1.00', currency: 'USD' }, '/unitPrice', 'UGX'));
  t.like(error, { code: 'currency_not_supported', status: 422 });
  t.deepEqual(error.errors, [{ field: '/unitPrice/currency', code: 'currency_not_supported', message: 'must be UGX' }]);
  t.is(error.detail, "Amounts here must be in the organisation's base currency UGX; got USD.");
  // Judged before the amount: a bad amount in the wrong currency names the currency.
  t.is(
    refusal(t, () => acceptAmount({ amount: '-1.005', currency: 'USD' }, '/unitPrice', 'UGX')).code,
    'currency_not_supported',
  );
});

test('rounding to the currency is half-up, away from zero on a tie, and never writes -0', (t) => {
  t.deepEqual(
    ['0.125', '0.124', '-0.125', '-0.124', '-0.001', '7'].map((v) => roundToCurrency(v, 'USD')),
    ['0.13', '0.12', '-0.13', '-0.12', '0.00', '7.00'],
  );
  t.deepEqual(
    ['2.5', '-2.5', '2.4999', '-0.4'].map((v) => roundToCurrency(v, 'UGX')),
    ['3', '-3', '2', '0'],
  );
  t.is(roundToCurrency('1.0005', 'KWD'), '1.001');
  t.is(formatAmount('-0.001', 'USD'), '0.00');
  t.is(formatAmount('-12.345', 'USD'), '-12.35');
});

test('allocation: floor shares in minor units, the leftover one unit each to the largest weights, the earlier on a tie', (t) => {
  t.deepEqual(allocate('10.03', 'USD', [50, 50]), ['5.02', '5.01']);
  t.deepEqual(allocate('1003', 'UGX', [50, 50]), ['502', '501']);
  t.deepEqual(allocate('7', 'UGX', [1, 2, 2, 0, 1]), ['1', '3', '2', '0', '1']);
  t.deepEqual(allocate('8', 'UGX', [1, 2, 2, 0, 1]), ['1', '3', '3', '0', '1']);
  t.deepEqual(allocate('4', 'UGX', [1, 0, 2]), ['1', '0', '3']);
  t.deepEqual(allocate('4', 'UGX', [2, 0, 1]), ['3', '0', '1']);
  t.deepEqual(allocate('0.05', 'USD', [1, 3, 1]), ['0.01', '0.03', '0.01']);
  t.deepEqual(allocate('1.000', 'KWD', [1, 1, 1]), ['0.334', '0.333', '0.333']);
  t.deepEqual(allocate('-10.03', 'USD', [50, 50]), ['-5.02', '-5.01']);
  t.deepEqual(allocate('-0.02', 'USD', [1, 1, 1]), ['-0.01', '-0.01', '0.00']);
  t.deepEqual(allocate('0', 'UGX', [1, 1]), ['0', '0']);
});

test('allocation weights count by their ratio: integers, decimal strings and BigInts', (t) => {
  t.deepEqual(allocate('10.00', 'USD', ['12.50', '37.50']), ['2.50', '7.50']);
  t.deepEqual(allocate('3', 'UGX', ['0.5', 1]), ['1', '2']);
  t.deepEqual(allocate('3', 'UGX', ['0.25', '0.5']), ['1', '2']);
  t.deepEqual(allocate('100', 'UGX', [10n ** 30n, 2n * 10n ** 30n]), ['33', '67']);
});

test('allocation refuses, as a programming error: no positive weight, a negative or non-numeric weight, a total finer than its currency', (t) => {
  t.throws(() => allocate('10', 'UGX', [0, 0]), {
    message: 'allocate: no weight is positive, so there is nothing to allocate over',
  });
  t.throws(() => allocate('10', 'UGX', []), { message: /no weight is positive/ });
  t.throws(() => allocate('10', 'UGX', [1, -1]), { message: 'allocate: the weight -1 is negative' });
  t.throws(() => allocate('10', 'UGX', [1, '-0.5']), { message: /weight -0.5 is negative/ });
  t.is(allocate('10', 'UGX', [0, 1])[1], '10', 'a zero weight is not negative');
  t.throws(() => allocate('10', 'UGX', [Number.POSITIVE_INFINITY]), {
    message: 'allocate: the weight Infinity is not a number',
  });
  t.throws(() => allocate('10.5', 'UGX', [1]), {
    message: 'allocate: 10.5 is not an amount of UGX, which has 0 decimal places',
  });
  t.throws(() => allocate('NaN', 'USD', [1]), { message: /NaN is not an amount of USD/ });
  t.is(allocate('10.5', 'USD', [1])[0], '10.50', 'fewer decimals than the currency has are fine');
  t.is(allocate('10.50', 'USD', [1])[0], '10.50', 'as many decimals as the currency has are fine');
});

test('a line: amount = quantity x unitPrice - discount, tax = amount x rate / 100 rounded half-up on the line', (t) => {
  t.deepEqual(lineAmounts({ quantity: 3, unitPrice: '10.25', discount: '1.00', taxRate: 18 }, 'USD'), {
    currency: 'USD',
    gross: '30.75',
    discount: '1.00',
    amount: '29.75',
    tax: '5.36',
  });
  t.deepEqual(lineAmounts({ quantity: '0.5', unitPrice: '5', taxRate: 50 }, 'UGX'), {
    currency: 'UGX',
    gross: '3',
    discount: '0',
    amount: '3',
    tax: '2',
  }); // tax of the written 3, not of 2.5
  t.deepEqual(lineAmounts({ quantity: 2, unitPrice: '100', discount: '10.4', taxRate: '12.5' }, 'UGX'), {
    currency: 'UGX',
    gross: '200',
    discount: '10',
    amount: '190',
    tax: '24',
  }); // 23.75 -> 24
});

test("a document: subtotal = sum of gross, discount and tax are the lines' sums, total = subtotal - discount + tax", (t) => {
  const lines = [
    lineAmounts({ quantity: 3, unitPrice: '10.25', discount: '1.00', taxRate: 18 }, 'USD'),
    lineAmounts({ quantity: 1, unitPrice: '0.05', discount: '0.01', taxRate: 18 }, 'USD'),
  ];
  t.deepEqual(documentTotals(lines), {
    currency: 'USD',
    subtotal: '30.80',
    discount: '1.01',
    tax: '5.37',
    total: '35.16',
  });
  t.deepEqual(documentTotals(lines, 'USD'), documentTotals(lines));
  t.deepEqual(documentTotals([], 'KWD'), {
    currency: 'KWD',
    subtotal: '0.000',
    discount: '0.000',
    tax: '0.000',
    total: '0.000',
  });
  t.throws(() => documentTotals([]), { message: 'documentTotals: a document without lines must name its currency' });
  t.throws(() => documentTotals([...lines, lineAmounts({ quantity: 1, unitPrice: '1', taxRate: 0 }, 'UGX')]), {
    message: 'documentTotals: a line in UGX on a document in USD',
  });
});

test('arithmetic keeps 40 significant digits: an 18-digit amount times a quantity and a rate loses none', (t) => {
  t.is(
    lineAmounts({ quantity: 999_999, unitPrice: '99999999999999.99', taxRate: 0 }, 'USD').gross,
    '99999899999999990000.01',
  );
  t.is(
    lineAmounts({ quantity: '999999.9999', unitPrice: '99999999999999.9999', taxRate: '18.5' }, 'KWD').tax,
    '18499999998149999981.500',
  );
});
