// Returns: record and process a return (stock back, empties collected, a credit note of type return), reads. Its
// events are those of the documents it posts: the stock module's stock.movement.created and credit_note.created.
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import { returnRoutes } from './routes.js';

export const returnsModule: ModuleManifest = {
  name: 'returns',
  routes: ({ db }) => returnRoutes(db),
};
