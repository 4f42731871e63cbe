// Locations: warehouses, damages stores and vans (their kind follows from the code).
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import type { DmsDeclarations } from '../dms/handlers/types.js';
import { locationRoutes } from './routes.js';
import { warehouse } from './dms.js';

export const locationsModule: ModuleManifest & DmsDeclarations = {
  name: 'locations',
  // The DMS documents it maps onto its own functions (dms.ts).
  dmsHandlers: { warehouse },
  routes: ({ db }) => locationRoutes(db),
};
