// The orders module's own tables: sales_orders and sales_order_lines. Every statement is scoped by organization_id
// first (docs/decisions/0005-tenancy-organization-id-first.md).
import { sql, type Selectable } from 'kysely';
import type { SalesOrder as OrderTable, SalesOrderLine as OrderLineTable } from '../../../generated/kysely/types.js';
import type { Db } from '../../platform/database/transaction.js';
import type { ListQuery } from '../../platform/lists/page.js';

export const ORDER_RESOURCE = 'order';

/** An order's row, its order date as `YYYY-MM-DD`. */
export type OrderRow = Omit<Selectable<OrderTable>, 'order_date'> & { order_date: string };
export type OrderLineRow = Selectable<OrderLineTable>;

/** The orders of an organisation (aliased `t`). */
export function orderQuery(db: Db, organizationId: string): ListQuery<OrderRow> {
  return db
    .selectFrom('sales_orders as t')
    .select([
      't.organization_id',
      't.id',
      't.number',
      't.customer_id',
      't.status',
      't.currency',
      't.salesperson_id',
      't.location_id',
      't.subtotal',
      't.discount',
      't.tax',
      't.total',
      't.note',
      't.cancel_reason',
      't.cancelled_at',
      't.created_at',
      't.updated_at',
      // A DATE as its calendar string: pg would make it a Date at local midnight, which can shift the day.
      sql<string>`to_char(t.order_date, 'YYYY-MM-DD')`.as('order_date'),
    ])
    .where('t.organization_id', '=', organizationId) as unknown as ListQuery<OrderRow>;
}

export async function findOrder(db: Db, organizationId: string, id: string): Promise<OrderRow | null> {
  return (
    ((await orderQuery(db, organizationId).where('t.id', '=', id).executeTakeFirst()) as OrderRow | undefined) ?? null
  );
}

/** The lines of some orders, by order id, in line order. */
export async function linesOf(
  db: Db,
  organizationId: string,
  orderIds: string[],
): Promise<Map<string, OrderLineRow[]>> {
  const byOrder = new Map<string, OrderLineRow[]>(orderIds.map((id) => [id, []]));
  if (orderIds.length === 0) return byOrder;
  const rows = await db
    .selectFrom('sales_order_lines')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('order_id', 'in', orderIds)
    .orderBy('order_id')
    .orderBy('line_number')
    .execute();
  for (const row of rows) byOrder.get(row.order_id)?.push(row);
  return byOrder;
}
