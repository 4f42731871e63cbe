// Ledgers (stock movements, empties movements, payment allocations, credit applications, postings) are
// append-only: a correction is a reversing row that names the document line it reverses, never an edit
// (ERPNext's immutable-ledger mode). The database enforces it, whoever connects: the migration that creates a ledger
// table attaches the function refuse_ledger_change() (created by the migration
// 20261124063721_tenant_foreign_keys_and_document_sequences) with the trigger `appendOnlyTriggerSql(table)` writes,
// which refuses UPDATE, DELETE and TRUNCATE with SQLSTATE 23001 (restrict_violation). Balances beside a ledger
// (stock on hand, outstanding amounts) are ordinary tables, updated in the same transaction as the rows.
// test/domain/ledger-append-only.test.ts proves the trigger, and that every trigger on the function is complete.

/** The SQLSTATE (restrict_violation) a refused change of a ledger row fails with. */
export const LEDGER_CHANGE_REFUSED = '23001';

/** True when `error` is the database refusing to change a ledger row (a bug: ledgers are only appended to). */
export function isLedgerChangeRefused(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === LEDGER_CHANGE_REFUSED;
}

/** The name of a ledger's trigger: `<table>_append_only`. */
export function appendOnlyTriggerName(table: string): string {
  return `${checkedTableName(table)}_append_only`;
}

/**
 * The statement a ledger table's migration must carry, after its CREATE TABLE, e.g. for stock_movements:
 *
 *   CREATE TRIGGER stock_movements_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON stock_movements
 *     FOR EACH STATEMENT EXECUTE FUNCTION refuse_ledger_change();
 *
 * FOR EACH STATEMENT, so that TRUNCATE (which has no rows) is refused too and an UPDATE that matches no row
 * fails all the same. Migrations are SQL files: this is their text, for copying and for tests, never run by the
 * service. The table name is checked to be a plain lower-case identifier, so the text needs no quoting.
 */
export function appendOnlyTriggerSql(table: string): string {
  return `CREATE TRIGGER ${appendOnlyTriggerName(table)} BEFORE UPDATE OR DELETE OR TRUNCATE ON ${table}\n  FOR EACH STATEMENT EXECUTE FUNCTION refuse_ledger_change();`;
}

function checkedTableName(table: string): string {
  // 63 bytes is PostgreSQL's identifier limit; the trigger's name adds 12.
  if (!/^[a-z_][a-z0-9_]{0,50}$/.test(table))
    throw new Error(
      `appendOnlyTriggerSql: ${JSON.stringify(table)} is not a plain lower-case table name of at most 51 characters`,
    );
  return table;
}
