// The code-to-reason-code table (server/modules/dms/refusals.ts), row by row, pure (no database): every refusal code
// of the catalogue and every refusal reason has its row, each row gives the outcome and reason code written out
// here (not read back from the table), and the flag's text reads as the spec wants. The rows real postings reach
// are held end to end too: insufficient_stock (a sale before its stock), posting_under_way (a bounced cheque while its
// collection's posting is pending) and not_fiscalisable (the fiscal rules) in test/dms/documents.test.ts; period_closed
// (R06) in test/dms/flags.test.ts; fiscal_submitted and a held posting (R09) in test/service/dms.test.ts.
// `npm run mutate -- dms-refusals` holds the table with this file.
import test from 'ava';
import { ApiError } from '../../server/platform/errors/api-error.js';
import {
  ERROR_CATALOGUE,
  REFUSAL_REASON_CATALOGUE,
  type ErrorCode,
  type RefusalReason,
} from '../../server/platform/errors/catalogue.js';
import { DmsRejection, DmsWait } from '../../server/modules/dms/reasons.js';
import {
  asOutcome,
  REFUSAL_TABLE,
  refusalOutcome,
  refusalRow,
  type RefusalCode,
} from '../../server/modules/dms/refusals.js';

/** What the DMS does with each code, as the spec's reason-code table says it (R08: waits; R06: closed period). */
const EXPECTED: Record<string, ['wait', 'R08'] | ['reject', 'R06' | 'R09']> = {
  insufficient_stock: ['wait', 'R08'],
  posting_under_way: ['wait', 'R08'],
  period_closed: ['reject', 'R06'],
};
const expected = (code: string) => EXPECTED[code] ?? ['reject', 'R09'];

const ALL_CODES = [...Object.keys(ERROR_CATALOGUE), ...Object.keys(REFUSAL_REASON_CATALOGUE)] as RefusalCode[];

test('the table has a row for every code of the catalogue and every refusal reason, and no other', (t) => {
  t.deepEqual(Object.keys(REFUSAL_TABLE).sort(), [...ALL_CODES].sort());
});

for (const code of ALL_CODES) {
  test(`row ${code}: ${expected(code).join(' ')}`, (t) => {
    const error = new ApiError(code, `Refused: ${code}.`);
    const [outcome, reasonCode] = expected(code);
    t.deepEqual([refusalRow(error).outcome, refusalRow(error).reasonCode], [outcome, reasonCode]);
    const result = refusalOutcome(error);
    const text = result instanceof DmsWait ? result.note : result.text;
    const said =
      code === 'insufficient_stock'
        ? `Stock not yet on the location: Refused: ${code}.`
        : code === 'period_closed'
          ? `In the service: Refused: ${code}.`
          : `Refused: ${code}.`;
    t.is(text, said);
    if (outcome === 'wait') {
      t.true(result instanceof DmsWait);
      t.is((result as DmsWait).kind, 'dependency', 'a wait ends in R08 after the retry window');
    } else {
      t.true(result instanceof DmsRejection);
      t.is((result as DmsRejection).code, reasonCode);
    }
  });
}

test('a refusal reason decides over its problem code: invalid_state waits only when its posting is under way', (t) => {
  const underWay = new ApiError(
    'posting_under_way',
    'The accounting posting of INV-000001 is under way; the reversal waits for it.',
  );
  t.is(underWay.code, 'invalid_state');
  t.is(underWay.reason, 'posting_under_way');
  t.is(underWay.status, 409);
  t.true(refusalOutcome(underWay) instanceof DmsWait);
  // The same words without the reason: the words decide nothing.
  const plain = new ApiError('invalid_state', underWay.detail);
  t.is(plain.reason, undefined);
  t.like(refusalOutcome(plain), { code: 'R09', text: underWay.detail });
  for (const reason of ['held_by_accounting', 'fiscal_submitted'] as RefusalReason[]) {
    t.like(refusalOutcome(new ApiError(reason, 'Refused.')), { code: 'R09', text: 'Refused.' });
  }
  t.is(new ApiError('not_fiscalisable', 'x').code, 'business_rule');
  t.is(new ApiError('not_fiscalisable', 'x').status, 422);
});

