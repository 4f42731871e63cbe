// Invoices: create and post, void, reads (the customer account they post to is a module of its own, customer-account),
// the invoice's lifecycle and the DMS's CS invoices (dms.ts). Its events carry the invoice.
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import type { DmsDeclarations } from '../dms/handlers/types.js';
import { documentType, type DocumentDeclarations } from '../../domain/documents/registry.js';
import type { PostingDeclarations } from '../postings/subject.js';
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

export const invoicesModule: ModuleManifest & PostingDeclarations & DocumentDeclarations & DmsDeclarations = {
  name: 'invoices',
  // The DMS documents it maps onto its posting functions (dms.ts).
  dmsHandlers: { sale_invoice: saleInvoice },
  documentTypes: [documentType(invoiceLifecycle)],
  postingSubjects: [invoicePosting],
  routes: ({ db, connectors }) => invoiceRoutes(db, connectors),
  webhookObjects: {
    [INVOICE_CREATED]: invoiceObject,
    [INVOICE_UPDATED]: invoiceObject,
    [INVOICE_VOIDED]: invoiceObject,
  },
};
