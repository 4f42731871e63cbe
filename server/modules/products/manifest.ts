// Products: the catalogue, with the empties each product carries and the deposit price of empties.
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import { resourceWebhookObject } from '../../platform/resources/webhook-objects.js';
import { productRoutes } from './routes.js';
import { products } from './service.js';

const productObject = resourceWebhookObject(products, 'products');

export const productsModule: ModuleManifest = {
  name: 'products',
  routes: ({ db }) => productRoutes(db),
  webhookObjects: { 'product.created': productObject, 'product.updated': productObject },
};
