// Document lifecycles as tables (server/domain/documents/transitions.ts): pure, no database. The guarded UPDATE is
// checked as the SQL Kysely sends, through a driver that records statements and answers with a row count.
import test from 'ava';
import {
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
} from 'kysely';
import type { DB } from '../../generated/kysely/types.js';
import {
  applyTransition,
  defineTransitions,
  validateTransitions,
  type Transitions,
} from '../../server/domain/documents/transitions.js';
import { ApiError } from '../../server/platform/errors/api-error.js';
import { invoiceLifecycle } from '../../server/modules/invoices/lifecycle.js';

type OrderStatus = 'open' | 'invoiced' | 'paid' | 'cancelled';
type OrderCommand = 'invoice' | 'pay' | 'cancel';
const order = defineTransitions<OrderStatus, OrderCommand>('order', 'open', {
  open: [
    { command: 'invoice', to: 'invoiced', event: 'order.invoiced' },
    { command: 'cancel', to: 'cancelled', event: 'order.cancelled' },
  ],
  invoiced: [
    { command: 'pay', to: 'paid', event: 'order.paid' },
    { command: 'cancel', to: 'cancelled', event: 'order.cancelled' },
  ],
  paid: [],
  cancelled: [],
});

test('an allowed command gives the move: the status it leads to and the event it writes', (t) => {
  t.deepEqual(order.next('open', 'cancel'), { to: 'cancelled', event: 'order.cancelled' });
  t.deepEqual(order.next('open', 'invoice'), { to: 'invoiced', event: 'order.invoiced' });
  t.deepEqual(order.next('invoiced', 'pay', 'ord_1'), { to: 'paid', event: 'order.paid' });
});

test('a refused command is 409 invalid_state naming the document, its status, where the command is allowed and what its status allows', (t) => {
  const final = t.throws(() => order.next('cancelled', 'cancel', 'ord_1'), { instanceOf: ApiError });
  t.is(final?.code, 'invalid_state');
  t.is(final?.status, 409);
  t.is(
    final?.detail,
    'Order ord_1 is cancelled; cancel is allowed only from open or invoiced (from cancelled: nothing, it is final).',
  );
  const early = t.throws(() => order.next('open', 'pay', 'ord_2'), { instanceOf: ApiError });
  t.is(early?.detail, 'Order ord_2 is open; pay is allowed only from invoiced (from open: invoice, cancel).');
  const anonymous = t.throws(() => order.next('paid', 'invoice'), { instanceOf: ApiError });
  t.is(anonymous?.detail, 'The order is paid; invoice is allowed only from open (from paid: nothing, it is final).');
});

test('a document type of two words is named in words; a command in no row is allowed from no status', (t) => {
  const note = defineTransitions<'draft' | 'posted', 'post' | 'void'>('credit_note', 'draft', {
    draft: [{ command: 'post', to: 'posted', event: 'credit_note.posted' }],
    posted: [],
  });
  t.is(
    t.throws(() => note.next('posted', 'post', 'cn_1'))?.message,
    'invalid_state: Credit note cn_1 is posted; post is allowed only from draft (from posted: nothing, it is final).',
  );
  t.is(
    (t.throws(() => note.next('draft', 'void', 'cn_1')) as ApiError).detail,
    'Credit note cn_1 is draft; void is allowed only from no status (from draft: post).',
  );
});

test('a move the service makes itself is named in a refusal by what makes it, never as a command a client could send', (t) => {
  // Issue 38: the void of a paid invoice said "(from paid: reopen)", and no operation reopens an invoice.
  const paid = t.throws(() => invoiceLifecycle.next('paid', 'void', 'inv_1'), { instanceOf: ApiError });
  t.is(
    paid?.detail,
    'Invoice inv_1 is paid; void is allowed only from open (from paid: nothing on request; it becomes open when a payment or credit on it is reversed).',
  );
  const open = t.throws(() => invoiceLifecycle.next('open', 'reopen', 'inv_2'), { instanceOf: ApiError });
  t.is(
    open?.detail,
    'Invoice inv_2 is open; reopen is allowed only from paid (from open: void; it becomes paid when its balance reaches zero).',
  );
});

test('the commands allowed from a status are its row, in order; a terminal status allows none', (t) => {
  t.deepEqual(order.allowedCommands('open'), ['invoice', 'cancel']);
  t.deepEqual(order.allowedCommands('invoiced'), ['pay', 'cancel']);
  t.deepEqual(order.allowedCommands('paid'), []);
  t.deepEqual(order.allowedCommands('cancelled'), []);
  t.is(order.initial, 'open');
  t.is(order.documentType, 'order');
});

test('a status the table does not know (one read from the database) is a server error, not a 409', (t) => {
  const error = t.throws(() => order.next('archived' as OrderStatus, 'cancel', 'ord_1'));
  t.false(error instanceof ApiError);
  t.is(error?.message, 'order: archived is not a status of the table');
  t.throws(() => order.allowedCommands('archived' as OrderStatus), { message: /archived is not a status/ });
});

test('a move to a status without a row is refused when the table is defined', (t) => {
  const table = { a: [{ command: 'go', to: 'c' as 'b', event: 'thing.moved' }], b: [] } satisfies Transitions<
    'a' | 'b',
    'go'
  >;
  t.throws(() => validateTransitions(table, 'a', 'thing'), {
    message: 'thing: a --go--> c, which is not a status; b cannot be reached from a',
  });
  t.throws(() => defineTransitions('thing', 'a', table), { message: /a --go--> c, which is not a status/ });
});

