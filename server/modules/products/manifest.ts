// Products: the catalogue, with the empties each product carries and the deposit price of empties.
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import type { DmsDeclarations } from '../dms/handlers/types.js';
import { resourceWebhookObject } from '../../platform/resources/webhook-objects.js';
import { productRoutes } from './routes.js';
import { products } from './service.js';
import { product } from './dms.js';

const productObject = resourceWebhookObject(products, 'products');

export const productsModule: ModuleManifest & DmsDeclarations = {
  name: 'products',
  // The DMS documents it maps onto its own functions (dms.ts).
  dmsHandlers: { product },
  routes: ({ db }) => productRoutes(db),
  webhookObjects: { 'product.created': productObject, 'product.updated': productObject },
};
