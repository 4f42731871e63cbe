// List filters of resource tables, built with Kysely's typed expression builder over the table aliased `t`: a
// column name that the table does not have, or a value of the wrong type, does not compile.
import { expressionBuilder, type Expression, type SqlBool } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';
import type { Filter } from '../lists/page.js';
import type { ResourceTableName } from './table.js';

/** The expression builder of a resource table aliased `t` (and every other table, for subqueries). */
export function tableExpressions<TB extends ResourceTableName>() {
  return expressionBuilder<DB & { t: DB[TB] }, 't'>();
}

/** t.column = value over a list's table (any table of the schema, aliased `t`), when the caller gave a value. */
export function equals<TB extends keyof DB>(
  _table: TB,
  column: keyof DB[TB] & string,
  value: string | boolean | undefined,
): Filter | undefined {
  if (value === undefined) return undefined;
  const eb = expressionBuilder<DB & { t: DB[TB] }, 't'>();
  // The column is checked against the table by the signature; the builder's own overloads cannot see through TB.
  return { condition: eb(eb.ref(`t.${column}` as never), '=', value as never), value };
}

/** A list filter with its own condition (either of two columns, a pair), when the caller gave a value. */
export function when(value: string | undefined, condition: Expression<SqlBool>): Filter | undefined {
  return value === undefined ? undefined : { condition, value };
}

/**
 * Rows that carry this code in any of the caller's code systems (starting from the external_codes index): master
 * data and the documents that carry codes (invoices, orders) alike, any table with `organization_id` and `id`.
 * `column` is the row's column that the code's record_id names: `id` for a record's own code; a code that names a
 * group of rows (a payment collection's code names its receipt group, decision 0030) gives the group's column.
 */
export function hasExternalCode<TB extends keyof DB>(
  _table: TB,
  resource: string,
  code: string | undefined,
  column: keyof DB[TB] & string = 'id' as keyof DB[TB] & string,
): Filter | undefined {
  if (code === undefined) return undefined;
  const value = code.trim();
  const eb = expressionBuilder<DB & { t: DB[TB] }, 't'>();
  const holders = eb
    .selectFrom('external_codes as e')
    .select('e.record_id')
    .whereRef('e.organization_id', '=', eb.ref('t.organization_id' as never))
    .where('e.resource', '=', resource)
    .where('e.code', '=', value);
  // The column is checked against the table by the signature; the builder's own overloads cannot see through TB.
  return { condition: eb(eb.ref(`t.${column}` as never), 'in', holders as never), value };
}
