// Accounting periods: an organisation's books are closed through a date (organizations.books_closed_through, set by
// `admin period close` and cleared or moved back by `admin period reopen`). A document dated on or before it, and a
// cancel, void or reverse of one, is refused with 422 period_closed naming the date's field. Orders and invoices
// (create and void) use it; payments, returns and credit notes will call the same function.
import { sql } from 'kysely';
import type { Tx } from '../platform/database/transaction.js';
import { ApiError } from '../platform/errors/api-error.js';

/** The date the organisation's books are closed through (`YYYY-MM-DD`), or null when no period is closed. */
export async function booksClosedThrough(tx: Tx, organizationId: string): Promise<string | null> {
  const row = await tx
    .selectFrom('organizations')
    // A DATE as its calendar string: pg would make it a Date at local midnight, which can shift the day.
    .select(sql<string | null>`to_char(books_closed_through, 'YYYY-MM-DD')`.as('through'))
    .where('id', '=', organizationId)
    // FOR SHARE: a period close that runs at the same time waits for this document's transaction (and a document
    // waits for a close), so no document is written into a period that was closed before it committed.
    .forShare()
    .executeTakeFirst();
  return row?.through ?? null;
}

/**
 * Refuses `date` (`YYYY-MM-DD`) when it is on or before the date the organisation's books are closed through:
 * 422 period_closed with `field` (a JSON pointer, `/orderDate`) in `errors[]`. Runs in the document's transaction.
 */
export async function refuseClosedPeriod(tx: Tx, organizationId: string, date: string, field: string): Promise<void> {
  refuseDateInClosedPeriod(await booksClosedThrough(tx, organizationId), date, field);
}

/** refuseClosedPeriod on the date read already (booksClosedThrough): a set of documents reads it once. */
export function refuseDateInClosedPeriod(through: string | null, date: string, field: string): void {
  if (through !== null && date <= through) {
    throw new ApiError('period_closed', `The books are closed through ${through}; ${date} is in a closed period.`, [
      {
        field,
        code: 'period_closed',
        message: `${date} is on or before ${through}, the date the books are closed through`,
      },
    ]);
  }
}

/** Closes the books through `through` (`YYYY-MM-DD`); the operator CLI calls it. Returns the previous date. */
export async function closePeriod(
  tx: Tx,
  organizationId: string,
  through: string,
): Promise<{ previous: string | null }> {
  const previous = await booksClosedThrough(tx, organizationId);
  await tx
    .updateTable('organizations')
    .set({ books_closed_through: through })
    .where('id', '=', organizationId)
    .execute();
  return { previous };
}

/** Reopens the books: closed through `through` (an earlier date) or, without it, no period closed at all. */
export async function reopenPeriod(
  tx: Tx,
  organizationId: string,
  through: string | null,
): Promise<{ previous: string | null }> {
  const previous = await booksClosedThrough(tx, organizationId);
  await tx
    .updateTable('organizations')
    .set({ books_closed_through: through })
    .where('id', '=', organizationId)
    .execute();
  return { previous };
}
