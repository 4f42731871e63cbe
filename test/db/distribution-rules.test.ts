// The schema stays shardable by organisation (docs/decisions/0042-sharding-by-organisation-on-citus.md): on Citus
// every organisation table is distributed by organization_id and co-located, which holds only while every primary
// key, unique constraint, unique index and foreign key of those tables includes organization_id and every foreign key
// between them joins organization_id to organization_id. A new table or constraint that breaks a rule fails here,
// naming the table and the rule, before it ships a schema that could not be distributed.
import test from 'ava';
import { sql } from 'kysely';
import { domainWorld, type DomainWorld } from '../support/domain.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('distribution_rules');
});
test.after.always(async () => {
  await world?.close();
});

/**
 * The public tables that are not an organisation's, each with what it would be on Citus (the decision record says
 * why). `organizations` is distributed too, by its own id, co-located with the rest.
 */
const SERVICE_WIDE: Record<string, 'reference' | 'local'> = {
  _prisma_migrations: 'local', // the migration runner's own record, on the coordinator
  address_rate_buckets: 'local', // keyless budget per client address: no organisation yet
  service_processes: 'local', // the heartbeats of this installation's processes
};

/**
 * Keys that break a rule today, each with what replaces it on Citus (the decision record's "what must change"). The
 * list can only shrink: a new exception is a decision, written here and in the record.
 */
const KNOWN_EXCEPTIONS: Record<string, string> = {
  'api_keys.api_keys_prefix_key':
    'a key is found by its lookup prefix before its organisation is known; on Citus the prefix moves to a reference table (prefix -> organization_id) read first',
  'console_sessions.console_sessions_token_hash_key':
    'a console session is found by its cookie token before its organisation is known; on Citus the cookie names the organisation beside the token (or a reference table maps the token hash to it)',
};

interface Table {
  table: string;
  organizationColumn: string | null;
  organizationNullable: boolean;
}
interface Constraint {
  table: string;
  name: string;
  kind: 'p' | 'u' | 'f' | 'x';
  columns: string[];
  referenced: string | null;
  referencedColumns: string[];
}

async function tables(): Promise<Table[]> {
  const { rows } = await sql<Table>`
    SELECT c.relname::text AS table,
           (SELECT a.attname::text FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'organization_id' AND NOT a.attisdropped) AS "organizationColumn",
           COALESCE((SELECT NOT a.attnotnull FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'organization_id' AND NOT a.attisdropped), false) AS "organizationNullable"
      FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p') ORDER BY 1`.execute(
    world.db,
  );
  return rows;
}

async function constraints(): Promise<Constraint[]> {
  const { rows } = await sql<Constraint>`
    SELECT c.conrelid::regclass::text AS table, c.conname::text AS name, c.contype::text AS kind,
           array(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i) AS columns,
           CASE WHEN c.confrelid = 0 THEN NULL ELSE c.confrelid::regclass::text END AS referenced,
           array(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.i) AS "referencedColumns"
      FROM pg_constraint c WHERE c.connamespace = 'public'::regnamespace AND c.contype IN ('p', 'u', 'f', 'x')
     UNION ALL
    -- Unique indexes that are not constraints (CREATE UNIQUE INDEX): Citus holds them to the same rule.
    SELECT i.indrelid::regclass::text, x.relname::text, 'u',
           array(SELECT a.attname::text FROM unnest(i.indkey) WITH ORDINALITY k(n, o) JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n ORDER BY k.o),
           NULL, ARRAY[]::text[]
      FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid
     WHERE x.relnamespace = 'public'::regnamespace AND i.indisunique AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`.execute(
    world.db,
  );
  return rows;
}

