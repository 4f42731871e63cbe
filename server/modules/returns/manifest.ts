// Returns: record and process a return (stock back, empties collected, a credit note of type return), reads. Its
// events are those of the documents it posts: the stock module's stock.movement.created and credit_note.created.
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import type { DmsDeclarations } from '../dms/handlers/types.js';
import { returnRoutes } from './routes.js';
import { saleReturn } from './dms.js';

export const returnsModule: ModuleManifest & DmsDeclarations = {
  name: 'returns',
  // The DMS documents it maps onto its posting functions (dms.ts).
  dmsHandlers: { sale_return: saleReturn },
  routes: ({ db }) => returnRoutes(db),
};
