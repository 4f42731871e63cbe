// An invoice's lifecycle as a transition table (server/domain/documents/transitions.ts): created posted and open;
// paid when its balance reaches zero and open again if a payment or credit is reversed (settleInvoiceStatuses in
// customer-account/ledger.ts, which reads this table from the document registry: the manifest declares it); void
// while nothing is allocated or credited to it. Void is terminal: a posted invoice is never edited back.
import { defineTransitions } from '../../domain/documents/transitions.js';

export type InvoiceStatus = 'open' | 'paid' | 'void';
export type InvoiceCommand = 'void' | 'settle' | 'reopen';
export type InvoiceEvent = 'invoice.voided' | 'invoice.updated';

export const INVOICE_STATUSES: readonly InvoiceStatus[] = ['open', 'paid', 'void'];

export const invoiceLifecycle = defineTransitions<InvoiceStatus, InvoiceCommand, InvoiceEvent>('invoice', 'open', {
  open: [
    { command: 'void', to: 'void', event: 'invoice.voided' },
    { command: 'settle', to: 'paid', event: 'invoice.updated', when: 'its balance reaches zero' },
  ],
  paid: [{ command: 'reopen', to: 'open', event: 'invoice.updated', when: 'a payment or credit on it is reversed' }],
  void: [],
});