test('a status that no move reaches from the initial one is refused when the table is defined', (t) => {
  t.throws(
    () =>
      defineTransitions<'draft' | 'posted' | 'lost' | 'found', 'post' | 'find'>('invoice', 'draft', {
        draft: [{ command: 'post', to: 'posted', event: 'invoice.posted' }],
        posted: [],
        lost: [{ command: 'find', to: 'found', event: 'invoice.found' }], // lost leads somewhere, but nothing leads to lost
        found: [],
      }),
    { message: 'invoice: lost, found cannot be reached from draft' },
  );
});

test('a status reached only through several moves is reachable', (t) => {
  t.notThrows(() =>
    validateTransitions<'a' | 'b' | 'c' | 'd', 'go'>(
      {
        a: [{ command: 'go', to: 'b', event: 'e' }],
        b: [{ command: 'go', to: 'c', event: 'e' }],
        c: [{ command: 'go', to: 'd', event: 'e' }],
        d: [],
      },
      'a',
    ),
  );
});

test('a status listing one command twice is refused (which move would it make?)', (t) => {
  t.throws(
    () =>
      validateTransitions<'a' | 'b', 'go'>(
        {
          a: [
            { command: 'go', to: 'b', event: 'e' },
            { command: 'go', to: 'a', event: 'e' },
          ],
          b: [],
        },
        'a',
        'thing',
      ),
    { message: 'thing: a lists go twice' },
  );
});

test('an initial status without a row is refused', (t) => {
  t.throws(() => validateTransitions<'a', 'go'>({ a: [] }, 'z' as 'a'), {
    message: 'transitions: the initial status z has no row; a cannot be reached from z',
  });
});

test('every status must have a row: leaving one out does not compile', (t) => {
  // @ts-expect-error -- `cancelled` has no row
  const table: Transitions<'open' | 'cancelled', 'cancel'> = {
    open: [{ command: 'cancel', to: 'cancelled', event: 'order.cancelled' }],
  };
  t.truthy(table);
});

/** A Kysely over a driver that records each statement and answers every UPDATE with `affected` rows. */
function recording(affected: bigint) {
  const statements: CompiledQuery[] = [];
  const connection: DatabaseConnection = {
    async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      statements.push(query);
      return { rows: [], numAffectedRows: affected };
    },
    // eslint-disable-next-line require-yield
    // biome-ignore lint/correctness/useYield: a stub of the driver's interface that the test never calls.
    async *streamQuery() {
      throw new Error('not used');
    },
  };
  const driver: Driver = {
    init: async () => {},
    acquireConnection: async () => connection,
    beginTransaction: async () => {},
    commitTransaction: async () => {},
    rollbackTransaction: async () => {},
    releaseConnection: async () => {},
    destroy: async () => {},
  };
  const db = new Kysely<DB>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (inner) => new PostgresIntrospector(inner),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  return { db, statements };
}

test('a move is persisted by one UPDATE guarded by the organisation, the id and the status it leaves', async (t) => {
  const { db, statements } = recording(1n);
  await db
    .transaction()
    .execute((tx) =>
      applyTransition(tx, { table: 'customers', organizationId: 'org_1', id: 'cus_1', from: 'active', to: 'blocked' }),
    );
  t.is(statements.length, 1);
  t.is(
    statements[0]!.sql,
    'update "customers" set "status" = $1, "updated_at" = now() where "organization_id" = $2 and "id" = $3 and "status" = $4',
  );
  t.deepEqual(statements[0]!.parameters, ['blocked', 'org_1', 'cus_1', 'active']);
});

test('a move that updates no row (another request moved the document first) is 409 invalid_state', async (t) => {
  const { db } = recording(0n);
  const error = await t.throwsAsync(
    db.transaction().execute((tx) =>
      applyTransition(tx, {
        table: 'customers',
        organizationId: 'org_1',
        id: 'cus_1',
        from: 'active',
        to: 'blocked',
        documentType: 'customer',
      }),
    ),
    { instanceOf: ApiError },
  );
  t.is(error?.status, 409);
  t.is(
    error?.detail,
    'The customer cus_1 is not active any more (or is not there): another request changed it first. Read it again.',
  );
  const unnamed = await t.throwsAsync(
    db.transaction().execute((tx) =>
      applyTransition(tx, {
        table: 'customers',
        organizationId: 'org_1',
        id: 'cus_1',
        from: 'active',
        to: 'blocked',
      }),
    ),
    { instanceOf: ApiError },
  );
  t.regex(unnamed!.detail, /^The customers cus_1 is not active any more/);
});

test('move checks the command first (a refused one writes nothing), then persists the move and returns its event', async (t) => {
  const { db, statements } = recording(1n);
  const target = { table: 'customers', organizationId: 'org_1', id: 'ord_1' } as const;
  await t.throwsAsync(
    db.transaction().execute((tx) => order.move(tx, { ...target, from: 'paid' }, 'cancel')),
    { instanceOf: ApiError },
  );
  t.is(statements.length, 0);
  t.deepEqual(await db.transaction().execute((tx) => order.move(tx, { ...target, from: 'invoiced' }, 'pay')), {
    to: 'paid',
    event: 'order.paid',
  });
  t.deepEqual(statements[0]!.parameters, ['paid', 'org_1', 'ord_1', 'invoiced']);
  const { db: raced } = recording(0n);
  const error = await t.throwsAsync(
    raced.transaction().execute((tx) => order.move(tx, { ...target, from: 'open' }, 'cancel')),
    { instanceOf: ApiError },
  );
  t.is(
    error?.detail,
    'The order ord_1 is not open any more (or is not there): another request changed it first. Read it again.',
  );
});
