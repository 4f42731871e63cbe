// Sales orders of the sandbox: a dozen outlets with a price group each order a few beverages by the case, priced
// from their group's price list through the orders module's own posting function (as a partner's POST /orders
// would be), each with its DMS code (`SO-2026-0001`...), and one of them is cancelled, so that GET /orders, its filters and both order events have data.
import type { Actor } from '../../platform/access/actor.js';
import type { Tx } from '../../platform/database/transaction.js';
import { cancelOrder, createOrder } from '../orders/documents.js';
import type { SandboxDistributor } from './synthetic-distributor.js';

/** The business date of the sandbox's orders: after the price lists' validFrom (2026-01-01). */
export const SANDBOX_ORDER_DATE = '2026-11-20';
const ORDERS = 12;

export async function writeOrders(
  tx: Tx,
  actor: Actor,
  d: SandboxDistributor,
  idOf: Map<string, string>,
): Promise<void> {
  const priced = new Set(
    d.prices.filter((price) => price.unit === 'case').map((price) => `${price.price_group}|${price.product_code}`),
  );
  const beverages = d.products.filter((product) => !product.is_empty && product.selling_units.includes('case'));
  const outlets = d.outlets.filter((outlet) => outlet.status === 'active' && outlet.price_group).slice(0, ORDERS);
  for (const [i, outlet] of outlets.entries()) {
    const lines = beverages
      .filter((product) => priced.has(`${outlet.price_group}|${product.product_code}`))
      .filter((_, j) => (j + i) % 5 === 0)
      .slice(0, 3)
      .map((product, j) => ({
        productId: idOf.get(product.id)!,
        unit: 'case' as const,
        quantity: 1 + ((i * 7 + j * 3) % 10),
      }));
    if (lines.length === 0) continue;
    const order = await createOrder(tx, actor, {
      customerId: idOf.get(outlet.id)!,
      orderDate: SANDBOX_ORDER_DATE,
      externalCodes: { dms: `SO-2026-${String(i + 1).padStart(4, '0')}` },
      lines,
    });
    if (i === 1) await cancelOrder(tx, actor, { orderId: order.id, reason: 'The outlet asked for a later delivery' });
  }
}
