// Payments (collections): record, reverse, reads. Their account entries go through the customer account
// (the customer-account module). Its events carry the receipt.
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import type { MappedDocument } from '../dms/handlers/types.js';
import { documentType, type DocumentDeclarations, type DocumentType } from '../../domain/documents/registry.js';
import type { PostedDocument } from '../postings/subject.js';
import { paymentLifecycle } from './lifecycle.js';
import { API_BASE_PATH } from '../../platform/spec.js';
import type { WebhookObject, WebhookObjectSource } from '../../platform/webhooks/objects.js';
import { PAYMENT_CREATED, PAYMENT_REVERSED } from './documents.js';
import { PAYMENT_UPDATED, paymentPosting } from './posting.js';
import { findPayment } from './repository.js';
import { toPayment } from './representation.js';
import { paymentRoutes } from './routes.js';
import { chequeProcessing, customerCollection } from './dms.js';

/** Every payment event carries the receipt as GET /payments/{id} answers it. */
const paymentObject: WebhookObjectSource = {
  async read(db, actor, id) {
    const found = await findPayment(db, actor.organization.id, id);
    return found ? (toPayment(found) as unknown as WebhookObject) : null;
  },
  fetchPath: (id) => `${API_BASE_PATH}/payments/${encodeURIComponent(id)}`,
};

export const paymentsModule: ModuleManifest & DocumentDeclarations<DocumentType & PostedDocument & MappedDocument> = {
  name: 'payments',
  documentTypes: [
    documentType({
      lifecycle: paymentLifecycle,
      // Accounting only (a Payment): posting.ts.
      posting: paymentPosting,
      webhook: { object: paymentObject, events: [PAYMENT_CREATED, PAYMENT_REVERSED, PAYMENT_UPDATED] },
      // The DMS documents mapped onto its posting functions (dms.ts).
      dms: { customer_collection: customerCollection, cheque_processing: chequeProcessing },
    }),
  ],
  routes: ({ db, connectors }) => paymentRoutes(db, connectors),
};
