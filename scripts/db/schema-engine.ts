// Prisma's schema engine, run as WebAssembly, used to author migrations offline.
//
// Why wasm: `prisma migrate` drives a native schema-engine binary that the CLI downloads on first use,
// and this machine cannot download it. `@prisma/schema-engine-wasm` is the same engine (same commit as
// prisma 7.10.0) compiled to WebAssembly; instead of opening database connections itself it talks to
// the database through a Prisma driver adapter, here `@prisma/adapter-pg`.
//
// The package is built for bundlers (its entry point does `import * as wasm from "./x.wasm"`), which
// Node cannot load, so the module is instantiated by hand against the wasm-bindgen glue.
//
// Two defects of the adapter/engine pairing are worked around here (both verified with 7.10.0):
// - The engine's catalogue queries return columns of Postgres' internal one-byte type "char"
//   (oid 18, e.g. pg_constraint.contype), which adapter-pg does not map: the engine then fails with
//   "Column type 'char' could not be deserialized from the database". The engine wants them typed as
//   Character, so the connections of our own pool pass them to the adapter as text under a marked
//   name, and our adapter wrapper turns those columns back into Character columns.
// - adapter-pg's executeScript splits a script on every ';' (inside comments, string literals and
//   $$-bodies too), yet the engine applies each migration to the shadow database through it. We send
//   the script as one simple-protocol query instead, which is what the native engine does.
import { createRequire } from 'node:module';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import {
  bindMigrationAwareSqlAdapterFactory,
  ColumnTypeEnum,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
  type SqlQueryable,
  type SqlResultSet,
} from '@prisma/driver-adapter-utils';
import * as engineGlue from '@prisma/schema-engine-wasm/schema_engine_bg';
import type { MigrationDirectory, MigrationList, SchemaFilter } from '@prisma/schema-engine-wasm/schema_engine_bg';

export interface DiffMigrationsToSchemaOptions {
  /** Folder holding `<timestamp>_<name>/migration.sql` directories and `migration_lock.toml`. */
  migrationsDir: string;
  /** The Prisma schema describing the desired state. */
  schemaPath: string;
  /**
   * An existing, empty Postgres database. The engine applies every migration in it and leaves the
   * result there; the caller creates and drops it.
   */
  shadowDatabaseUrl: string;
}

const LOCKFILE = 'migration_lock.toml';
const NO_FILTER: SchemaFilter = { externalTables: [], externalEnums: [] };
/** What the engine prints for an empty diff when a script is requested. */
const EMPTY_SCRIPT = '-- This is an empty migration.';

/**
 * The SQL that takes a database with all migrations of `migrationsDir` applied to the state described
 * by `schemaPath`: the text Prisma writes into the next `migration.sql`.
 *
 * Returns '' when they agree: the engine itself answers "-- This is an empty migration.\n" then, and any
 * output that is blank or only that comment after trimming is normalised to ''.
 *
 * Throws when a migration fails to apply to the shadow database, when the schema is invalid, or when
 * the shadow database is not empty.
 */
export async function diffMigrationsToSchema(opts: DiffMigrationsToSchemaOptions): Promise<string> {
  const schemaPath = path.resolve(opts.schemaPath);
  const [SchemaEngine, schema, migrationsList] = await Promise.all([
    loadSchemaEngine(),
    readFile(schemaPath, 'utf8'),
    readMigrationsList(path.resolve(opts.migrationsDir)),
  ]);

  const pool = new pg.Pool({ connectionString: opts.shadowDatabaseUrl });
  pool.on('connect', passCharColumnsAsMarkedText);
  pool.on('error', () => {}); // an idle client dropped by the server; the next query reports it
  try {
    await assertEmptyDatabase(pool);
    const engine = await SchemaEngine.new(
      { datamodels: [[schemaPath, schema]] },
      () => {}, // engine log lines (JSON); errors reach us as rejected promises
      bindMigrationAwareSqlAdapterFactory(shadowOnlyAdapterFactory(pool)),
    );
    try {
      const { stdout } = await engine.diff({
        from: { tag: 'migrations', ...migrationsList },
        to: { tag: 'schemaDatamodel', files: [{ path: schemaPath, content: schema }] },
        script: true,
        exitCode: null,
        filters: NO_FILTER,
      });
      const script = stdout ?? '';
      const trimmed = script.trim();
      return trimmed === '' || trimmed === EMPTY_SCRIPT ? '' : script;
    } finally {
      engine.free();
    }
  } finally {
    await pool.end();
  }
}

