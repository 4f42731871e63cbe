// A reconciled day as the API shows it (DmsReconciliation): the list, and the object of dms.reconciliation.completed.
import type { Selectable } from 'kysely';
import type { DmsReconciliation as Row } from '../../../generated/kysely/types.js';
import type { Db, Tx } from '../../platform/database/transaction.js';
import { readPage, type ListQuery, type ListRequest, type Page } from '../../platform/lists/page.js';
import { equals } from '../../platform/resources/filters.js';
import type { DmsConnectionRow } from './connections.js';
import type { DmsReconciliation } from './reconciliation.js';

const COLUMNS = [
  'organization_id',
  'id',
  'connection_id',
  'salesman_code',
  'business_date',
  'status',
  'difference_count',
  'result',
  'checked_at',
  'created_at',
  'updated_at',
] as const;
type ReconciliationRow = Pick<Selectable<Row>, (typeof COLUMNS)[number]>;

export function toReconciliation(row: ReconciliationRow, distributorCode: string): DmsReconciliation {
  const result = row.result as unknown as Pick<DmsReconciliation, 'comparedWith' | 'totals' | 'differences'>;
  return {
    id: row.id,
    distributorCode,
    salesmanCode: row.salesman_code,
    businessDate: row.business_date,
    status: row.status as DmsReconciliation['status'],
    comparedWith: result.comparedWith,
    totals: result.totals,
    differences: result.differences,
    differenceCount: row.difference_count,
    checkedAt: row.checked_at.toISOString(),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export async function listReconciliations(
  db: Db,
  connection: DmsConnectionRow,
  request: ListRequest,
  filters: { salesman?: string; date?: string },
): Promise<Page<DmsReconciliation>> {
  const query = db
    .selectFrom('dms_reconciliations as t')
    .select(COLUMNS.map((c) => `t.${c}` as const))
    .where('t.organization_id', '=', connection.organization_id)
    .where('t.connection_id', '=', connection.id);
  const page = await readPage(
    `dms_reconciliations:${connection.id}`,
    query as unknown as ListQuery<ReconciliationRow>,
    connection.organization_id,
    { ...request, updatedSince: '1970-01-01T00:00:00.000Z' },
    {
      salesman: equals('dms_reconciliations', 'salesman_code', filters.salesman),
      date: equals('dms_reconciliations', 'business_date', filters.date),
    },
  );
  return { ...page, rows: page.rows.map((row) => toReconciliation(row, connection.distributor_code)) };
}

/** One reconciled day by id (the webhook's object), with its connection's distributor code. */
export async function findReconciliation(
  db: Db | Tx,
  organizationId: string,
  id: string,
): Promise<DmsReconciliation | null> {
  const row = await db
    .selectFrom('dms_reconciliations as t')
    .innerJoin('dms_connections as c', (j) =>
      j.onRef('c.organization_id', '=', 't.organization_id').onRef('c.id', '=', 't.connection_id'),
    )
    .select([...COLUMNS.map((c) => `t.${c}` as const), 'c.distributor_code'])
    .where('t.organization_id', '=', organizationId)
    .where('t.id', '=', id)
    .executeTakeFirst();
  return row ? toReconciliation(row, row.distributor_code) : null;
}
