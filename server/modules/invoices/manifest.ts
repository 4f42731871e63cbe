// Invoices: create and post, void, reads (the customer account they post to is a module of its own, customer-account),
// the invoice's lifecycle and the DMS's CS invoices (dms.ts). Its events carry the invoice.
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import type { MappedDocument } from '../dms/handlers/types.js';
import { documentType, type DocumentDeclarations, type DocumentType } from '../../domain/documents/registry.js';
import type { PostedDocument } from '../postings/subject.js';
import { invoiceLifecycle } from './lifecycle.js';
import { API_BASE_PATH } from '../../platform/spec.js';
import type { WebhookObject, WebhookObjectSource } from '../../platform/webhooks/objects.js';
import { INVOICE_CREATED, INVOICE_UPDATED, INVOICE_VOIDED } from './documents.js';
import { invoicePosting } from './posting.js';
import { findInvoice } from './repository.js';
import { toInvoice } from './representation.js';
import { invoiceRoutes } from './routes.js';
import { saleInvoice } from './dms.js';

/** Every invoice event carries the invoice as GET /invoices/{id} answers it. */
const invoiceObject: WebhookObjectSource = {
  async read(db, actor, id) {
    const found = await findInvoice(db, actor.organization.id, id);
    return found
      ? (toInvoice(found.invoice, found.lines, found.linesTruncated, found.externalCodes) as unknown as WebhookObject)
      : null;
  },
  fetchPath: (id) => `${API_BASE_PATH}/invoices/${encodeURIComponent(id)}`,
};

export const invoicesModule: ModuleManifest & DocumentDeclarations<DocumentType & PostedDocument & MappedDocument> = {
  name: 'invoices',
  documentTypes: [
    documentType({
      lifecycle: invoiceLifecycle,
      // Accounting (an Invoice) and fiscal (EFRIS): posting.ts.
      posting: invoicePosting,
      webhook: { object: invoiceObject, events: [INVOICE_CREATED, INVOICE_UPDATED, INVOICE_VOIDED] },
      // The DMS documents mapped onto its posting functions (dms.ts).
      dms: { sale_invoice: saleInvoice },
    }),
  ],
  routes: ({ db, connectors }) => invoiceRoutes(db, connectors),
};