type SchemaEngineClass = typeof engineGlue.SchemaEngine;
// The project's lib (ES2023, no DOM) has no WebAssembly typings; this is the part used here.
declare const WebAssembly: {
  instantiate(bytes: Uint8Array, imports: object): Promise<{ instance: { exports: Record<string, unknown> } }>;
};
let engineClass: Promise<SchemaEngineClass> | undefined;

/** Instantiates the 5 MB wasm module once per process (about 30 ms); later calls reuse it. */
function loadSchemaEngine(): Promise<SchemaEngineClass> {
  engineClass ??= (async () => {
    // The engine reports a Rust panic through this global (the Prisma CLI defines it) just before the
    // wasm traps. The trap escapes as an uncaught `RuntimeError: unreachable` that ends the process
    // rather than rejecting the pending call, so the message is printed here or it is lost.
    const panics = globalThis as { PRISMA_WASM_PANIC_REGISTRY?: { set_message(message: string): void } };
    panics.PRISMA_WASM_PANIC_REGISTRY ??= {
      set_message: (message) => console.error(`The Prisma schema engine (wasm) panicked: ${message}`),
    };
    const gluePath = createRequire(import.meta.url).resolve('@prisma/schema-engine-wasm/schema_engine_bg');
    const bytes = await readFile(path.join(path.dirname(gluePath), 'schema_engine_bg.wasm'));
    // The module imports its JS helpers from the glue file, under the name the bundler would resolve.
    const { instance } = await WebAssembly.instantiate(bytes, { './schema_engine_bg.js': engineGlue });
    engineGlue.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
    return engineGlue.SchemaEngine;
  })();
  engineClass.catch(() => (engineClass = undefined));
  return engineClass;
}

