// What master data resources with flat bodies (locations, salespeople, routes) share beyond the resource base: each
// stores its body fields one column each, so one table per resource (`{ routeId: 'route_id', ... }`) says which column holds which field,
// for writing and for reading back, and the table definition and list filters follow from a few names. It names no
// resource: the modules that use it give their table, so no module imports another's helpers for it.
import type { Selectable } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';
import type { Filter } from '../lists/page.js';
import { equals, hasExternalCode, tableExpressions } from './filters.js';
import type { BaseRow, ColumnsOf, TableDefinition } from './table.js';

type MasterDataTableName = 'locations' | 'salespeople' | 'routes';

/** The table of a master data resource whose one caller-visible unique constraint is its code. */
export function masterDataTable<TB extends MasterDataTableName>(
  resource: string,
  table: TB,
  code: { constraint: string; column: keyof ColumnsOf<TB> & string; field: string },
): TableDefinition<TB, Selectable<DB[TB]> & BaseRow> {
  return {
    resource,
    table,
    listName: table,
    select: (query) => query.selectAll('t') as never, // every column, as Selectable<DB[TB]> says
    uniqueFields: { [code.constraint]: code.column },
    fieldOf: { [code.column]: code.field } as TableDefinition<TB, Selectable<DB[TB]> & BaseRow>['fieldOf'],
  };
}

/** The list filters: `active`, `externalCode`, and equality on the given query parameter -> column. */
export function masterDataFilters<TB extends MasterDataTableName>(
  table: TB,
  resource: string,
  equalities: Record<string, keyof DB[TB] & string>,
) {
  return (query: Record<string, unknown>): Record<string, Filter | undefined> => ({
    ...Object.fromEntries(
      Object.entries(equalities).map(([parameter, column]) => [
        parameter,
        equals(table, column, query[parameter] as string | undefined),
      ]),
    ),
    active: isActive(query.active),
    externalCode: hasExternalCode(table, resource, query.externalCode as string | undefined),
  });
}

/**
 * `active=true|false`: all three tables have the column, so the filter is typed over their union rather than
 * through the generic table name. The validator may or may not have coerced the query string to a boolean.
 */
function isActive(value: unknown): Filter | undefined {
  if (value === undefined) return undefined;
  const active = String(value) === 'true';
  const eb = tableExpressions<MasterDataTableName>();
  return { condition: eb('t.active', '=', active), value: active };
}

/** The columns that the given body fields write; fields left out write nothing, null writes null. */
export function columnsOf<Columns, Map extends Record<string, keyof Columns & string>>(
  fields: { [F in keyof Map]?: Columns[Map[F]] },
  map: Map,
): Partial<Columns> {
  const columns: Partial<Record<keyof Columns, unknown>> = {};
  for (const [field, column] of Object.entries(map)) {
    const value = (fields as Record<string, unknown>)[field];
    if (value !== undefined) columns[column] = value;
  }
  return columns as Partial<Columns>;
}

/** The body fields of a row, under their body names. */
export function fieldsOf<Row, Map extends Record<string, keyof Row>>(
  row: Row,
  map: Map,
): { [F in keyof Map]: Row[Map[F]] } {
  return Object.fromEntries(Object.entries(map).map(([field, column]) => [field, row[column as keyof Row]])) as {
    [F in keyof Map]: Row[Map[F]];
  };
}

/** The members that follow a record's own fields in its representation. */
export function recordMetadata(row: BaseRow, externalCodes: Record<string, string>) {
  return { externalCodes, createdAt: row.created_at.toISOString(), updatedAt: row.updated_at.toISOString() };
}
