// The ledger checker for stock: every balance recomputed from the ledger rows and compared with what is kept. Zero
// differences, always; the test suite runs it after the tests that write stock, operators run `admin audit`.
import { sql } from 'kysely';
import type { Db } from '../../platform/database/transaction.js';

export interface LedgerDifference {
  /** What disagrees: stock_level, stock_valuation, movement_document, customer_empties, empties_stock_movement. */
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
  const { rows: levels } = await sql<{
    location_id: string;
    product_id: string;
    from_movements: number;
    kept: number | null;
  }>`
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
  const orphans = await db
    .selectFrom('stock_movements as m')
    .leftJoin('stock_documents as d', (join) =>
      join.onRef('d.organization_id', '=', 'm.organization_id').onRef('d.id', '=', 'm.document_id'),
    )
    .select(['m.id', 'm.document_id'])
    .where('m.organization_id', '=', organizationId)
    .where('m.document_type', '=', 'stock_document')
    .where('d.id', 'is', null)
    .orderBy('m.id')
    .execute();
  // As above: what each customer holds of each empty, from the empties ledger, against customer_empties.
  const { rows: held } = await sql<{
    customer_id: string;
    product_id: string;
    from_movements: number;
    kept: number | null;
  }>`
    SELECT coalesce(m.customer_id, c.customer_id) AS customer_id, coalesce(m.product_id, c.product_id) AS product_id,
           coalesce(m.quantity, 0) AS from_movements, c.quantity AS kept
      FROM (SELECT customer_id, product_id, sum(CASE direction WHEN 'out' THEN quantity ELSE -quantity END)::int AS quantity
              FROM empties_movements WHERE organization_id = ${organizationId} AND customer_id IS NOT NULL
             GROUP BY customer_id, product_id) AS m
      FULL JOIN (SELECT * FROM customer_empties WHERE organization_id = ${organizationId}) AS c
        ON c.customer_id = m.customer_id AND c.product_id = m.product_id
     WHERE coalesce(m.quantity, 0) IS DISTINCT FROM coalesce(c.quantity, 0) OR coalesce(m.quantity, 0) < 0
     ORDER BY 1, 2`.execute(db);
  // An empties movement that moved physically must agree with its stock movement: the same product and quantity,
  // into its location when it came in, out of it when it went out.
  const mismatched = await db
    .selectFrom('empties_movements as e')
    .leftJoin('stock_movements as m', (join) =>
      join.onRef('m.organization_id', '=', 'e.organization_id').onRef('m.id', '=', 'e.stock_movement_id'),
    )
    .select(['e.id', 'e.stock_movement_id'])
    .where('e.organization_id', '=', organizationId)
    .where('e.stock_movement_id', 'is not', null)
    .where((eb) =>
      eb.or([
        eb('m.id', 'is', null),
        eb('m.product_id', '!=', eb.ref('e.product_id')),
        eb('m.quantity', '!=', eb.ref('e.quantity')),
        eb.and([
          eb('e.direction', '=', 'in'),
          eb.or([eb('m.to_location_id', 'is', null), eb('m.to_location_id', '!=', eb.ref('e.location_id'))]),
        ]),
        eb.and([
          eb('e.direction', '=', 'out'),
          eb.or([eb('m.from_location_id', 'is', null), eb('m.from_location_id', '!=', eb.ref('e.location_id'))]),
        ]),
      ]),
    )
    .orderBy('e.id')
    .execute();
  return [
    ...held.map((row) => ({
      kind: 'customer_empties',
      subject: `customer ${row.customer_id}, empty ${row.product_id}`,
      expected: `${row.from_movements} from the empties movements${row.from_movements < 0 ? ' (below zero)' : ''}`,
      actual: row.kept === null ? 'no row' : `${row.kept} kept`,
    })),
    ...mismatched.map((row) => ({
      kind: 'empties_stock_movement',
      subject: `empties movement ${row.id}`,
      expected: `stock movement ${row.stock_movement_id} of the same product, quantity and location`,
      actual: 'missing or different',
    })),
    ...levels.map((row) => ({
      kind: 'stock_level',
      subject: `location ${row.location_id}, product ${row.product_id}`,
      expected: `${row.from_movements} from the movements${row.from_movements < 0 ? ' (below zero)' : ''}`,
      actual: row.kept === null ? 'no level row' : `${row.kept} kept`,
    })),
    ...valuations.map((row) => ({
      kind: 'stock_valuation',
      subject: `product ${row.product_id}`,
      expected: `${row.on_hand} on hand over all locations`,
      actual: row.kept === null ? 'no valuation row' : `${row.kept} kept`,
    })),
    ...orphans.map((row) => ({
      kind: 'movement_document',
      subject: `movement ${row.id}`,
      expected: `stock document ${row.document_id}`,
      actual: 'no such document',
    })),
  ];
}