test("a wait keeps the service's words as its note; waiting for stock, it names what is short and waits for the van named", (t) => {
  const underWay = refusalOutcome(new ApiError('posting_under_way', 'Under way (1 attempt(s)).')) as DmsWait;
  t.deepEqual([underWay.note, underWay.waitingFor], ['Under way (1 attempt(s)).', null]);
  const named = refusalOutcome(
    new ApiError('posting_under_way', 'Pending.').about({ type: 'payment', id: 'pmt_1' }),
    'V_R01-G',
  ) as DmsWait;
  t.deepEqual(
    [named.note, named.waitingFor],
    ['Pending.', 'posting:payment:pmt_1'],
    'woken when the posting of the document it is about settles, not by stock',
  );
  const stockNamed = refusalOutcome(
    new ApiError('insufficient_stock', 'Short.').about({ type: 'invoice', id: 'inv_1' }),
  ) as DmsWait;
  t.is(stockNamed.waitingFor, null, 'a stock wait wakes on stock only');
  const short = new ApiError('insufficient_stock', 'Line 1 takes V_R01-G below zero.', [
    { field: '/lines/0/quantity', code: 'insufficient_stock', message: 'V_R01-G holds 0' },
    { field: '/lines/1/quantity', code: 'insufficient_stock', message: 'V_R01-G holds 2' },
  ]);
  const onVan = refusalOutcome(short, 'V_R01-G') as DmsWait;
  t.deepEqual(
    [onVan.note, onVan.waitingFor],
    [
      'Stock not yet on the van V_R01-G: Line 1 takes V_R01-G below zero. (V_R01-G holds 0; V_R01-G holds 2)',
      'stock:V_R01-G',
    ],
  );
  const anywhere = refusalOutcome(short) as DmsWait;
  t.deepEqual(
    [anywhere.note, anywhere.waitingFor],
    ['Stock not yet on the location: Line 1 takes V_R01-G below zero. (V_R01-G holds 0; V_R01-G holds 2)', null],
  );
  const bare = refusalOutcome(new ApiError('insufficient_stock', 'Short.'), 'V_R01-G') as DmsWait;
  t.is(bare.note, 'Stock not yet on the van V_R01-G: Short.');
});

test("a rejection's text: R06 says it was the service's period; R09 gives the detail and the fields the detail does not already give", (t) => {
  t.like(refusalOutcome(new ApiError('period_closed', 'The books are closed through 2026-10-31.')), {
    code: 'R06',
    text: 'In the service: The books are closed through 2026-10-31.',
  });
  const fields = [{ field: '/lines/0/quantity', code: 'business_rule' as ErrorCode, message: 'more than was sold' }];
  t.like(refusalOutcome(new ApiError('business_rule', 'Lines return too much.', fields)), {
    code: 'R09',
    text: 'Lines return too much. (/lines/0/quantity: more than was sold)',
  });
  t.like(refusalOutcome(new ApiError('business_rule', 'Refused: /lines/0/quantity: more than was sold', fields)), {
    code: 'R09',
    text: 'Refused: /lines/0/quantity: more than was sold',
  });
  const two = [
    ...fields,
    { field: '/lines/1/quantity', code: 'business_rule' as ErrorCode, message: 'not on the invoice' },
  ];
  t.like(refusalOutcome(new ApiError('business_rule', 'Lines break rules.', two)), {
    text: 'Lines break rules. (/lines/0/quantity: more than was sold; /lines/1/quantity: not on the invoice)',
  });
});

test("asOutcome: a handler's own wait or rejection as it is, a posting function's refusal through the table, anything else is no refusal", (t) => {
  const waiting = new DmsWait('Customer UG0000001 has not been received.', 'customer:UG0000001');
  const rejected = new DmsRejection('R03', 'No cash account.');
  t.is(asOutcome(waiting), waiting);
  t.is(asOutcome(rejected), rejected);
  t.like(asOutcome(new ApiError('period_closed', 'Closed.')), { code: 'R06' });
  t.is(asOutcome(new Error('a bug')), null);
  t.is(asOutcome('not an error'), null);
});
