// The stock ledger's rules without a database (server/modules/stock/ledger.ts): its invariants, a document's plan
// (levels never below zero with every short line named, the moving average cost of receipts, removals and transfers
// at that cost), a plan accepted, and the statements that lock and write it in the ledger's one lock order, recorded
// (test/support/recording-db.ts). What the statements do to real rows, and under concurrency, is held against
// Postgres by test/domain/stock-ledger.test.ts. `npm run mutate -- stock-ledger` holds the ledger with these files.
import test from 'ava';
import { Decimal } from 'decimal.js';
import { ApiError } from '../../server/platform/errors/api-error.js';
import {
  applyPlan,
  lockLevels,
  lockStock,
  planMovements,
  postMovements,
  writeMovements,
  type Movement,
  type StockPlan,
  type StockState,
} from '../../server/modules/stock/ledger.js';
import { recordingDb, type RecordedStatement } from '../support/recording-db.js';

const field = (line: number) => `/lines/${line - 1}/quantity`;
type Valuation = { quantity: number; averageCost: Decimal };
const valuation = (quantity: number, averageCost: string): Valuation => ({
  quantity,
  averageCost: new Decimal(averageCost),
});
const state = (levels: Record<string, number>, valuations: Record<string, Valuation>): StockState => ({
  levels: new Map(Object.entries(levels)) as StockState['levels'],
  valuations: new Map(Object.entries(valuations)),
});
const plain = (valuations: Map<string, Valuation>) =>
  Object.fromEntries([...valuations].map(([p, v]) => [p, [v.quantity, v.averageCost.toFixed(6)]]));
const move = (over: Partial<Movement>): Movement => ({
  line: 1,
  productId: 'prd_a',
  fromLocationId: null,
  toLocationId: 'loc_w',
  quantity: 1,
  ...over,
});

test('a receipt averages its cost in: (on hand x average + received x cost) / (on hand + received), 6 decimals rounded half up', (t) => {
  const s = state({ 'loc_w|prd_a': 24 }, { prd_a: valuation(24, '1000') });
  const plan = planMovements(
    s,
    [move({ line: 1, quantity: 24, unitCost: '1500' }), move({ line: 2, quantity: 2, unitCost: '1' })],
    field,
  ) as StockPlan;
  t.deepEqual(plan.movements, [
    { line: 1, productId: 'prd_a', fromLocationId: null, toLocationId: 'loc_w', quantity: 24, unitCost: '1500.000000' },
    { line: 2, productId: 'prd_a', fromLocationId: null, toLocationId: 'loc_w', quantity: 2, unitCost: '1.000000' },
  ]);
  // (24 x 1000 + 24 x 1500) / 48 = 1250; then (48 x 1250 + 2 x 1) / 50 = 1200.04
  t.deepEqual(plain(plan.valuations), { prd_a: [50, '1200.040000'] });
  t.deepEqual([...plan.levels], [['loc_w|prd_a', 50]]);
  // 1 x 0 + 2 x 1 / 3 = 0.6666666...: the sixth decimal rounded up; 0.0000005 exactly is rounded up too
  const thirds = planMovements(
    state({ 'loc_w|prd_a': 1 }, { prd_a: valuation(1, '0') }),
    [move({ quantity: 2, unitCost: '1' })],
    field,
  ) as StockPlan;
  t.is(thirds.valuations.get('prd_a')!.averageCost.toFixed(), '0.666667');
  const half = planMovements(
    state({ 'loc_w|prd_a': 1 }, { prd_a: valuation(1, '0') }),
    [move({ quantity: 1, unitCost: '0.000001' })],
    field,
  ) as StockPlan;
  t.is(half.valuations.get('prd_a')!.averageCost.toFixed(), '0.000001', '0.0000005 is rounded half up');
});

