// Stock: the stock ledger (movements, levels, moving average cost), its adjustments and transfers, the empties
// ledger, the stock.movement.created event of every inventory document, and their postings to the accounting system
// (posting.ts: a JournalEntry at cost, or a supplier's Bill).
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import type { MappedDocument } from '../dms/handlers/types.js';
import { documentType, type DocumentDeclarations, type DocumentType } from '../../domain/documents/registry.js';
import type { PostedDocument } from '../postings/subject.js';
import { API_BASE_PATH } from '../../platform/spec.js';
import { OBJECT_LIMIT_BYTES, type WebhookObject, type WebhookObjectSource } from '../../platform/webhooks/objects.js';
import { STOCK_MOVEMENT_CREATED } from './documents.js';
import { STOCK_DOCUMENT_POSTED, stockDocumentPosting } from './posting.js';
import { findStockDocument } from './repository.js';
import { toStockDocument } from './representation.js';
import { stockRoutes } from './routes.js';
import { companyInvoice, stockAdjustment, vanReplenishment, vanStockOut } from './dms.js';

/** `stock.movement.created` carries the stock document as GET answers it, its movements fitted (fitMovements). */
const stockDocumentObject: WebhookObjectSource = {
  async read(db, actor, id) {
    const found = await findStockDocument(db, actor, id);
    return found
      ? fitMovements(toStockDocument(found.document, found.movements, actor) as unknown as WebhookObject)
      : null;
  },
  // The movements in full: the document's own movements of the ledger.
  fetchPath: (id) => `${API_BASE_PATH}/stock-movements?documentId=${encodeURIComponent(id)}`,
};

export const stockModule: ModuleManifest & DocumentDeclarations<DocumentType & PostedDocument & MappedDocument> = {
  name: 'stock',
  documentTypes: [
    documentType({
      // Every stock document (adjustments, transfers, van loads, receipts): written once, no lifecycle.
      type: STOCK_DOCUMENT_POSTED,
      // Accounting only, when it changes the books' stock value (a JournalEntry at cost, a supplier's Bill): posting.ts.
      posting: stockDocumentPosting,
      webhook: { object: stockDocumentObject, events: [STOCK_MOVEMENT_CREATED] },
      // The DMS documents mapped onto its posting functions (dms.ts).
      dms: {
        van_replenishment: vanReplenishment,
        van_stock_out: vanStockOut,
        stock_adjustment: stockAdjustment,
        company_invoice: companyInvoice,
      },
    }),
  ],
  routes: ({ db }) => stockRoutes(db),
};

/**
 * A stock document whose JSON would pass the webhook object limit keeps the movements that fit and says
 * `movementsTruncated` (the rest are read from GET /stock-movements?documentId=), rather than becoming a truncated
 * record without any movement.
 */
export function fitMovements(document: WebhookObject, limitBytes = OBJECT_LIMIT_BYTES): WebhookObject {
  const movements = document.movements as unknown[];
  if (Buffer.byteLength(JSON.stringify(document), 'utf8') <= limitBytes) return document;
  const head = Buffer.byteLength(JSON.stringify({ ...document, movements: [], movementsTruncated: true }), 'utf8');
  let size = head;
  let kept = 0;
  for (const movement of movements) {
    const added = Buffer.byteLength(JSON.stringify(movement), 'utf8') + (kept > 0 ? 1 : 0); // the comma between
    if (size + added > limitBytes) break;
    size += added;
    kept += 1;
  }
  return { ...document, movements: movements.slice(0, kept), movementsTruncated: true };
}
