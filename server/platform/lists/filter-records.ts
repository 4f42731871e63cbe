// A list filter that names a record by id (`?customerId=`, `?locationId=`): an id that is no record of the caller's
// organisation, another organisation's or none at all, is 404 not_found naming the query parameter, rather than an
// empty page that would read as "nothing yet" for a mistyped id (and the same answer for both, so that it says
// nothing of what other organisations hold). The lists of stock, trips and field activity share it.
import type { Db } from '../database/transaction.js';
import { ApiError } from '../errors/api-error.js';

/** The organisation tables a list filter may name a record of. */
export type FilterTable =
  | 'customers'
  | 'products'
  | 'locations'
  | 'salespeople'
  | 'routes'
  | 'trips'
  | 'visits'
  | 'stock_documents'
  | 'invoices';

export interface FilterRecord {
  /** The query parameter (`customerId`). */
  parameter: string;
  table: FilterTable;
  /** The record's name in words (`customer`, `stock document`). */
  what: string;
  /** The caller's value; undefined when the filter was not given. */
  id: string | undefined;
}

/** Checks each given filter id, in order; the first that names no record of the organisation is the 404. */
export async function requireFilterRecords(
  db: Db,
  organizationId: string,
  filters: readonly FilterRecord[],
): Promise<void> {
  for (const { parameter, table, what, id } of filters) {
    if (id === undefined) continue;
    const row = await db
      .selectFrom(table)
      .select('id')
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) {
      throw new ApiError(
        'not_found',
        `There is no ${what} ${id} in this organisation (query parameter ${parameter}).`,
        [{ field: `/query/${parameter}`, code: 'not_found', message: `no ${what} ${id} in this organisation` }],
      );
    }
  }
}
