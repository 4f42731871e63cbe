// The system operations: health, the spec, the reference page, the error catalogue and key introspection (/me,
// which describes the key itself and so reads the HTTP edge's caller rather than an actor).
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import { systemRoutes } from './routes.js';

export const systemModule: ModuleManifest = {
  name: 'system',
  routes: ({ db, config }) => systemRoutes({ environment: config.environment, db }),
};
