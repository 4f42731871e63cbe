// Allocation of money over weights, and the arithmetic of document lines (server/domain/money.ts): the parts always
// add up to the total, exactly, in the currency's minor units. Properties are checked in integer minor units
// (BigInt), so the check itself cannot round.
import test from 'ava';
import fc from 'fast-check';
import { Decimal } from 'decimal.js';
import { allocate, documentTotals, lineAmounts, minorUnits, roundToCurrency } from '../../server/domain/money.js';

/** An amount written with its currency's decimals, as minor units (`-10.03` USD -> -1003n). */
const units = (amount: string) => BigInt(amount.replace('.', ''));
const written = (minor: bigint, currency: string) =>
  new Decimal(minor.toString()).dividedBy(10 ** minorUnits(currency)).toFixed(minorUnits(currency));

const currency = fc.constantFrom('UGX', 'USD', 'KWD');
/** A currency, a signed total in it (up to 10^16 minor units, past NUMERIC(18, 4)'s range) and integer weights, some zero. */
const split = currency.chain((code) =>
  fc.record({
    code: fc.constant(code),
    total: fc.bigInt({ min: -(10n ** 16n), max: 10n ** 16n }).map((minor) => written(minor, code)),
    weights: fc
      .array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1_000_000 })), { minLength: 1, maxLength: 30 })
      .filter((w) => w.some((x) => x > 0)),
  }),
);

test('1003 minor units over two equal weights: 502 and 501 (the remainder goes to the first on a tie)', (t) => {
  t.deepEqual(allocate('10.03', 'USD', [50, 50]), ['5.02', '5.01']);
  t.deepEqual(allocate('1003', 'UGX', [50, 50]), ['502', '501']);
  t.deepEqual(allocate('1.003', 'KWD', [50, 50]), ['0.502', '0.501']);
});

test('UGX has no minor units: a shilling is never split', (t) => {
  t.deepEqual(allocate('100', 'UGX', [1, 1, 1]), ['34', '33', '33']);
  t.deepEqual(allocate('1', 'UGX', [1, 1, 1]), ['1', '0', '0']);
  t.deepEqual(allocate('500000', 'UGX', [3, 1]), ['375000', '125000']);
});

test('USD is split in cents, written with two decimals', (t) => {
  t.deepEqual(allocate('100', 'USD', [1, 1, 1]), ['33.34', '33.33', '33.33']);
  t.deepEqual(allocate('0.05', 'USD', [1, 3, 1]), ['0.01', '0.03', '0.01']);
  t.deepEqual(allocate('10', 'USD', [1]), ['10.00']);
});

test('the remainder goes to the largest weights first, then in order; zero weights get nothing', (t) => {
  t.deepEqual(allocate('100', 'UGX', [1, 2, 0]), ['33', '67', '0']);
  t.deepEqual(allocate('0.10', 'USD', [3, 3, 3]), ['0.04', '0.03', '0.03']);
  t.deepEqual(allocate('7', 'UGX', [1, 2, 2, 0, 1]), ['1', '3', '2', '0', '1']);
  t.deepEqual(allocate('5', 'UGX', [0, 0, 1]), ['0', '0', '5']);
});

test('a negative total is split into the same parts, negated; zero into zeros', (t) => {
  t.deepEqual(allocate('-10.03', 'USD', [50, 50]), ['-5.02', '-5.01']);
  t.deepEqual(allocate('-1', 'UGX', [1, 1]), ['-1', '0']);
  t.deepEqual(allocate('0', 'USD', [1, 2]), ['0.00', '0.00']);
});

test('weights count by their ratio only: quantities, amounts with decimals or BigInts', (t) => {
  t.deepEqual(allocate('10.00', 'USD', ['12.50', '37.50']), ['2.50', '7.50']);
  t.deepEqual(allocate('10.00', 'USD', ['0.5', 1]), allocate('10.00', 'USD', [1, 2]));
  t.deepEqual(allocate('100', 'UGX', [10n ** 30n, 2n * 10n ** 30n]), ['33', '67']);
});

