// The empties ledger's rules without a database (server/modules/stock/empties.ts): the direction each movement type
// has, the ledger's own invariants, what a document does to what customers hold (never below zero, every short line
// named), and the statements that lock and write it, recorded (test/support/recording-db.ts). What the statements do
// to real rows is held against Postgres by test/domain/empties.test.ts. `npm run mutate -- empties` holds the ledger
// with these two files.
import test from 'ava';
import { ApiError } from '../../server/platform/errors/api-error.js';
import {
  lockEmpties,
  planEmpties,
  postEmptiesMovements,
  writeEmpties,
  type EmptiesMove,
} from '../../server/modules/stock/empties.js';
import { recordingDb } from '../support/recording-db.js';

const field = (line: number) => `/lines/${line - 1}/quantity`;
const move = (over: Partial<EmptiesMove>): EmptiesMove => ({
  line: 1,
  type: 'adjustment',
  direction: 'out',
  productId: 'prd_crate',
  quantity: 1,
  customerId: 'cus_a',
  tripId: null,
  locationId: null,
  stockMovementId: null,
  ...over,
});

test('each movement type has its one direction; an adjustment may go either way', async (t) => {
  const expected = {
    issued_with_sale: 'out',
    collected: 'in',
    received_from_supplier: 'in',
    returned_to_supplier: 'out',
    bought_back: 'in',
  } as const;
  for (const [type, direction] of Object.entries(expected) as [keyof typeof expected, 'in' | 'out'][]) {
    const wrong = direction === 'in' ? 'out' : 'in';
    const { inTransaction } = recordingDb();
    await t.throwsAsync(
      inTransaction((tx) => lockEmpties(tx, 'org_1', [move({ type, direction: wrong, customerId: null })])),
      { message: `empties ledger: ${type} goes ${direction}, not ${wrong}` },
      type,
    );
    await t.notThrowsAsync(
      inTransaction((tx) => lockEmpties(tx, 'org_1', [move({ type, direction, customerId: null })])),
      type,
    );
  }
  const { inTransaction } = recordingDb();
  await t.notThrowsAsync(
    inTransaction((tx) =>
      lockEmpties(tx, 'org_1', [
        move({ direction: 'in', customerId: null }),
        move({ line: 2, direction: 'out', customerId: null }),
      ]),
    ),
  );
});

test('a movement is a positive whole number of pieces (a failure is a bug in the caller, not a refusal)', async (t) => {
  for (const quantity of [0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1, Number.NaN]) {
    const { inTransaction, statements } = recordingDb();
    const error = await t.throwsAsync(
      inTransaction((tx) => lockEmpties(tx, 'org_1', [move({ line: 3, quantity })])),
      { message: `empties ledger: line 3 moves ${quantity}` },
      String(quantity),
    );
    t.false(error instanceof ApiError);
    t.deepEqual(statements, [], 'nothing is locked');
  }
  const { inTransaction } = recordingDb();
  await t.notThrowsAsync(inTransaction((tx) => lockEmpties(tx, 'org_1', [move({ quantity: 1, customerId: null })])));
});

test('out adds to what the customer holds, in takes from it, line after line of the document', (t) => {
  const held = new Map([
    ['cus_a|prd_crate', 5],
    ['cus_b|prd_crate', 0],
  ]);
  const after = planEmpties(
    held,
    [
      move({ line: 1, direction: 'out', quantity: 3 }),
      move({ line: 2, direction: 'in', quantity: 8, type: 'collected' }), // 5 + 3 - 8 = 0: down to zero is allowed
      move({ line: 3, direction: 'out', quantity: 2, customerId: 'cus_b', type: 'issued_with_sale' }),
      move({
        line: 4,
        direction: 'in',
        quantity: 4,
        customerId: null,
        locationId: 'loc_1',
        type: 'received_from_supplier',
      }), // no customer: no holding
    ],
    field,
  );
  t.deepEqual(
    after,
    new Map([
      ['cus_a|prd_crate', 0],
      ['cus_b|prd_crate', 2],
    ]),
  );
  t.deepEqual(
    held,
    new Map([
      ['cus_a|prd_crate', 5],
      ['cus_b|prd_crate', 0],
    ]),
    'the plan does not change what it was given',
  );
});

