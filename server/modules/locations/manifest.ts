// Locations: warehouses, damages stores and vans (their kind follows from the code).
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import { locationRoutes } from './routes.js';

export const locationsModule: ModuleManifest = {
  name: 'locations',
  routes: ({ db }) => locationRoutes(db),
};
