// Sales orders: taken and cancelled over REST (POST /orders, POST /orders/{id}/cancel), read by id and as a list,
// moved to invoiced by the invoices module. `order.created` and `order.status_changed` are webhook events whose
// object is the order as GET /orders/{id} answers it.
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import { documentType, type DocumentDeclarations } from '../../domain/documents/registry.js';
import { API_BASE_PATH } from '../../platform/spec.js';
import type { WebhookObjectSource } from '../../platform/webhooks/objects.js';
import { ORDER_CREATED, ORDER_STATUS_CHANGED, orderLifecycle } from './lifecycle.js';
import { orderRoutes } from './routes.js';
import { readOrder } from './service.js';

const orderObject: WebhookObjectSource = {
  read: async (db, actor, id) => readOrder(db, actor, id),
  fetchPath: (id) => `${API_BASE_PATH}/orders/${encodeURIComponent(id)}`,
};

export const ordersModule: ModuleManifest & DocumentDeclarations = {
  name: 'orders',
  documentTypes: [
    documentType({
      lifecycle: orderLifecycle,
      webhook: { object: orderObject, events: [ORDER_CREATED, ORDER_STATUS_CHANGED] },
    }),
  ],
  routes: ({ db }) => orderRoutes(db),
};