test('a document that takes a holding below zero is refused whole, naming each short line with what the customer held there', (t) => {
  const held = new Map([
    ['cus_a|prd_crate', 3],
    ['cus_a|prd_bottle', 10],
  ]);
  const single = planEmpties(held, [move({ line: 1, direction: 'in', quantity: 4 })], field);
  t.true(single instanceof ApiError);
  const one = single as ApiError;
  t.is(one.code, 'business_rule');
  t.is(
    one.detail,
    'A line takes back more empties than the customer holds; nothing was posted. errors[] names each line.',
  );
  t.deepEqual(one.errors, [
    {
      field: '/lines/0/quantity',
      code: 'business_rule',
      message: 'the customer holds 3 of this empty at this point of the document; the line takes back 4',
    },
  ]);

  const several = planEmpties(
    held,
    [
      move({ line: 1, direction: 'in', quantity: 2 }), // 3 -> 1
      move({ line: 2, direction: 'in', quantity: 2 }), // 1 -> -1: short
      move({ line: 3, direction: 'in', quantity: 10, productId: 'prd_bottle' }), // 10 -> 0: fine
      move({ line: 4, direction: 'in', quantity: 1 }), // -1 -> -2: short again, from what line 2 left
    ],
    field,
  ) as ApiError;
  t.deepEqual(
    several.errors?.map((e) => [e.field, e.message]),
    [
      ['/lines/1/quantity', 'the customer holds 1 of this empty at this point of the document; the line takes back 2'],
      ['/lines/3/quantity', 'the customer holds -1 of this empty at this point of the document; the line takes back 1'],
    ],
  );
});

test("locking: only the customers' holdings are locked, each (customer, product) once, created at zero first, in byte order", async (t) => {
  const { inTransaction, statements } = recordingDb((s) =>
    s.sql.startsWith('select')
      ? [
          { customer_id: 'cus_a', product_id: 'prd_crate', quantity: 7 },
          { customer_id: 'cus_b', product_id: 'prd_crate', quantity: 0 },
        ]
      : [],
  );
  const held = await inTransaction((tx) =>
    lockEmpties(tx, 'org_1', [
      move({ line: 1, customerId: 'cus_b' }),
      move({ line: 2, customerId: 'cus_a' }),
      move({ line: 3, customerId: 'cus_b' }),
      move({ line: 4, customerId: null, locationId: 'loc_1', type: 'returned_to_supplier', direction: 'out' }),
    ]),
  );
  t.deepEqual(
    held,
    new Map([
      ['cus_a|prd_crate', 7],
      ['cus_b|prd_crate', 0],
    ]),
  );
  t.deepEqual(statements, [
    {
      sql: 'insert into "customer_empties" ("organization_id", "customer_id", "product_id", "quantity") values ($1, $2, $3, $4), ($5, $6, $7, $8) on conflict do nothing',
      params: ['org_1', 'cus_b', 'prd_crate', 0, 'org_1', 'cus_a', 'prd_crate', 0],
    },
    {
      sql: 'select "customer_id", "product_id", "quantity" from "customer_empties" where "organization_id" = $1 and (("customer_id" = $2 and "product_id" = $3) or ("customer_id" = $4 and "product_id" = $5)) order by customer_id COLLATE "C", product_id COLLATE "C" for update',
      params: ['org_1', 'cus_b', 'prd_crate', 'cus_a', 'prd_crate'],
    },
  ]);
});

test('locking moves without a customer locks nothing', async (t) => {
  const { inTransaction, statements } = recordingDb();
  const held = await inTransaction((tx) =>
    lockEmpties(tx, 'org_1', [
      move({ customerId: null, locationId: 'loc_1', type: 'received_from_supplier', direction: 'in' }),
    ]),
  );
  t.deepEqual(held, new Map());
  t.deepEqual(statements, []);
});

