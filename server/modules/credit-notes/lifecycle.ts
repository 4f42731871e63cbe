// A credit note's lifecycle as a transition table (server/domain/documents/transitions.ts): issued and applied at
// once; cancelled by POST /credit-notes/{id}/cancel, which removes its applications. Cancelled is final.
import { defineTransitions } from '../../domain/documents/transitions.js';

export type CreditNoteStatus = 'applied' | 'cancelled';
export type CreditNoteCommand = 'cancel';
export type CreditNoteEvent = 'credit_note.cancelled';

export const CREDIT_NOTE_STATUSES: readonly CreditNoteStatus[] = ['applied', 'cancelled'];

export const creditNoteLifecycle = defineTransitions<CreditNoteStatus, CreditNoteCommand, CreditNoteEvent>(
  'credit_note',
  'applied',
  {
    applied: [{ command: 'cancel', to: 'cancelled', event: 'credit_note.cancelled' }],
    cancelled: [],
  },
);
