// Returns: record and process a return (stock back, empties collected, a credit note of type return), reads. Its
// events are those of the documents it posts: the stock module's stock.movement.created and credit_note.created.
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import type { MappedDocument } from '../dms/handlers/types.js';
import { documentType, type DocumentDeclarations, type DocumentType } from '../../domain/documents/registry.js';
import { returnRoutes } from './routes.js';
import { saleReturn } from './dms.js';

export const returnsModule: ModuleManifest & DocumentDeclarations<DocumentType & MappedDocument> = {
  name: 'returns',
  // A return moves through no lifecycle, is not posted itself (its credit note and stock document are) and writes no
  // event of its own; the DMS's returns map onto its posting function (dms.ts).
  documentTypes: [documentType({ type: 'return', dms: { sale_return: saleReturn } })],
  routes: ({ db }) => returnRoutes(db),
};
