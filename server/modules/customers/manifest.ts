// Customers (outlets): master data with personal fields behind customers:pii.
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import type { DmsDeclarations } from '../dms/handlers/types.js';
import { resourceWebhookObject } from '../../platform/resources/webhook-objects.js';
import { customerRoutes } from './routes.js';
import { customers } from './service.js';
import { customer } from './dms.js';

const customerObject = resourceWebhookObject(customers, 'customers');

export const customersModule: ModuleManifest & DmsDeclarations = {
  name: 'customers',
  // The DMS documents it maps onto its own functions (dms.ts).
  dmsHandlers: { customer },
  routes: ({ db }) => customerRoutes(db),
  webhookObjects: { 'customer.created': customerObject, 'customer.updated': customerObject },
};
