// Allocation of money over weights, and the arithmetic of document lines (server/domain/money.ts): the parts
// always add up to the total, exactly, in the currency's minor units.
import test from 'ava';
import fc from 'fast-check';
import { Decimal } from 'decimal.js';
import { allocate, documentTotals, lineAmounts, roundToCurrency } from '../../server/domain/money.js';

const sum = (parts: string[]) => parts.reduce((total, part) => total.plus(part), new Decimal(0));

test('1003 minor units over two equal weights: 502 and 501 (the remainder goes to the first on a tie)', (t) => {
  t.deepEqual(allocate('10.03', 'USD', [50, 50]), ['5.02', '5.01']);
  t.deepEqual(allocate('1003', 'UGX', [1, 1]), ['502', '501']);
});

test('the remainder goes to the largest weights first; zero weights get nothing', (t) => {
  t.deepEqual(allocate('100', 'UGX', [1, 2, 0]), ['33', '67', '0']);
  t.deepEqual(allocate('0.05', 'USD', [1, 3, 1]), ['0.01', '0.03', '0.01']);
  t.deepEqual(allocate('0.10', 'USD', [3, 3, 3]), ['0.04', '0.03', '0.03']);
});

test('a negative total is split with the same parts, negated', (t) => {
  t.deepEqual(allocate('-10.03', 'USD', [50, 50]), ['-5.02', '-5.01']);
});

test('weights that cannot be split over are refused: all zero, negative, or a total finer than the currency', (t) => {
  t.throws(() => allocate('10', 'UGX', [0, 0]), { message: /every weight is zero/ });
  t.throws(() => allocate('10', 'UGX', [1, -1]), { message: /negative/ });
  t.throws(() => allocate('10.5', 'UGX', [1]), { message: /more decimals than UGX allows/ });
});

const currency = fc.constantFrom('UGX', 'USD', 'KES');
const totalIn = (code: string) => fc.bigInt({ min: -(10n ** 16n), max: 10n ** 16n }).map((units) => {
  const digits = code === 'UGX' ? 0 : 2;
  return new Decimal(units.toString()).dividedBy(10 ** digits).toFixed(digits);
});
const weights = fc.array(fc.integer({ min: 0, max: 1_000_000 }), { minLength: 1, maxLength: 30 }).filter((w) => w.some((x) => x > 0));

test('property: the parts always add up to the total exactly, in the currency\'s minor units', (t) => {
  fc.assert(fc.property(currency.chain((code) => fc.tuple(fc.constant(code), totalIn(code), weights)), ([code, total, w]) => {
    const parts = allocate(total, code, w);
    const digits = code === 'UGX' ? 0 : 2;
    return parts.length === w.length && sum(parts).equals(total) && parts.every((part) => new Decimal(part).decimalPlaces() <= digits);
  }));
  t.pass();
});

test('property: no part is a minor unit or more away from its exact share; zero weights get zero; parts take the total\'s sign', (t) => {
  fc.assert(fc.property(currency.chain((code) => fc.tuple(fc.constant(code), totalIn(code), weights)), ([code, total, w]) => {
    const parts = allocate(total, code, w);
    const unit = new Decimal(1).dividedBy(10 ** (code === 'UGX' ? 0 : 2));
    const weightSum = w.reduce((a, b) => a + b, 0);
    return parts.every((part, i) => {
      const exact = new Decimal(total).times(w[i]!).dividedBy(weightSum);
      const signOk = new Decimal(part).isZero() || new Decimal(part).isNegative() === new Decimal(total).isNegative();
      return new Decimal(part).minus(exact).abs().lessThan(unit) && (w[i] !== 0 || new Decimal(part).isZero()) && signOk;
    });
  }));
  t.pass();
});

test('property: equal weights get parts that differ by at most one minor unit', (t) => {
  fc.assert(fc.property(currency.chain((code) => fc.tuple(fc.constant(code), totalIn(code), fc.integer({ min: 1, max: 40 }))), ([code, total, n]) => {
    const parts = allocate(total, code, Array.from({ length: n }, () => 7)).map((part) => new Decimal(part));
    const unit = new Decimal(1).dividedBy(10 ** (code === 'UGX' ? 0 : 2));
    const max = Decimal.max(...parts);
    const min = Decimal.min(...parts);
    return max.minus(min).lessThanOrEqualTo(unit);
  }));
  t.pass();
});

test('a line: amount = quantity x unitPrice - discount; tax on the amount, rounded half-up per line; unit prices exclude tax', (t) => {
  t.deepEqual(lineAmounts({ quantity: 3, unitPrice: '10.25', discount: '1.00', taxRate: 18 }, 'USD'),
    { gross: '30.75', discount: '1.00', amount: '29.75', tax: '5.36' }); // 29.75 x 0.18 = 5.355 -> 5.36
  t.deepEqual(lineAmounts({ quantity: 7, unitPrice: '1250', taxRate: '18' }, 'UGX'), { gross: '8750', discount: '0', amount: '8750', tax: '1575' });
});

test('a document: subtotal, discount, tax (the sum of line taxes) and total = subtotal - discount + tax', (t) => {
  const lines = [
    lineAmounts({ quantity: 3, unitPrice: '10.25', discount: '1.00', taxRate: 18 }, 'USD'),
    lineAmounts({ quantity: 1, unitPrice: '0.05', taxRate: 18 }, 'USD'), // tax 0.009 -> 0.01
  ];
  t.deepEqual(documentTotals(lines, 'USD'), { subtotal: '30.80', discount: '1.00', tax: '5.37', total: '35.17' });
});

test('amounts of 18 digits times quantities keep every digit (decimal.js\'s default precision of 20 would not)', (t) => {
  t.is(lineAmounts({ quantity: 999_999, unitPrice: '99999999999999.99', taxRate: 0 }, 'USD').gross, '99999899999999990000.01');
  t.is(roundToCurrency('2.5', 'UGX'), '3');
  t.is(roundToCurrency('-2.5', 'UGX'), '-3');
});
