// Customers (outlets): master data with personal fields behind customers:pii.
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import { resourceWebhookObject } from '../../platform/resources/webhook-objects.js';
import { customerRoutes } from './routes.js';
import { customers } from './service.js';

const customerObject = resourceWebhookObject(customers, 'customers');

export const customersModule: ModuleManifest = {
  name: 'customers',
  routes: ({ db }) => customerRoutes(db),
  webhookObjects: { 'customer.created': customerObject, 'customer.updated': customerObject },
};
