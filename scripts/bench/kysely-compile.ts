// Kysely's own cost per query: building and compiling a statement to SQL text and parameters, with no database
// (a dummy driver). Runnable alone (`node --import tsx scripts/bench/kysely-compile.ts`); npm run bench prints it.
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely';
import type { DB } from '../../generated/kysely/types.js';
import { keyQuery } from '../../server/platform/access/authenticate.js';

const db = new Kysely<DB>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new PostgresIntrospector(k),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});
const ORG = 'org_01M8000000000000000000000A';
const at = new Date('2026-11-24T00:00:00.000Z');

const queries: Record<string, () => { sql: string }> = {
  // Built once at start since the key read became a prepared statement (platform/database/prepared.ts), and run
  // only for a key not yet in the process's memory: shown for the cost that saves.
  'key read (once at start)': () => keyQuery(db, 'erp_abcdefghjk', 'h'.repeat(64), 'production').compile(),
  'read by id': () =>
    db
      .selectFrom('customers as t')
      .selectAll('t')
      .where('t.organization_id', '=', ORG)
      .where('t.id', '=', 'cus_1')
      .compile(),
  'insert + returning': () =>
    db
      .insertInto('customers')
      .values({
        organization_id: ORG,
        id: 'cus_1',
        outlet_code: 'UG1',
        name: 'Shop',
        status: 'active',
        channel: 'retail',
        address: { city: 'Kampala' },
        created_at: sql`now()`,
        updated_at: sql`now()`,
      })
      .returningAll()
      .compile(),
  'keyset page of 100 (feed)': () =>
    db
      .selectFrom('customers as t')
      .selectAll('t')
      .where('t.organization_id', '=', ORG)
      .where((eb) => eb(eb.refTuple('t.updated_at', 't.id'), '>', eb.tuple(at, 'cus_1')))
      .orderBy('t.updated_at')
      .orderBy('t.id')
      .limit(101)
      .compile(),
  'upsert (external code)': () =>
    db
      .insertInto('external_codes')
      .values({ organization_id: ORG, resource: 'customer', code_system: 'dms', code: 'D1', record_id: 'cus_1' })
      .onConflict((conflict) =>
        conflict
          .columns(['organization_id', 'resource', 'record_id', 'code_system'])
          .doUpdateSet((eb) => ({ code: eb.ref('excluded.code') })),
      )
      .returning('record_id')
      .compile(),
  // The statement idempotent creates write (platform/http/idempotency.ts): an expired result of the key is replaced.
  'idempotency key upsert': () =>
    db
      .insertInto('idempotency_keys')
      .values((eb) => ({
        organization_id: ORG,
        api_key_id: 'key_1',
        key: 'k',
        method: 'POST',
        path: '/api/v1/customers',
        request_hash: 'h',
        response_status: 201,
        response_body: '{}',
        created_at: eb.fn('now'),
      }))
      .onConflict((conflict) =>
        conflict.columns(['organization_id', 'api_key_id', 'key']).doUpdateSet((eb) => ({
          method: eb.ref('excluded.method'),
          path: eb.ref('excluded.path'),
          request_hash: eb.ref('excluded.request_hash'),
          response_status: eb.ref('excluded.response_status'),
          response_body: eb.ref('excluded.response_body'),
          created_at: eb.ref('excluded.created_at'),
        })),
      )
      .compile(),
};

export interface CompileFigure {
  query: string;
  microseconds: number;
}

/** Median microseconds to build and compile each query, over `rounds` rounds of `iterations`. */
export function measureKyselyCompile(rounds = 15, iterations = 2_000): CompileFigure[] {
  return Object.entries(queries).map(([query, build]) => {
    for (let i = 0; i < iterations; i += 1) build(); // warm-up: JIT
    const perRound: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const started = process.hrtime.bigint();
      for (let i = 0; i < iterations; i += 1) build();
      perRound.push(Number(process.hrtime.bigint() - started) / 1_000 / iterations);
    }
    perRound.sort((a, b) => a - b);
    return { query, microseconds: perRound[Math.floor(rounds / 2)]! };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const figure of measureKyselyCompile())
    console.log(`${figure.query.padEnd(30)} ${figure.microseconds.toFixed(1)} us`);
}
