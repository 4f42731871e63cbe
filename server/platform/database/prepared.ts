// A statement built with Kysely once and run many times: the hot paths (authentication on every request) would
// otherwise pay Kysely's build-and-compile cost per request (~50-70 us for authentication's CTE, measured by npm run
// bench). The statement is compiled once with a sentinel string for each argument; each run binds the arguments
// in the sentinels' places. Only string arguments, each distinct from every constant of the statement.
// "Prepared" here means built once in this process: it runs as pg's unnamed statement, so nothing is prepared on a
// server connection for a later transaction, which a transaction-mode pooler could run elsewhere (decision 0043).
import {
  CompiledQuery,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type Compilable,
} from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';
import type { Db } from './transaction.js';

/** A Kysely that only builds and compiles statements (no connection): what prepared statements are built with. */
export const statementBuilder: Db = new Kysely<DB>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

export function preparedStatement<Args extends Record<string, string>, Row>(
  build: (args: Args) => Compilable<Row>,
  names: readonly (keyof Args & string)[],
): (db: Db, args: Args) => Promise<Row[]> {
  const sentinels = Object.fromEntries(names.map((name) => [name, `\u0000${name}\u0000`])) as Args;
  const compiled = build(sentinels).compile();
  const slots = compiled.parameters.map((value) => names.find((name) => value === sentinels[name]) ?? null);
  for (const name of names) {
    if (!slots.includes(name))
      throw new Error(`preparedStatement: the argument ${name} is not a parameter of the statement`);
  }
  return async (db, args) => {
    const parameters = compiled.parameters.map((value, i) => (slots[i] === null ? value : args[slots[i]!]));
    const { rows } = await db.executeQuery(CompiledQuery.raw(compiled.sql, parameters) as CompiledQuery<Row>);
    return rows;
  };
}