test('costs keep 40 significant digits: a large cost averages exactly', async (t) => {
  // The state as the ledger reads it (its own decimal type), not as this file would build it.
  const { inTransaction } = recordingDb(
    answerLocks({ valuations: { prd_a: [1, '1234567890123456.123456'] }, levels: { 'loc_w|prd_a': 1 } }),
  );
  const receipt = move({ quantity: 2, unitCost: '1234567890123456.123457' });
  const locked = await inTransaction((tx) => lockStock(tx, 'org_1', [receipt]));
  const plan = planMovements(locked, [receipt], field) as StockPlan;
  t.is(plan.movements[0]!.unitCost, '1234567890123456.123457');
  // (1 x ...456 + 2 x ...457) / 3 = ...456.666...: 22 significant digits before rounding to 6 decimals
  t.is(plan.valuations.get('prd_a')!.averageCost.toFixed(6), '1234567890123456.123457');
  const precise = planMovements(locked, [move({ quantity: 1, unitCost: '0.000001' })], field) as StockPlan;
  // (1 x ...456 + 1 x 0.000001) / 2 = 617283945061728.0617285: the half at the 7th decimal rounded up
  t.is(precise.valuations.get('prd_a')!.averageCost.toFixed(6), '617283945061728.061729');
});

test('a receipt without a cost comes in at the moving average and leaves it; a first receipt without one comes in at zero', (t) => {
  const plan = planMovements(
    state({ 'loc_w|prd_a': 10 }, { prd_a: valuation(10, '1250.5') }),
    [move({ quantity: 5 })],
    field,
  ) as StockPlan;
  t.is(plan.movements[0]!.unitCost, '1250.500000');
  t.deepEqual(plain(plan.valuations), { prd_a: [15, '1250.500000'] });
  const first = planMovements(
    state({ 'loc_w|prd_a': 0 }, { prd_a: valuation(0, '0') }),
    [move({ quantity: 5 })],
    field,
  ) as StockPlan;
  t.deepEqual(plain(first.valuations), { prd_a: [5, '0.000000'] });
});

test('an issue carries the average out and leaves it; a transfer moves both levels and leaves the valuation', (t) => {
  const s = state({ 'loc_w|prd_a': 10, 'loc_v|prd_a': 1 }, { prd_a: valuation(11, '1250') });
  const plan = planMovements(
    s,
    [
      move({ line: 1, fromLocationId: 'loc_w', toLocationId: null, quantity: 3 }),
      move({ line: 2, fromLocationId: 'loc_w', toLocationId: 'loc_v', quantity: 7 }),
    ],
    field,
  ) as StockPlan;
  t.deepEqual(
    plan.movements.map((m) => [m.line, m.fromLocationId, m.toLocationId, m.quantity, m.unitCost]),
    [
      [1, 'loc_w', null, 3, '1250.000000'],
      [2, 'loc_w', 'loc_v', 7, '1250.000000'],
    ],
  );
  t.deepEqual(
    new Map(plan.levels),
    new Map([
      ['loc_w|prd_a', 0],
      ['loc_v|prd_a', 8],
    ]),
    'down to zero is allowed',
  );
  t.deepEqual(plain(plan.valuations), { prd_a: [8, '1250.000000'] });
});

test("a plan changes nothing of the state it is made on; applying it makes its levels and valuations the state's", (t) => {
  const s = state({ 'loc_w|prd_a': 10, 'loc_w|prd_b': 4 }, { prd_a: valuation(10, '100'), prd_b: valuation(4, '7') });
  const plan = planMovements(
    s,
    [
      move({ fromLocationId: 'loc_w', toLocationId: null, quantity: 4 }),
      move({ line: 2, quantity: 10, unitCost: '200' }),
    ],
    field,
  ) as StockPlan;
  t.deepEqual(
    [...s.levels],
    [
      ['loc_w|prd_a', 10],
      ['loc_w|prd_b', 4],
    ],
  );
  t.deepEqual(plain(s.valuations), { prd_a: [10, '100.000000'], prd_b: [4, '7.000000'] });
  t.deepEqual([...plan.levels], [['loc_w|prd_a', 16]], 'only the rows it changes');
  // The issue first (6 left at 100), then the receipt: (6 x 100 + 10 x 200) / 16 = 162.5
  t.deepEqual(plain(plan.valuations), { prd_a: [16, '162.500000'] });
  applyPlan(s, plan);
  t.deepEqual(
    [...s.levels],
    [
      ['loc_w|prd_a', 16],
      ['loc_w|prd_b', 4],
    ],
  );
  t.deepEqual(plain(s.valuations), { prd_a: [16, '162.500000'], prd_b: [4, '7.000000'] });
  // The next document is planned on the state after the first.
  const next = planMovements(s, [move({ fromLocationId: 'loc_w', toLocationId: null, quantity: 17 })], field);
  t.deepEqual(
    (next as ApiError).errors?.[0]?.message,
    'the location holds 16 base units of the product at this point of the document; the line takes 17',
  );
});

