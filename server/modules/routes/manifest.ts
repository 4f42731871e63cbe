// Routes: a salesperson, a van and the outlets served (the customers module moves its customers onto a route).
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import type { DmsDeclarations } from '../dms/handlers/types.js';
import { routeRoutes } from './routes.js';
import { salesman } from './dms.js';

export const routesModule: ModuleManifest & DmsDeclarations = {
  name: 'routes',
  // The DMS documents it maps onto its own functions (dms.ts).
  dmsHandlers: { salesman },
  routes: ({ db }) => routeRoutes(db),
};