/** The rules a schema must keep for every organisation table to be distributed by organization_id, co-located. */
function violations(all: Table[], keys: Constraint[]): string[] {
  const found: string[] = [];
  const distributionColumn = new Map<string, string>();
  for (const { table, organizationColumn, organizationNullable } of all) {
    if (table === 'organizations') distributionColumn.set(table, 'id');
    else if (organizationColumn) {
      distributionColumn.set(table, organizationColumn);
      if (organizationNullable) found.push(`${table}: organization_id may be null (a row must belong to one shard)`);
      if (table in SERVICE_WIDE) found.push(`${table}: has organization_id but is listed as service-wide`);
    } else if (!(table in SERVICE_WIDE)) {
      found.push(
        `${table}: neither an organisation table (no organization_id) nor listed as service-wide (reference or local)`,
      );
    }
  }
  for (const key of keys) {
    const column = distributionColumn.get(key.table);
    if (column === undefined) {
      // A service-wide table: a reference table may not point at a distributed one.
      if (key.kind === 'f' && key.referenced !== null && distributionColumn.has(key.referenced)) {
        found.push(
          `${key.table}.${key.name}: a ${SERVICE_WIDE[key.table] ?? 'service-wide'} table references the organisation table ${key.referenced}`,
        );
      }
      continue;
    }
    if (key.kind === 'p' || key.kind === 'u' || key.kind === 'x') {
      if (!key.columns.includes(column))
        found.push(
          `${key.table}.${key.name}: a ${key.kind === 'p' ? 'primary key' : key.kind === 'u' ? 'unique key' : 'exclusion constraint'} without ${column}`,
        );
      continue;
    }
    // A foreign key: to a reference table anything goes; to a distributed table the distribution columns must pair.
    if (key.referenced === null || !distributionColumn.has(key.referenced)) {
      if (key.referenced !== null && SERVICE_WIDE[key.referenced] === 'local')
        found.push(
          `${key.table}.${key.name}: references the local table ${key.referenced} (only reference tables can be referenced from distributed ones)`,
        );
      continue;
    }
    const at = key.columns.indexOf(column);
    if (at < 0 || key.referencedColumns[at] !== distributionColumn.get(key.referenced)) {
      found.push(
        `${key.table}.${key.name}: references ${key.referenced} without pairing ${column} with its ${distributionColumn.get(key.referenced)}`,
      );
    }
  }
  return found;
}

test('every organisation table can be distributed by organization_id and co-located: keys include it, foreign keys pair it', async (t) => {
  const all = await tables();
  const keys = await constraints();
  t.true(all.length >= 50, `found ${all.length} tables`);
  t.true(keys.filter((k) => k.kind === 'f').length >= 20, 'foreign keys are read');
  const found = violations(all, keys);
  t.deepEqual(
    found.filter((line) => !(line.split(':')[0]! in KNOWN_EXCEPTIONS)),
    [],
  );
  for (const exception of Object.keys(KNOWN_EXCEPTIONS))
    t.true(
      found.some((line) => line.startsWith(`${exception}:`)),
      `${exception} still breaks a rule (else remove it from the exceptions)`,
    );
  for (const name of Object.keys(SERVICE_WIDE))
    t.true(
      all.some((table) => table.table === name),
      `${name}, listed as service-wide, exists`,
    );
});

test('the rules bite: a table without organization_id, a unique key without it and a foreign key that does not pair it are each named', (t) => {
  const all: Table[] = [
    { table: 'organizations', organizationColumn: null, organizationNullable: false },
    { table: 'widgets', organizationColumn: 'organization_id', organizationNullable: false },
    { table: 'gadgets', organizationColumn: 'organization_id', organizationNullable: true },
    { table: 'loose', organizationColumn: null, organizationNullable: false },
  ];
  const keys: Constraint[] = [
    {
      table: 'widgets',
      name: 'widgets_pkey',
      kind: 'p',
      columns: ['organization_id', 'id'],
      referenced: null,
      referencedColumns: [],
    },
    {
      table: 'widgets',
      name: 'widgets_code_key',
      kind: 'u',
      columns: ['code'],
      referenced: null,
      referencedColumns: [],
    },
    {
      table: 'gadgets',
      name: 'gadgets_widget_fkey',
      kind: 'f',
      columns: ['widget_id'],
      referenced: 'widgets',
      referencedColumns: ['id'],
    },
    {
      table: 'gadgets',
      name: 'gadgets_org_fkey',
      kind: 'f',
      columns: ['organization_id'],
      referenced: 'organizations',
      referencedColumns: ['id'],
    },
  ];
  t.deepEqual(violations(all, keys), [
    'gadgets: organization_id may be null (a row must belong to one shard)',
    'loose: neither an organisation table (no organization_id) nor listed as service-wide (reference or local)',
    'widgets.widgets_code_key: a unique key without organization_id',
    'gadgets.gadgets_widget_fkey: references widgets without pairing organization_id with its organization_id',
  ]);
});