test('a removal below zero refuses the document (422 insufficient_stock), naming every short line with what the location held there', (t) => {
  const s = state({ 'loc_w|prd_a': 5, 'loc_v|prd_a': 0 }, { prd_a: valuation(5, '10') });
  const one = planMovements(s, [move({ line: 1, fromLocationId: 'loc_w', toLocationId: null, quantity: 6 })], field);
  t.true(one instanceof ApiError);
  t.is((one as ApiError).code, 'insufficient_stock');
  t.is((one as ApiError).status, 422);
  t.is(
    (one as ApiError).detail,
    'A line takes more stock than the location holds; nothing was posted. errors[] names each line.',
  );
  t.deepEqual((one as ApiError).errors, [
    {
      field: '/lines/0/quantity',
      code: 'insufficient_stock',
      message: 'the location holds 5 base units of the product at this point of the document; the line takes 6',
    },
  ]);
  t.deepEqual(
    planMovements(s, [move({ fromLocationId: 'loc_w', toLocationId: null, quantity: 5 })], field) instanceof ApiError,
    false,
    'exactly what it holds is not short',
  );

  const several = planMovements(
    s,
    [
      move({ line: 1, fromLocationId: 'loc_w', toLocationId: 'loc_v', quantity: 3 }), // 5 -> 2
      move({ line: 2, fromLocationId: 'loc_w', toLocationId: null, quantity: 3 }), // 2 -> -1: short
      move({ line: 3, fromLocationId: 'loc_v', toLocationId: null, quantity: 3 }), // the 3 line 1 moved there: fine
      move({ line: 4, fromLocationId: 'loc_w', toLocationId: null, quantity: 1 }), // -1 -> -2: short
    ],
    field,
  ) as ApiError;
  t.is(
    several.detail,
    '2 lines take more stock than the location holds; nothing was posted. errors[] names each line.',
  );
  t.deepEqual(
    several.errors?.map((e) => [e.field, e.message]),
    [
      [
        '/lines/1/quantity',
        'the location holds 2 base units of the product at this point of the document; the line takes 3',
      ],
      [
        '/lines/3/quantity',
        'the location holds -1 base units of the product at this point of the document; the line takes 1',
      ],
    ],
  );
});

test("the ledger's own invariants: a positive whole quantity, a source or a destination, two different locations, no cost on a removal", async (t) => {
  const cases: [Partial<Movement>, string][] = [
    [{ quantity: 0 }, 'stock ledger: line 4 moves 0; a movement is a positive whole number of base units'],
    [{ quantity: -2 }, 'stock ledger: line 4 moves -2; a movement is a positive whole number of base units'],
    [{ quantity: 1.5 }, 'stock ledger: line 4 moves 1.5; a movement is a positive whole number of base units'],
    [
      { quantity: 2 ** 53 },
      `stock ledger: line 4 moves ${2 ** 53}; a movement is a positive whole number of base units`,
    ],
    [{ fromLocationId: null, toLocationId: null }, 'stock ledger: line 4 has neither a source nor a destination'],
    [{ fromLocationId: 'loc_w', toLocationId: 'loc_w' }, 'stock ledger: line 4 moves from a location to itself'],
    [
      { fromLocationId: 'loc_w', toLocationId: null, unitCost: '1' },
      'stock ledger: line 4 gives a cost to a removal; removals carry the moving average',
    ],
    [
      { fromLocationId: 'loc_w', toLocationId: 'loc_v', unitCost: '1' },
      'stock ledger: line 4 gives a cost to a removal; removals carry the moving average',
    ],
  ];
  for (const [over, message] of cases) {
    const { inTransaction, statements } = recordingDb();
    const error = await t.throwsAsync(
      inTransaction((tx) => lockStock(tx, 'org_1', [move({ line: 3, quantity: 1 }), move({ line: 4, ...over })])),
      { message },
      message,
    );
    t.false(error instanceof ApiError);
    t.deepEqual(statements, [], 'nothing is locked');
  }
  for (const good of [
    { quantity: 1, unitCost: '5' },
    { fromLocationId: 'loc_w', toLocationId: null },
    { fromLocationId: 'loc_w', toLocationId: 'loc_v' },
  ]) {
    const { inTransaction } = recordingDb(answerLocks({}));
    await t.notThrowsAsync(
      inTransaction((tx) => lockStock(tx, 'org_1', [move(good)])),
      JSON.stringify(good),
    );
  }
});

