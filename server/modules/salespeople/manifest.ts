// Salespeople: the field force, each on a route; the phone is personal (customers:pii).
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import { salespersonRoutes } from './routes.js';

export const salespeopleModule: ModuleManifest = {
  name: 'salespeople',
  routes: ({ db }) => salespersonRoutes(db),
};