test("writing: every document's moves in one insert naming their document and line, then the holdings in one update; each document's ids", async (t) => {
  const { inTransaction, statements } = recordingDb();
  const first = { type: 'invoice', id: 'inv_1' };
  const second = { type: 'return', id: 'rtn_1' };
  const ids = await inTransaction((tx) =>
    writeEmpties(tx, 'org_1', new Map([['cus_a|prd_crate', 4]]), [
      {
        document: first,
        moves: [
          move({
            line: 1,
            type: 'issued_with_sale',
            direction: 'out',
            quantity: 4,
            tripId: 'trp_1',
            locationId: 'loc_1',
            stockMovementId: 'smv_1',
          }),
        ],
      },
      { document: second, moves: [] },
      {
        document: second,
        moves: [
          move({ line: 2, type: 'collected', direction: 'in', quantity: 1 }),
          move({ line: 3, customerId: null, locationId: 'loc_2', type: 'bought_back', direction: 'in', quantity: 2 }),
        ],
      },
    ]),
  );
  t.is(ids.length, 3);
  t.is(ids[0]!.length, 1);
  t.deepEqual(ids[1], []);
  t.is(ids[2]!.length, 2);
  for (const id of ids.flat()) t.regex(id, /^emv_[0-9A-HJKMNP-TV-Z]{26}$/);
  t.is(new Set(ids.flat()).size, 3);
  t.is(statements.length, 2);
  t.is(
    statements[0]!.sql,
    `insert into "empties_movements" ("organization_id", "id", "type", "direction", "product_id", "quantity", "customer_id", "trip_id", "location_id", "stock_movement_id", "document_type", "document_id", "line_number") values ${[0, 1, 2].map((row) => `(${Array.from({ length: 13 }, (_, column) => `$${row * 13 + column + 1}`).join(', ')})`).join(', ')}`,
  );
  t.deepEqual(statements[0]!.params, [
    'org_1',
    ids[0]![0],
    'issued_with_sale',
    'out',
    'prd_crate',
    4,
    'cus_a',
    'trp_1',
    'loc_1',
    'smv_1',
    'invoice',
    'inv_1',
    1,
    'org_1',
    ids[2]![0],
    'collected',
    'in',
    'prd_crate',
    1,
    'cus_a',
    null,
    null,
    null,
    'return',
    'rtn_1',
    2,
    'org_1',
    ids[2]![1],
    'bought_back',
    'in',
    'prd_crate',
    2,
    null,
    null,
    'loc_2',
    null,
    'return',
    'rtn_1',
    3,
  ]);
  t.is(
    statements[1]!.sql,
    'UPDATE customer_empties AS c SET quantity = x.quantity, updated_at = now() FROM jsonb_to_recordset($1::jsonb) AS x(customer_id text, product_id text, quantity int) WHERE c.organization_id = $2 AND c.customer_id = x.customer_id AND c.product_id = x.product_id',
  );
  t.deepEqual(statements[1]!.params, [
    JSON.stringify([{ customer_id: 'cus_a', product_id: 'prd_crate', quantity: 4 }]),
    'org_1',
  ]);
});

test('writing documents without moves writes nothing; moves without a customer leave the holdings alone', async (t) => {
  const none = recordingDb();
  t.deepEqual(
    await none.inTransaction((tx) =>
      writeEmpties(tx, 'org_1', new Map([['cus_a|prd_crate', 1]]), [
        { document: { type: 'invoice', id: 'inv_1' }, moves: [] },
        { document: { type: 'invoice', id: 'inv_2' }, moves: [] },
      ]),
    ),
    [[], []],
  );
  t.deepEqual(none.statements, []);
  const supplier = recordingDb();
  const ids = await supplier.inTransaction((tx) =>
    writeEmpties(tx, 'org_1', new Map(), [
      {
        document: { type: 'empties_receipt', id: 'sdc_1' },
        moves: [move({ customerId: null, locationId: 'loc_1', type: 'received_from_supplier', direction: 'in' })],
      },
    ]),
  );
  t.is(ids[0]!.length, 1);
  t.deepEqual(
    supplier.statements.map((s) => s.sql.split(' ').slice(0, 3).join(' ')),
    ['insert into "empties_movements"'],
    'the insert alone',
  );
});

test('posting one document: locks, plans, then writes the moves and the holdings after them; a short line refuses it before anything is written', async (t) => {
  const answer = (s: { sql: string }) =>
    s.sql.startsWith('select') ? [{ customer_id: 'cus_a', product_id: 'prd_crate', quantity: 2 }] : [];
  const ok = recordingDb(answer);
  const ids = await ok.inTransaction((tx) =>
    postEmptiesMovements(
      tx,
      'org_1',
      { type: 'invoice', id: 'inv_1' },
      [
        move({ line: 1, type: 'collected', direction: 'in', quantity: 2 }),
        move({ line: 2, type: 'issued_with_sale', direction: 'out', quantity: 5 }),
      ],
      field,
    ),
  );
  t.is(ids.length, 2);
  t.deepEqual(
    ok.statements.map((s) => s.sql.split(' ').slice(0, 3).join(' ')),
    [
      'insert into "customer_empties"',
      'select "customer_id", "product_id",',
      'insert into "empties_movements"',
      'UPDATE customer_empties AS',
    ],
  );
  t.deepEqual(ok.statements[2]!.params.filter((p) => p === 'inv_1').length, 2, 'both moves name the document');
  t.deepEqual(
    JSON.parse(ok.statements[3]!.params[0] as string),
    [{ customer_id: 'cus_a', product_id: 'prd_crate', quantity: 5 }],
    '2 - 2 + 5',
  );

  const short = recordingDb(answer);
  const error = await t.throwsAsync(
    short.inTransaction((tx) =>
      postEmptiesMovements(
        tx,
        'org_1',
        { type: 'invoice', id: 'inv_1' },
        [move({ line: 1, type: 'collected', direction: 'in', quantity: 3 })],
        field,
      ),
    ),
    { instanceOf: ApiError },
  );
  t.is(error?.code, 'business_rule');
  t.deepEqual(
    error?.errors?.map((e) => e.field),
    ['/lines/0/quantity'],
  );
  t.is(short.statements.length, 2, 'the locks only');
});
