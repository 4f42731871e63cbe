// The orders module's reads: one order, the list (a page of orders with their lines), and the webhook object.
import type { Actor } from '../../platform/access/actor.js';
import type { Db } from '../../platform/database/transaction.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { codesOf } from '../../platform/external-codes/external-codes.js';
import { requireFilterRecords } from '../../platform/lists/filter-records.js';
import { readPage, type ListRequest, type Page } from '../../platform/lists/page.js';
import { findOrder, linesOf, ORDER_RESOURCE, orderQuery } from './repository.js';
import { equals, hasExternalCode } from '../../platform/resources/filters.js';
import { toOrder, type Order } from './representation.js';

export interface OrderFilters {
  status?: string;
  customerId?: string;
  externalCode?: string;
}

export async function listOrders(
  db: Db,
  actor: Actor,
  request: ListRequest,
  filters: OrderFilters,
): Promise<Page<Order>> {
  const organizationId = actor.organization.id;
  await requireFilterRecords(db, organizationId, [
    { parameter: 'customerId', table: 'customers', what: 'customer', id: filters.customerId },
  ]);
  const page = await readPage('orders', orderQuery(db, organizationId), organizationId, request, {
    status: equals('sales_orders', 'status', filters.status),
    customerId: equals('sales_orders', 'customer_id', filters.customerId),
    externalCode: hasExternalCode('sales_orders', ORDER_RESOURCE, filters.externalCode),
  });
  const ids = page.rows.map((row) => row.id);
  const [lines, codes] = [
    await linesOf(db, organizationId, ids),
    await codesOf(db, organizationId, ORDER_RESOURCE, ids),
  ];
  return { ...page, rows: page.rows.map((row) => toOrder(row, lines.get(row.id)!, codes.get(row.id) ?? {})) };
}

/** One order, or null when the organisation has none with this id (the webhook reader). */
export async function readOrder(db: Db, actor: Actor, id: string): Promise<Order | null> {
  const row = await findOrder(db, actor.organization.id, id);
  if (!row) return null;
  const codes = await codesOf(db, actor.organization.id, ORDER_RESOURCE, [id]);
  return toOrder(row, (await linesOf(db, actor.organization.id, [id])).get(id)!, codes.get(id) ?? {});
}

export async function getOrder(db: Db, actor: Actor, id: string): Promise<Order> {
  const order = await readOrder(db, actor, id);
  if (!order) throw new ApiError('not_found', `No order ${id} in this organisation.`);
  return order;
}
