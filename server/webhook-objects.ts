// What each webhook event carries as data.object: the record as the API's GET returns it to a key without
// customers:pii, read when the event is sent. One line per event type; a later event kind adds its line here.
// Composition level, so the platform's webhook engine never imports a module.
import type pg from 'pg';
import type { CallerContext } from './platform/access/context.js';
import { ApiError } from './platform/errors/api-error.js';
import type { ResourceService } from './platform/resources/service.js';
import { API_BASE_PATH } from './platform/spec.js';
import type { WebhookObject, WebhookObjectRegistry, WebhookObjectSource } from './platform/webhooks/objects.js';
import { customers } from './modules/customers/service.js';
import { products } from './modules/products/service.js';

/** A reader of the organisation's records with no scopes at all: in particular not customers:pii. */
function webhookReader(organizationId: string): CallerContext {
  return {
    organizationId, organizationName: '', baseCurrency: '', deliveryModuleEnabled: false, fieldSalesModuleEnabled: false,
    apiKeyId: 'webhooks', keyName: 'webhook delivery', keyPrefix: 'webhooks', environment: 'sandbox',
    scopes: new Set<string>(), rateLimits: {} as CallerContext['rateLimits'],
  };
}

/** The GET by id of a shared-resource service; a record that no longer exists reads as null. */
function byId(service: Pick<ResourceService<unknown, unknown>, 'get'>, collection: string): WebhookObjectSource {
  return {
    async read(pool: pg.Pool, organizationId: string, id: string) {
      try {
        return (await service.get(pool, webhookReader(organizationId), id)) as WebhookObject;
      } catch (error) {
        if (error instanceof ApiError && error.code === 'not_found') return null;
        throw error;
      }
    },
    fetchPath: (id) => `${API_BASE_PATH}/${collection}/${encodeURIComponent(id)}`,
  };
}

export const webhookObjects: WebhookObjectRegistry = {
  'customer.created': byId(customers, 'customers'),
  'customer.updated': byId(customers, 'customers'),
  'product.created': byId(products, 'products'),
  'product.updated': byId(products, 'products'),
};

/** Every event type an endpoint can subscribe to (webhook.test is sent on request, to one endpoint). */
export const webhookEventTypes: readonly string[] = Object.keys(webhookObjects);
