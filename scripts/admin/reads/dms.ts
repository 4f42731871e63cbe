// What the operator CLI reads of the DMS exchange that the API has no list for in that shape: documents filtered by
// state, reason, business date, salesman and document type across an organisation's connections, and the reconciled
// days. Read-only queries over the DMS module's tables, mapped with the module's own representations (toFlag,
// toReconciliation), so the CLI prints what the API would.
import type { Db } from '../../../server/platform/database/transaction.js';
import { FLAG_COLUMNS, toFlag, type DmsFlag } from '../../../server/modules/dms/flags.js';
import { toReconciliation } from '../../../server/modules/dms/reconciliation-reads.js';
import type { DmsReconciliation } from '../../../server/modules/dms/reconciliation.js';

export interface DocumentFilters {
  system?: string;
  states?: string[];
  reasons?: string[];
  /** The document's own business date (documentDate). */
  date?: string;
  salesman?: string;
  types?: string[];
  limit: number;
}

/** A document as the CLI lists it: its flag, and what it is about (business date, salesman, system). */
export type ListedDocument = DmsFlag & { system: string; documentDate: string | null; salesmanCode: string | null };

export async function listDocuments(
  db: Db,
  organizationId: string,
  filters: DocumentFilters,
): Promise<ListedDocument[]> {
  let query = db
    .selectFrom('dms_documents as d')
    .innerJoin('dms_connections as c', (join) =>
      join.onRef('c.organization_id', '=', 'd.organization_id').onRef('c.id', '=', 'd.connection_id'),
    )
    .select([...FLAG_COLUMNS.map((column) => `d.${column}` as const), 'd.document_date', 'd.salesman_code', 'c.system'])
    .where('d.organization_id', '=', organizationId);
  if (filters.system !== undefined) query = query.where('c.system', '=', filters.system);
  if (filters.states !== undefined) query = query.where('d.state', 'in', filters.states);
  if (filters.reasons !== undefined) query = query.where('d.reason_code', 'in', filters.reasons);
  if (filters.date !== undefined) query = query.where('d.document_date', '=', filters.date);
  if (filters.salesman !== undefined) query = query.where('d.salesman_code', '=', filters.salesman);
  if (filters.types !== undefined) query = query.where('d.document_type', 'in', filters.types);
  // Newest change first, as an operator looks for what just happened; the id breaks ties.
  const rows = await query.orderBy('d.updated_at', 'desc').orderBy('d.id', 'desc').limit(filters.limit).execute();
  return rows.map((row) => ({
    ...toFlag(row),
    system: row.system,
    documentDate: row.document_date,
    salesmanCode: row.salesman_code,
  }));
}

export interface ReconciliationFilters {
  system?: string;
  salesman?: string;
  date?: string;
  status?: string;
  limit: number;
}

export async function listReconciledDays(
  db: Db,
  organizationId: string,
  filters: ReconciliationFilters,
): Promise<(DmsReconciliation & { system: string })[]> {
  let query = db
    .selectFrom('dms_reconciliations as t')
    .innerJoin('dms_connections as c', (join) =>
      join.onRef('c.organization_id', '=', 't.organization_id').onRef('c.id', '=', 't.connection_id'),
    )
    .select([
      't.organization_id',
      't.id',
      't.connection_id',
      't.salesman_code',
      't.business_date',
      't.status',
      't.difference_count',
      't.result',
      't.checked_at',
      't.created_at',
      't.updated_at',
      'c.distributor_code',
      'c.system',
    ])
    .where('t.organization_id', '=', organizationId);
  if (filters.system !== undefined) query = query.where('c.system', '=', filters.system);
  if (filters.salesman !== undefined) query = query.where('t.salesman_code', '=', filters.salesman);
  if (filters.date !== undefined) query = query.where('t.business_date', '=', filters.date);
  if (filters.status !== undefined) query = query.where('t.status', '=', filters.status);
  // By day, newest first, then by salesman: the operator's page of "how did each salesman's day close".
  const rows = await query.orderBy('t.business_date', 'desc').orderBy('t.salesman_code').limit(filters.limit).execute();
  return rows.map((row) => ({ ...toReconciliation(row, row.distributor_code), system: row.system }));
}
