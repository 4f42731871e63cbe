// Prices: per product, price group and selling unit, set in batches (PUT /prices).
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import type { DmsDeclarations } from '../dms/handlers/types.js';
import { priceRoutes } from './routes.js';
import { price } from './dms.js';

export const pricesModule: ModuleManifest & DmsDeclarations = {
  name: 'prices',
  // The DMS documents it maps onto its own functions (dms.ts).
  dmsHandlers: { price },
  routes: ({ db }) => priceRoutes(db),
};
