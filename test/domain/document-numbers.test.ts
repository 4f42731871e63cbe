// Document numbers (server/domain/documents/numbers.ts): gap-free per organisation and document type, taken in the
// document's transaction, against a real PostgreSQL (this file's own migrated database).
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import type { DB } from '../../generated/kysely/types.js';
import { formatDocumentNumber, nextDocumentNumber } from '../../server/domain/documents/numbers.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let database: TestDatabase;
let db: Kysely<DB>;
test.before(async () => {
  database = await createTestDatabase('document_numbers');
  // Room for 20 transactions open at once, so that the concurrency tests are concurrent in PostgreSQL too.
  db = new Kysely<DB>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url, max: 25 }) }),
  });
});
test.after.always(async () => {
  await db?.destroy();
  await database?.drop();
});

async function organization(): Promise<string> {
  const id = `org_${randomUUID()}`;
  await db
    .insertInto('organizations')
    .values({ id, name: `Distributor ${id}`, base_currency: 'UGX', api_access_enabled: true })
    .execute();
  return id;
}

const take = (organizationId: string, type = 'invoice', prefix = 'INV') =>
  db.transaction().execute((tx) => nextDocumentNumber(tx, organizationId, type, prefix));
const numbered = (count: number, from = 1, prefix = 'INV') =>
  Array.from({ length: count }, (_, i) => `${prefix}-${String(from + i).padStart(6, '0')}`);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('a number is the prefix, a hyphen and six digits at least', (t) => {
  t.is(formatDocumentNumber('INV', 1), 'INV-000001');
  t.is(formatDocumentNumber('CN', 123456), 'CN-123456');
  t.is(formatDocumentNumber('INV', 1234567), 'INV-1234567');
});

test('numbers start at 1 and follow each other: 1, 2, 3', async (t) => {
  const org = await organization();
  t.is(await take(org), 'INV-000001');
  t.is(await take(org), 'INV-000002');
  t.is(await take(org), 'INV-000003');
  const row = await db
    .selectFrom('document_sequences')
    .select('last_number')
    .where('organization_id', '=', org)
    .where('document_type', '=', 'invoice')
    .executeTakeFirstOrThrow();
  t.is(row.last_number, 3);
});

test('each document type and each organisation has its own sequence', async (t) => {
  const a = await organization();
  const b = await organization();
  t.is(await take(a), 'INV-000001');
  t.is(await take(a), 'INV-000002');
  t.is(await take(a, 'credit_note', 'CN'), 'CN-000001');
  t.is(await take(b), 'INV-000001');
  t.is(await take(b, 'credit_note', 'CN'), 'CN-000001');
  t.is(await take(a), 'INV-000003');
  t.is(await take(a, 'credit_note', 'CN'), 'CN-000002');
});

test('a rolled-back document gives its number back: the next document gets it, no gap', async (t) => {
  const org = await organization();
  t.is(await take(org), 'INV-000001');
  await t.throwsAsync(
    db.transaction().execute(async (tx) => {
      t.is(await nextDocumentNumber(tx, org, 'invoice', 'INV'), 'INV-000002');
      t.is(
        await nextDocumentNumber(tx, org, 'invoice', 'INV'),
        'INV-000003',
        'a second document in the same transaction',
      );
      throw new Error('the documents were refused after taking their numbers');
    }),
    { message: /refused after taking/ },
  );
  t.is(await take(org), 'INV-000002');
});

test('the first number of a type rolled back leaves no sequence behind: the next document is 1 again', async (t) => {
  const org = await organization();
  await t.throwsAsync(
    db.transaction().execute(async (tx) => {
      t.is(await nextDocumentNumber(tx, org, 'invoice', 'INV'), 'INV-000001');
      throw new Error('refused');
    }),
  );
  t.is(await take(org), 'INV-000001');
});

test('20 concurrent transactions get 20 distinct consecutive numbers (the first of them creating the sequence)', async (t) => {
  const org = await organization();
  const numbers = await Promise.all(
    Array.from({ length: 20 }, () =>
      db.transaction().execute(async (tx) => {
        const number = await nextDocumentNumber(tx, org, 'invoice', 'INV');
        await pause(5); // hold the transaction open, as a document writing its lines does
        return number;
      }),
    ),
  );
  t.deepEqual([...numbers].sort(), numbered(20));
  t.is(await take(org), 'INV-000021');
});

test('20 concurrent transactions of which half roll back: the 10 committed still have 1 to 10, no gap', async (t) => {
  const org = await organization();
  t.is(await take(org), 'INV-000001');
  const outcomes = await Promise.allSettled(
    Array.from({ length: 20 }, (_, i) =>
      db.transaction().execute(async (tx: Transaction<DB>) => {
        const number = await nextDocumentNumber(tx, org, 'invoice', 'INV');
        await pause(2);
        if (i % 2 === 1) throw new Error(`refused ${number}`);
        return number;
      }),
    ),
  );
  const committed = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
  t.is(outcomes.filter((outcome) => outcome.status === 'rejected').length, 10);
  t.deepEqual([...committed].sort(), numbered(10, 2));
  t.is(await take(org), 'INV-000012');
});

test('a sequence needs its organisation: a number for an unknown one is refused by the foreign key', async (t) => {
  const error = await t.throwsAsync(take('org_missing'));
  t.is((error as { code?: string }).code, '23503'); // foreign_key_violation
});
