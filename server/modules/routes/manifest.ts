// Routes: a salesperson, a van and the outlets served (the customers module moves its customers onto a route).
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import { routeRoutes } from './routes.js';

export const routesModule: ModuleManifest = {
  name: 'routes',
  routes: ({ db }) => routeRoutes(db),
};