/** Answers the lock statements' selects with the rows given (valuations by product, levels by `location|product`). */
function answerLocks(rows: { valuations?: Record<string, [number, string]>; levels?: Record<string, number> }) {
  return (s: RecordedStatement) => {
    if (s.sql.startsWith('select "product_id", "quantity", "average_cost"'))
      return Object.entries(rows.valuations ?? {}).map(([product_id, [quantity, average_cost]]) => ({
        product_id,
        quantity,
        average_cost,
      }));
    if (s.sql.startsWith('select "location_id"'))
      return Object.entries(rows.levels ?? {}).map(([key, quantity]) => ({
        location_id: key.split('|')[0],
        product_id: key.split('|')[1],
        quantity,
      }));
    return [];
  };
}

test('locking takes the valuations by product, then the levels by location and product, each row once, created at zero first, in byte order', async (t) => {
  const { inTransaction, statements } = recordingDb(
    answerLocks({
      valuations: { prd_B: [3, '12.5'], prd_a: [0, '0'] },
      levels: { 'loc_v|prd_B': 1, 'loc_w|prd_B': 2, 'loc_w|prd_a': 0 },
    }),
  );
  const locked = await inTransaction((tx) =>
    lockStock(tx, 'org_1', [
      move({ line: 1, productId: 'prd_a', fromLocationId: null, toLocationId: 'loc_w', quantity: 1 }),
      move({ line: 2, productId: 'prd_B', fromLocationId: 'loc_w', toLocationId: 'loc_v', quantity: 1 }),
      move({ line: 3, productId: 'prd_a', fromLocationId: 'loc_w', toLocationId: null, quantity: 1 }),
    ]),
  );
  t.deepEqual(plain(locked.valuations), { prd_B: [3, '12.500000'], prd_a: [0, '0.000000'] });
  t.deepEqual(
    [...locked.levels],
    [
      ['loc_v|prd_B', 1],
      ['loc_w|prd_B', 2],
      ['loc_w|prd_a', 0],
    ],
  );
  t.deepEqual(statements, [
    {
      sql: 'insert into "stock_valuations" ("organization_id", "product_id", "quantity", "average_cost") values ($1, $2, $3, $4), ($5, $6, $7, $8) on conflict do nothing',
      params: ['org_1', 'prd_B', 0, '0', 'org_1', 'prd_a', 0, '0'],
    }, // "B" before "a" in byte order
    {
      sql: 'select "product_id", "quantity", "average_cost" from "stock_valuations" where "organization_id" = $1 and "product_id" in ($2, $3) order by product_id COLLATE "C" for update',
      params: ['org_1', 'prd_B', 'prd_a'],
    },
    {
      sql: 'insert into "stock_levels" ("organization_id", "location_id", "product_id", "quantity") values ($1, $2, $3, $4), ($5, $6, $7, $8), ($9, $10, $11, $12) on conflict do nothing',
      params: ['org_1', 'loc_v', 'prd_B', 0, 'org_1', 'loc_w', 'prd_B', 0, 'org_1', 'loc_w', 'prd_a', 0],
    },
    {
      sql: 'select "location_id", "product_id", "quantity" from "stock_levels" where "organization_id" = $1 and (("location_id" = $2 and "product_id" = $3) or ("location_id" = $4 and "product_id" = $5) or ("location_id" = $6 and "product_id" = $7)) order by location_id COLLATE "C", product_id COLLATE "C" for update',
      params: ['org_1', 'loc_v', 'prd_B', 'loc_w', 'prd_B', 'loc_w', 'prd_a'],
    },
  ]);
});