/** Reads the migrations folder the way the Prisma CLI does before handing it to the engine. */
async function readMigrationsList(baseDir: string): Promise<MigrationList> {
  const lockfileContent = await readFile(path.join(baseDir, LOCKFILE), 'utf8').catch(() => null);
  const entries = await readdir(baseDir, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  const migrationDirectories: MigrationDirectory[] = await Promise.all(
    entries
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort((a, b) => a.localeCompare(b))
      .map(async (name): Promise<MigrationDirectory> => {
        const content = await readFile(path.join(baseDir, name, 'migration.sql'), 'utf8').then(
          (value) => ({ tag: 'ok' as const, value }),
          (error: Error) => ({ tag: 'error' as const, value: error.message }),
        );
        return { path: name, migrationFile: { path: 'migration.sql', content } };
      }),
  );
  return {
    baseDir,
    // The engine takes the connector from the lockfile and refuses to run without one. Before the
    // first migration there is none yet; the adapter is Postgres, so that is the only possible answer.
    lockfile: { path: LOCKFILE, content: lockfileContent ?? 'provider = "postgresql"\n' },
    shadowDbInitScript: '',
    migrationDirectories,
  };
}

/**
 * The engine asks the factory for two connections: `connect()` (the "main" database, only used for a
 * version check during a diff) and `connectToShadowDb()`, where it applies the migrations.
 * adapter-pg's own connectToShadowDb would CREATE DATABASE a random one next to the given database
 * (needing CREATEDB rights), and with a connection string it then connects to the given database
 * anyway, because pg lets the URL override `database`. The caller already gave us a shadow database, so
 * both calls return adapters over it.
 */
function shadowOnlyAdapterFactory(pool: pg.Pool): SqlMigrationAwareDriverAdapterFactory {
  // Given a Pool, adapter-pg never ends it; the caller does.
  const pgFactory = new PrismaPg(pool);
  const connect = async (): Promise<SqlDriverAdapter> => {
    const adapter = await pgFactory.connect();
    return withOverrides(withCharColumns(adapter), {
      startTransaction: async (isolationLevel) => withCharColumns(await adapter.startTransaction(isolationLevel)),
      // Without parameters node-postgres uses the simple query protocol, which accepts several
      // statements in one string; going through executeRaw keeps adapter-pg's error mapping.
      executeScript: async (script) => {
        await adapter.executeRaw({ sql: script, args: [], argTypes: [] });
      },
    });
  };
  return { provider: pgFactory.provider, adapterName: pgFactory.adapterName, connect, connectToShadowDb: connect };
}

/** `target` with some members replaced; the others still run on `target` (it is the prototype). */
function withOverrides<T extends object>(target: T, overrides: Partial<T>): T {
  return Object.assign(Object.create(target) as T, overrides);
}

const PG_CHAR_OID = 18;
const PG_TEXT_OID = 25;
const CHAR_MARK = '\u0000"char"';

/** Restores the "char" columns that passCharColumnsAsMarkedText disguised as text. */
function withCharColumns<T extends SqlQueryable>(queryable: T): T {
  const restore = (result: SqlResultSet): SqlResultSet => {
    if (!result.columnNames.some((name) => name.endsWith(CHAR_MARK))) return result;
    const columnTypes = [...result.columnTypes];
    const columnNames = result.columnNames.map((name, i) => {
      if (!name.endsWith(CHAR_MARK)) return name;
      columnTypes[i] = ColumnTypeEnum.Character;
      return name.slice(0, -CHAR_MARK.length);
    });
    return { ...result, columnNames, columnTypes };
  };
  return withOverrides<SqlQueryable>(queryable, {
    queryRaw: async (query) => restore(await queryable.queryRaw(query)),
  }) as T;
}

type QueryResultLike = { fields?: { name: string; dataTypeID: number }[] } | undefined;
type QueryCallback = (error: Error | null, result: QueryResultLike) => void;

/**
 * Pool 'connect' hook: every result of this client reports "char" columns as text with a marked name,
 * which adapter-pg accepts and withCharColumns undoes. Their text form is the character itself.
 */
function passCharColumnsAsMarkedText(client: pg.PoolClient): void {
  const disguise = (result: QueryResultLike): QueryResultLike => {
    for (const field of result?.fields ?? []) {
      if (field.dataTypeID !== PG_CHAR_OID) continue;
      field.dataTypeID = PG_TEXT_OID;
      field.name += CHAR_MARK;
    }
    return result;
  };
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const patched = (...args: unknown[]): unknown => {
    const last = args.at(-1);
    if (typeof last === 'function') {
      // Callback style, used by Pool#query.
      const callback = last as QueryCallback;
      args[args.length - 1] = (error: Error | null, result: QueryResultLike) => callback(error, disguise(result));
      return query(...args);
    }
    const returned = query(...args); // promise style, used on checked-out clients (transactions)
    return returned instanceof Promise ? returned.then(disguise) : returned;
  };
  Object.assign(client, { query: patched });
}

/**
 * The engine does not reset the shadow database (unlike the native engine with a shadow database
 * URL): leftovers would silently become part of the "applied migrations" state, and pointing this at a
 * real database by mistake would run the migrations against it. So refuse anything non-empty.
 */
async function assertEmptyDatabase(pool: pg.Pool): Promise<void> {
  const { rows } = await pool.query<{ name: string; database: string }>(`
    SELECT format('%I.%I', n.nspname, c.relname) AS name, current_database() AS database
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
    UNION ALL
    SELECT format('%I.%I', n.nspname, t.typname), current_database()
      FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
     WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
       AND t.typtype IN ('e', 'd')
     LIMIT 5`);
  if (rows.length > 0) {
    throw new Error(
      `The shadow database "${rows[0]!.database}" is not empty (it holds ${rows.map((row) => row.name).join(', ')}); ` +
        'pass a freshly created database.',
    );
  }
}
