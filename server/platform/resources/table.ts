// The SQL every resource shares: read by id, insert, update and list pages of one organisation's rows. A
// resource describes its table once (columns, which are written, which hold JSON) and gets these for free.
import type pg from 'pg';
import type { Tx } from '../database/transaction.js';
import { ApiError } from '../errors/api-error.js';
import { readPage, type Filter, type ListRequest, type Page } from '../lists/page.js';

export interface BaseRow {
  organization_id: string;
  id: string;
  created_at: Date;
  updated_at: Date;
}

export interface TableDefinition<Columns> {
  /** The resource's name in external codes and events (`customer`). */
  resource: string;
  table: string;
  /** Names the list inside its cursors. */
  listName: string;
  /** The select list over the table aliased `t` (cast NUMERIC to text so money stays exact). */
  selectColumns: string;
  writable: readonly (keyof Columns & string)[];
  jsonColumns?: readonly (keyof Columns & string)[];
  /** Unique constraints that a caller can violate, with the field they concern. */
  uniqueFields?: Record<string, keyof Columns & string>;
  /** False for records that carry no external codes (prices, journey plans): their lists skip the lookup. */
  externalCodes?: boolean;
  /** The body field (JSON pointer) of a column, for problems. */
  fieldOf?: Partial<Record<keyof Columns & string, string>>;
}

type Db = pg.Pool | Tx;

export async function findRow<Row extends BaseRow>(db: Db, table: TableDefinition<any>, organizationId: string, id: string, forUpdate = false): Promise<Row | null> {
  const { rows } = await db.query<Row>(
    `SELECT ${table.selectColumns} FROM ${table.table} t WHERE t.organization_id = $1 AND t.id = $2${forUpdate ? ' FOR UPDATE' : ''}`,
    [organizationId, id],
  );
  return rows[0] ?? null;
}

export async function insertRow<Row extends BaseRow, Columns>(tx: Tx, table: TableDefinition<Columns>, organizationId: string, id: string, values: Columns): Promise<Row> {
  const columns = table.writable;
  const { rows } = await tx.query<Row>(
    `WITH t AS (INSERT INTO ${table.table} (organization_id, id, ${columns.join(', ')}, created_at, updated_at)
       VALUES ($1, $2, ${columns.map((_, i) => `$${i + 3}`).join(', ')}, now(), now()) RETURNING *)
     SELECT ${table.selectColumns} FROM t`,
    [organizationId, id, ...columns.map((column) => encode(table, column, values[column as keyof Columns]))],
  ).catch(uniqueViolation(table, values));
  return rows[0]!;
}

export async function updateRow<Row extends BaseRow, Columns>(tx: Tx, table: TableDefinition<Columns>, organizationId: string, id: string, values: Partial<Columns>): Promise<Row> {
  const columns = table.writable.filter((column) => column in values);
  const { rows } = await tx.query<Row>(
    `WITH t AS (UPDATE ${table.table} SET ${[...columns.map((column, i) => `${column} = $${i + 3}`), 'updated_at = now()'].join(', ')}
       WHERE organization_id = $1 AND id = $2 RETURNING *)
     SELECT ${table.selectColumns} FROM t`,
    [organizationId, id, ...columns.map((column) => encode(table, column, values[column as keyof Columns]))],
  ).catch(uniqueViolation(table, values));
  return rows[0]!;
}

/** A listed row also carries its external codes, read in the same query (one round trip per page). */
export type WithExternalCodes<Row> = Row & { external_codes: Record<string, string> };

export function listRows<Row extends BaseRow>(db: Db, table: TableDefinition<any>, organizationId: string, request: ListRequest, filters: Record<string, Filter | undefined>): Promise<Page<WithExternalCodes<Row>>> {
  const codes = table.externalCodes === false ? `'{}'::jsonb` : `COALESCE((SELECT jsonb_object_agg(e.code_system, e.code) FROM external_codes e
      WHERE e.organization_id = t.organization_id AND e.resource = '${table.resource}' AND e.record_id = t.id), '{}'::jsonb)`;
  const columns = `${table.selectColumns}, ${codes} AS external_codes`;
  return readPage<WithExternalCodes<Row>>(db, { name: table.listName, table: table.table, columns }, organizationId, request, filters);
}

/** A filter on one column when the caller gave a value. */
export function equals(column: string, value: string | undefined): Filter | undefined {
  return value === undefined ? undefined : { sql: `t.${column} = $?`, value };
}

/** Filters rows that carry this code in any of the caller's code systems. */
export function hasExternalCode(resource: string, code: string | undefined): Filter | undefined {
  return code === undefined ? undefined : {
    sql: `t.id IN (SELECT e.record_id FROM external_codes e WHERE e.organization_id = t.organization_id AND e.resource = '${resource}' AND e.code = $?)`,
    value: code.trim(),
  };
}

function encode<Columns>(table: TableDefinition<Columns>, column: string, value: unknown): unknown {
  return table.jsonColumns?.includes(column as never) && value !== null && value !== undefined ? JSON.stringify(value) : value;
}

function uniqueViolation<Columns>(table: TableDefinition<Columns>, values: Partial<Columns>) {
  return (error: { code?: string; constraint?: string }): never => {
    const column = error.code === '23505' && error.constraint ? table.uniqueFields?.[error.constraint] : undefined;
    if (column) {
      const value = String(values[column as keyof Columns]);
      const field = table.fieldOf?.[column] ?? `/${column}`;
      throw new ApiError('business_rule', `Another ${table.resource} already has ${field.slice(1)} ${value}.`, [
        { field, code: 'duplicate_code', message: `${value} is already used by another ${table.resource}` },
      ]);
    }
    throw error;
  };
}