test('refused as programming errors: no positive weight, a negative or non-numeric weight, a total finer than the currency', (t) => {
  t.throws(() => allocate('10', 'UGX', [0, 0]), { message: /no weight is positive/ });
  t.throws(() => allocate('10', 'UGX', []), { message: /no weight is positive/ });
  t.throws(() => allocate('10', 'UGX', [1, -1]), { message: /weight -1 is negative/ });
  t.throws(() => allocate('10', 'UGX', [1, Number.NaN]), { message: /weight NaN is not a number/ });
  t.throws(() => allocate('10.5', 'UGX', [1]), { message: /10.5 is not an amount of UGX, which has 0 decimal places/ });
  t.throws(() => allocate('1.001', 'USD', [1]), { message: /USD, which has 2 decimal places/ });
  t.throws(() => allocate('Infinity', 'USD', [1]), { message: /not an amount of USD/ });
});

test("property: the parts always add up to the total exactly, one part per weight, each in the currency's minor units", (t) => {
  fc.assert(
    fc.property(split, ({ code, total, weights }) => {
      const parts = allocate(total, code, weights);
      const decimals = minorUnits(code);
      return (
        parts.length === weights.length &&
        parts.reduce((sum, part) => sum + units(part), 0n) === units(total) &&
        parts.every((part) => (part.split('.')[1]?.length ?? 0) === decimals)
      );
    }),
  );
  t.pass();
});

test('property: each part is its exact proportional share cut down to minor units, or one unit more (a leftover unit)', (t) => {
  fc.assert(
    fc.property(split, ({ code, total, weights }) => {
      const parts = allocate(total, code, weights);
      const sum = BigInt(weights.reduce((a, b) => a + b, 0));
      const magnitude = (n: bigint) => (n < 0n ? -n : n);
      // In magnitude: the exact share's whole units (the division truncates), or those plus one. A part whose exact
      // share is whole can still get a leftover unit (they go to the largest weights, decision 0013), so a part may
      // be a whole unit away from its exact share, never more, and never below it.
      return parts.every((part, i) => {
        const floor = (magnitude(units(total)) * BigInt(weights[i]!)) / sum;
        const got = magnitude(units(part));
        return got === floor || got === floor + 1n;
      });
    }),
  );
  t.pass();
});

test('a part whose exact share is whole still takes a leftover unit when its weight is among the largest (found by the property above: KWD over 3, 19, 17, 12, 17)', (t) => {
  // The exact shares of the two 17s are whole (-435194152064.928); two leftover units go to 19, then the first 17.
  t.deepEqual(allocate('-1740776608259.712', 'KWD', [3, 19, 17, 12, 17]), [
    '-76798968011.457',
    '-486393464072.567',
    '-435194152064.929',
    '-307195872045.831',
    '-435194152064.928',
  ]);
});

test("property: zero weights get zero, and every part takes the total's sign", (t) => {
  fc.assert(
    fc.property(split, ({ code, total, weights }) => {
      const parts = allocate(total, code, weights).map(units);
      const sign = units(total) < 0n ? -1n : 1n;
      return parts.every((part, i) => (weights[i] === 0 ? part === 0n : part * sign >= 0n));
    }),
  );
  t.pass();
});

test('property: the leftover units go to the largest weights, the earlier first on a tie', (t) => {
  fc.assert(
    fc.property(split, ({ code, total, weights }) => {
      const parts = allocate(total, code, weights).map(units);
      const sum = BigInt(weights.reduce((a, b) => a + b, 0));
      const magnitude = units(total) < 0n ? -units(total) : units(total);
      const extra = parts.map((part, i) => (part < 0n ? -part : part) - (magnitude * BigInt(weights[i]!)) / sum);
      if (!extra.every((unit) => unit === 0n || unit === 1n)) return false;
      return extra.every(
        (got, i) =>
          got === 0n ||
          extra.every(
            (other, j) =>
              other === 1n || weights[j] === 0 || weights[i]! > weights[j]! || (weights[i] === weights[j] && i < j),
          ),
      );
    }),
  );
  t.pass();
});

