// A Kysely over a driver that records each compiled statement (its SQL with whitespace collapsed, and its
// parameters) and answers it with the rows `answer` gives for it: for pure unit tests of code that builds statements
// (what the statements mean against real rows is held by the database tests). Transactions are no-ops.
import {
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  type Transaction,
} from 'kysely';
import type { DB } from '../../generated/kysely/types.js';

export interface RecordedStatement {
  sql: string;
  params: unknown[];
}

export function recordingDb(answer: (statement: RecordedStatement) => Record<string, unknown>[] = () => []): {
  db: Kysely<DB>;
  statements: RecordedStatement[];
  inTransaction: <T>(work: (tx: Transaction<DB>) => Promise<T>) => Promise<T>;
} {
  const statements: RecordedStatement[] = [];
  const connection: DatabaseConnection = {
    async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
      const statement = { sql: compiled.sql.replace(/\s+/g, ' ').trim(), params: [...compiled.parameters] };
      statements.push(statement);
      return { rows: answer(statement) as R[] };
    },
    // biome-ignore lint/correctness/useYield: the recording driver never streams; Kysely only needs the method to exist
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
  return { db, statements, inTransaction: (work) => db.transaction().execute(work) };
}
