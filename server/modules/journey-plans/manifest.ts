// Journey plans: which outlets a route visits on which weekday, replaced whole by PUT.
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import { journeyPlanRoutes } from './routes.js';

export const journeyPlansModule: ModuleManifest = {
  name: 'journey-plans',
  routes: ({ db }) => journeyPlanRoutes(db),
};
