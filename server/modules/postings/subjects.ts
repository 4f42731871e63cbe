// The documents the external systems receive, each as its module describes itself for them (its `posting.ts`). Its own
// file so that the operator's retry (operations.ts), which the DMS re-process calls too, reads it without importing
// the posting job (run.ts), which tells the DMS module when a posting settles: that would be an import circle.
import type { PostedDocumentType } from '../../domain/postings.js';
import { creditNotePosting } from '../credit-notes/posting.js';
import { invoicePosting } from '../invoices/posting.js';
import { paymentPosting } from '../payments/posting.js';
import { settlementPosting } from '../settlements/posting.js';
import type { PostingSubject } from './subject.js';

export const SUBJECTS: Record<PostedDocumentType, PostingSubject> = { invoice: invoicePosting, payment: paymentPosting, credit_note: creditNotePosting, settlement: settlementPosting };