test('property: reordering the weights reorders the parts: each weight keeps the same multiset of parts', (t) => {
  fc.assert(
    fc.property(
      split.chain((s) =>
        fc.tuple(
          fc.constant(s),
          fc.shuffledSubarray(
            s.weights.map((_, i) => i),
            { minLength: s.weights.length },
          ),
        ),
      ),
      ([{ code, total, weights }, order]) => {
        const pairs = (w: number[], parts: string[]) => w.map((weight, i) => `${weight}:${parts[i]}`).sort();
        const shuffled = order.map((i) => weights[i]!);
        t.deepEqual(pairs(shuffled, allocate(total, code, shuffled)), pairs(weights, allocate(total, code, weights)));
      },
    ),
  );
  t.pass();
});

test('property: equal weights get parts at most one minor unit apart', (t) => {
  fc.assert(
    fc.property(
      split,
      fc.integer({ min: 1, max: 40 }),
      fc.integer({ min: 1, max: 1000 }),
      ({ code, total }, n, weight) => {
        const parts = allocate(
          total,
          code,
          Array.from({ length: n }, () => weight),
        ).map(units);
        // biome-ignore lint/complexity/useMathMinMax: the parts are bigints, which Math.max and Math.min do not take.
        const spread = parts.reduce((a, b) => (a > b ? a : b)) - parts.reduce((a, b) => (a < b ? a : b));
        return spread === 0n || spread === 1n;
      },
    ),
  );
  t.pass();
});

test('property: scaling every weight by the same factor changes nothing; negating the total negates every part', (t) => {
  fc.assert(
    fc.property(split, fc.integer({ min: 2, max: 1000 }), ({ code, total, weights }, factor) => {
      const parts = allocate(total, code, weights);
      t.deepEqual(
        allocate(
          total,
          code,
          weights.map((w) => w * factor),
        ),
        parts,
      );
      t.deepEqual(
        allocate(
          total,
          code,
          weights.map((w) => (w / 100).toString()),
        ),
        parts,
      );
      t.deepEqual(
        allocate(written(-units(total), code), code, weights).map(units),
        parts.map((part) => -units(part)),
      );
    }),
  );
  t.pass();
});

test('a line: amount = quantity x unitPrice - discount; tax on the amount, rounded half-up per line; unit prices exclude tax', (t) => {
  t.deepEqual(lineAmounts({ quantity: 3, unitPrice: '10.25', discount: '1.00', taxRate: 18 }, 'USD'), {
    currency: 'USD',
    gross: '30.75',
    discount: '1.00',
    amount: '29.75',
    tax: '5.36',
  }); // 29.75 x 0.18 = 5.355 -> 5.36
  t.deepEqual(lineAmounts({ quantity: 7, unitPrice: '1250', taxRate: '18' }, 'UGX'), {
    currency: 'UGX',
    gross: '8750',
    discount: '0',
    amount: '8750',
    tax: '1575',
  });
  t.deepEqual(lineAmounts({ quantity: 1, unitPrice: '2.50', taxRate: 0 }, 'USD').tax, '0.00');
});

test('a line with a fractional quantity is rounded to minor units first, and its tax is the rate of the amount as written', (t) => {
  // 1.5 x 0.33 = 0.495 -> 0.50; 18 % of 0.50 = 0.09.
  t.deepEqual(lineAmounts({ quantity: '1.5', unitPrice: '0.33', taxRate: 18 }, 'USD'), {
    currency: 'USD',
    gross: '0.50',
    discount: '0.00',
    amount: '0.50',
    tax: '0.09',
  });
  // 0.5 x 5 = 2.5 -> 3 UGX; 50 % of 3 = 1.5 -> 2 (of the unrounded 2.5 it would be 1.25 -> 1).
  t.deepEqual(lineAmounts({ quantity: '0.5', unitPrice: '5', taxRate: 50 }, 'UGX'), {
    currency: 'UGX',
    gross: '3',
    discount: '0',
    amount: '3',
    tax: '2',
  });
});

