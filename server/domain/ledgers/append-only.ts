// Ledgers (stock movements, empties movements, payment allocations, credit applications, postings) are
// append-only: a correction is a reversing row that names the document line it reverses, never an edit. The
// database enforces it: the migration that creates a ledger table attaches the function `refuse_ledger_change()`
// (created by the migration 20261124063721_tenant_foreign_keys_and_document_sequences) with
//   CREATE TRIGGER <table>_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON <table>
//     FOR EACH STATEMENT EXECUTE FUNCTION refuse_ledger_change();
// which refuses UPDATE, DELETE and TRUNCATE, whoever runs them (test/domain/ledger-append-only.test.ts proves it).

/** The SQLSTATE (restrict_violation) a refused change of a ledger row fails with. */
export const LEDGER_CHANGE_REFUSED = '23001';

/** True when `error` is the database refusing to change a ledger row. */
export function isLedgerChangeRefused(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === LEDGER_CHANGE_REFUSED;
}
