// A receipt's lifecycle as a transition table (server/domain/documents/transitions.ts): recorded posted; reversed
// (a bounced cheque, a recalled transfer) with a reason, which puts the amount back on the customer's account.
// Reversed is terminal: a posted receipt is never edited back, a new one is recorded instead.
import { defineTransitions } from '../../domain/documents/transitions.js';

export type PaymentStatus = 'posted' | 'reversed';
export type PaymentCommand = 'reverse';
export type PaymentEvent = 'payment.reversed';

export const paymentLifecycle = defineTransitions<PaymentStatus, PaymentCommand, PaymentEvent>('payment', 'posted', {
  posted: [{ command: 'reverse', to: 'reversed', event: 'payment.reversed' }],
  reversed: [],
});