test('a credit line may be negative: amounts and tax keep the sign, rounding half away from zero', (t) => {
  t.deepEqual(lineAmounts({ quantity: -3, unitPrice: '10.25', discount: '-1.00', taxRate: 18 }, 'USD'), {
    currency: 'USD',
    gross: '-30.75',
    discount: '-1.00',
    amount: '-29.75',
    tax: '-5.36',
  });
});

test('a document: subtotal, discount, tax (the sum of line taxes, not the tax of the sum) and total = subtotal - discount + tax', (t) => {
  const lines = [
    lineAmounts({ quantity: 3, unitPrice: '10.25', discount: '1.00', taxRate: 18 }, 'USD'),
    lineAmounts({ quantity: 1, unitPrice: '0.05', taxRate: 18 }, 'USD'), // tax 0.009 -> 0.01
    lineAmounts({ quantity: 1, unitPrice: '0.05', taxRate: 18 }, 'USD'), // 0.01 again: 18 % of the 0.10 sum would be 0.02
  ];
  t.deepEqual(documentTotals(lines), {
    currency: 'USD',
    subtotal: '30.85',
    discount: '1.00',
    tax: '5.38',
    total: '35.23',
  });
  t.deepEqual(documentTotals([], 'UGX'), { currency: 'UGX', subtotal: '0', discount: '0', tax: '0', total: '0' });
});

test('a document without lines must name its currency; a line in another currency is refused', (t) => {
  t.throws(() => documentTotals([]), { message: /without lines must name its currency/ });
  t.throws(() => documentTotals([lineAmounts({ quantity: 1, unitPrice: '1', taxRate: 0 }, 'USD')], 'UGX'), {
    message: /a line in USD on a document in UGX/,
  });
});

test("property: a document's totals are the sums of what its lines show", (t) => {
  const line = fc.record({
    quantity: fc.integer({ min: -1000, max: 100_000 }),
    unitPrice: fc.bigInt({ min: 0n, max: 10n ** 14n }),
    discount: fc.bigInt({ min: 0n, max: 10n ** 6n }),
    taxRate: fc.constantFrom('0', '5', '12.5', '18', '16'),
  });
  fc.assert(
    fc.property(currency, fc.array(line, { minLength: 1, maxLength: 20 }), (code, inputs) => {
      const lines = inputs.map((input) =>
        lineAmounts(
          { ...input, unitPrice: written(input.unitPrice, code), discount: written(input.discount, code) },
          code,
        ),
      );
      const totals = documentTotals(lines);
      const sum = (pick: (l: (typeof lines)[number]) => string) =>
        lines.reduce((total, l) => total + units(pick(l)), 0n);
      t.is(
        units(totals.subtotal),
        inputs.reduce((total, input) => total + BigInt(input.quantity) * input.unitPrice, 0n),
      );
      t.is(
        units(totals.subtotal) - units(totals.discount),
        sum((l) => l.amount),
      );
      t.is(
        units(totals.tax),
        sum((l) => l.tax),
      );
      t.is(units(totals.total), sum((l) => l.amount) + sum((l) => l.tax));
    }),
  );
  t.pass();
});

test("amounts of 18 digits times quantities keep every digit (decimal.js's default precision of 20 would not)", (t) => {
  t.is(
    lineAmounts({ quantity: 999_999, unitPrice: '99999999999999.99', taxRate: 0 }, 'USD').gross,
    '99999899999999990000.01',
  );
  t.is(
    lineAmounts({ quantity: '999999.9999', unitPrice: '99999999999999.9999', taxRate: '18.5' }, 'KWD').tax,
    '18499999998149999981.500',
  );
  t.is(roundToCurrency('2.5', 'UGX'), '3');
  t.is(roundToCurrency('-2.5', 'UGX'), '-3');
});