test('the lock order sorts by location first, then product, whatever order the lines give', async (t) => {
  const { inTransaction, statements } = recordingDb(answerLocks({}));
  await inTransaction((tx) =>
    lockLevels(tx, 'org_1', [
      { locationId: 'loc_b', productId: 'prd_1' },
      { locationId: 'loc_a', productId: 'prd_2' },
      { locationId: 'loc_a', productId: 'prd_1' },
      { locationId: 'loc_b', productId: 'prd_1' },
    ]),
  );
  t.deepEqual(
    statements.map((s) => s.sql.split(' ').slice(0, 3).join(' ')),
    [
      'insert into "stock_valuations"',
      'select "product_id", "quantity",',
      'insert into "stock_levels"',
      'select "location_id", "product_id",',
    ],
    'valuations before levels',
  );
  t.deepEqual(statements[0]!.params, ['org_1', 'prd_1', 0, '0', 'org_1', 'prd_2', 0, '0']);
  t.deepEqual(statements[2]!.params, [
    'org_1',
    'loc_a',
    'prd_1',
    0,
    'org_1',
    'loc_a',
    'prd_2',
    0,
    'org_1',
    'loc_b',
    'prd_1',
    0,
  ]);
});

test('locking nothing sends nothing', async (t) => {
  const { inTransaction, statements } = recordingDb();
  const locked = await inTransaction((tx) => lockLevels(tx, 'org_1', []));
  t.deepEqual(locked, new Map());
  t.deepEqual(statements, []);
});

/** Answers the insert of movements with an id and a creation time per row, as `returning` does. */
const answerWrites = (created: Date) => (s: RecordedStatement) =>
  s.sql.startsWith('insert into "stock_movements"')
    ? Array.from({ length: s.params.length / 10 }, (_, i) => ({
        id: s.params[i * 10 + 1],
        created_at: new Date(created.getTime() + i),
      }))
    : [];

test("writing: every document's movements in one insert naming document and line, the levels and valuations in one update each", async (t) => {
  const created = new Date('2026-01-01T00:00:00Z');
  const { inTransaction, statements } = recordingDb(answerWrites(created));
  const s = state({ 'loc_w|prd_a': 7 }, { prd_a: valuation(9, '1250.5') });
  const planned = (line: number, quantity: number) => ({
    line,
    productId: 'prd_a',
    fromLocationId: 'loc_w',
    toLocationId: null,
    quantity,
    unitCost: '1250.500000',
  });
  const written = await inTransaction((tx) =>
    writeMovements(tx, 'org_1', s, [
      { document: { type: 'invoice', id: 'inv_1' }, planned: [planned(1, 2)] },
      { document: { type: 'stock_document', id: 'sdc_1' }, planned: [] },
      { document: { type: 'stock_document', id: 'sdc_2' }, planned: [planned(1, 1), planned(2, 3)] },
    ]),
  );
  t.deepEqual(
    written.map((d) => d.map((m) => [m.line, m.quantity])),
    [
      [[1, 2]],
      [],
      [
        [1, 1],
        [2, 3],
      ],
    ],
  );
  for (const m of written.flat()) t.regex(m.id, /^smv_[0-9A-HJKMNP-TV-Z]{26}$/);
  t.deepEqual(
    written.flat().map((m) => m.createdAt.getTime() - created.getTime()),
    [0, 1, 2],
    'each movement its own creation time',
  );
  t.like(written[0]![0], { productId: 'prd_a', fromLocationId: 'loc_w', toLocationId: null, unitCost: '1250.500000' });
  const ids = written.flat().map((m) => m.id);
  t.is(statements.length, 3);
  t.is(
    statements[0]!.sql,
    'insert into "stock_movements" ("organization_id", "id", "document_type", "document_id", "line_number", "product_id", "from_location_id", "to_location_id", "quantity", "unit_cost") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10), ($11, $12, $13, $14, $15, $16, $17, $18, $19, $20), ($21, $22, $23, $24, $25, $26, $27, $28, $29, $30) returning "id", "created_at"',
  );
  t.deepEqual(statements[0]!.params, [
    'org_1',
    ids[0],
    'invoice',
    'inv_1',
    1,
    'prd_a',
    'loc_w',
    null,
    2,
    '1250.500000',
    'org_1',
    ids[1],
    'stock_document',
    'sdc_2',
    1,
    'prd_a',
    'loc_w',
    null,
    1,
    '1250.500000',
    'org_1',
    ids[2],
    'stock_document',
    'sdc_2',
    2,
    'prd_a',
    'loc_w',
    null,
    3,
    '1250.500000',
  ]);
  t.deepEqual(statements[1], {
    sql: 'UPDATE stock_levels AS l SET quantity = x.quantity, updated_at = now() FROM jsonb_to_recordset($1::jsonb) AS x(location_id text, product_id text, quantity int) WHERE l.organization_id = $2 AND l.location_id = x.location_id AND l.product_id = x.product_id',
    params: [JSON.stringify([{ location_id: 'loc_w', product_id: 'prd_a', quantity: 7 }]), 'org_1'],
  });
  t.deepEqual(statements[2], {
    sql: 'UPDATE stock_valuations AS v SET quantity = x.quantity, average_cost = x.average_cost, updated_at = now() FROM jsonb_to_recordset($1::jsonb) AS x(product_id text, quantity int, average_cost numeric) WHERE v.organization_id = $2 AND v.product_id = x.product_id',
    params: [JSON.stringify([{ product_id: 'prd_a', quantity: 9, average_cost: '1250.500000' }]), 'org_1'],
  });
});

