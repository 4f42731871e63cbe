// The ledger checker for stock: every balance recomputed from the ledger rows and compared with what is kept. Zero
// differences, always; the test suite runs it after the tests that write stock, operators run `admin audit`.
import { sql } from 'kysely';
import type { Db } from '../../platform/database/transaction.js';

export interface LedgerDifference {
  /** What disagrees: stock_level, stock_valuation, movement_document. */
  kind: string;
  /** The record, in words an operator can look up. */
  subject: string;
  /** What the ledger rows say, and what is kept. */
  expected: string;
  actual: string;
}

/** Every difference between the stock ledger and the balances kept from it, for one organisation. */
export async function auditStock(db: Db, organizationId: string): Promise<LedgerDifference[]> {
  // Aggregates over the ledger joined in full with the kept balances: the builder has no FULL JOIN over grouped
  // subqueries; the organisation is a bound parameter.
  const { rows: levels } = await sql<{ location_id: string; product_id: string; from_movements: number; kept: number | null }>`
    WITH moved AS (
      SELECT location_id, product_id, sum(quantity)::int AS quantity FROM (
        SELECT to_location_id AS location_id, product_id, quantity FROM stock_movements WHERE organization_id = ${organizationId} AND to_location_id IS NOT NULL
        UNION ALL
        SELECT from_location_id, product_id, -quantity FROM stock_movements WHERE organization_id = ${organizationId} AND from_location_id IS NOT NULL
      ) AS m GROUP BY location_id, product_id
    )
    SELECT coalesce(m.location_id, l.location_id) AS location_id, coalesce(m.product_id, l.product_id) AS product_id,
           coalesce(m.quantity, 0) AS from_movements, l.quantity AS kept
      FROM moved AS m FULL JOIN (SELECT * FROM stock_levels WHERE organization_id = ${organizationId}) AS l
        ON l.location_id = m.location_id AND l.product_id = m.product_id
     WHERE coalesce(m.quantity, 0) IS DISTINCT FROM coalesce(l.quantity, 0) OR coalesce(m.quantity, 0) < 0
     ORDER BY 1, 2`.execute(db);
  // As above: the product's stock over all locations against its valuation row.
  const { rows: valuations } = await sql<{ product_id: string; on_hand: number; kept: number | null }>`
    SELECT coalesce(l.product_id, v.product_id) AS product_id, coalesce(l.quantity, 0) AS on_hand, v.quantity AS kept
      FROM (SELECT product_id, sum(quantity)::int AS quantity FROM stock_levels WHERE organization_id = ${organizationId} GROUP BY product_id) AS l
      FULL JOIN (SELECT * FROM stock_valuations WHERE organization_id = ${organizationId}) AS v ON v.product_id = l.product_id
     WHERE coalesce(l.quantity, 0) IS DISTINCT FROM coalesce(v.quantity, 0)
     ORDER BY 1`.execute(db);
  const orphans = await db.selectFrom('stock_movements as m')
    .leftJoin('stock_documents as d', (join) => join.onRef('d.organization_id', '=', 'm.organization_id').onRef('d.id', '=', 'm.document_id'))
    .select(['m.id', 'm.document_id'])
    .where('m.organization_id', '=', organizationId).where('m.document_type', '=', 'stock_document').where('d.id', 'is', null)
    .orderBy('m.id').execute();
  return [
    ...levels.map((row) => ({
      kind: 'stock_level', subject: `location ${row.location_id}, product ${row.product_id}`,
      expected: `${row.from_movements} from the movements${row.from_movements < 0 ? ' (below zero)' : ''}`, actual: row.kept === null ? 'no level row' : `${row.kept} kept`,
    })),
    ...valuations.map((row) => ({
      kind: 'stock_valuation', subject: `product ${row.product_id}`, expected: `${row.on_hand} on hand over all locations`, actual: row.kept === null ? 'no valuation row' : `${row.kept} kept`,
    })),
    ...orphans.map((row) => ({ kind: 'movement_document', subject: `movement ${row.id}`, expected: `stock document ${row.document_id}`, actual: 'no such document' })),
  ];
}
