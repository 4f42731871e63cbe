// Prices: per product, price group and selling unit, set in batches (PUT /prices).
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import { priceRoutes } from './routes.js';

export const pricesModule: ModuleManifest = {
  name: 'prices',
  routes: ({ db }) => priceRoutes(db),
};