test('writing nothing sends nothing: no movements, no rows of the state', async (t) => {
  const { inTransaction, statements } = recordingDb(answerWrites(new Date()));
  t.deepEqual(
    await inTransaction((tx) =>
      writeMovements(tx, 'org_1', state({}, {}), [{ document: { type: 'invoice', id: 'inv_1' }, planned: [] }]),
    ),
    [[]],
  );
  t.deepEqual(statements, []);
});

test('posting one document: locks, plans, writes; a short line refuses it before anything is written', async (t) => {
  const created = new Date('2026-01-01T00:00:00Z');
  const answerLock = answerLocks({ valuations: { prd_a: [4, '10'] }, levels: { 'loc_w|prd_a': 4 } });
  const ok = recordingDb((s) => [...answerLock(s), ...answerWrites(created)(s)]);
  const posted = await ok.inTransaction((tx) =>
    postMovements(
      tx,
      'org_1',
      { type: 'stock_document', id: 'sdc_1' },
      [move({ fromLocationId: 'loc_w', toLocationId: null, quantity: 4 })],
      field,
    ),
  );
  t.like(posted[0], { line: 1, quantity: 4, unitCost: '10.000000', createdAt: created });
  t.deepEqual(
    ok.statements.slice(4).map((s) => s.sql.split(' ').slice(0, 3).join(' ')),
    ['insert into "stock_movements"', 'UPDATE stock_levels AS', 'UPDATE stock_valuations AS'],
    'after the locks: the movement, the level, the valuation',
  );
  t.is(JSON.parse(ok.statements[5]!.params[0] as string)[0].quantity, 0, 'the level after the plan');
  t.deepEqual(JSON.parse(ok.statements[6]!.params[0] as string), [
    { product_id: 'prd_a', quantity: 0, average_cost: '10.000000' },
  ]);

  const short = recordingDb(answerLock);
  const error = await t.throwsAsync(
    short.inTransaction((tx) =>
      postMovements(
        tx,
        'org_1',
        { type: 'stock_document', id: 'sdc_1' },
        [move({ fromLocationId: 'loc_w', toLocationId: null, quantity: 5 })],
        field,
      ),
    ),
    { instanceOf: ApiError },
  );
  t.is(error?.code, 'insufficient_stock');
  t.is(short.statements.length, 4, 'the locks only');
});
