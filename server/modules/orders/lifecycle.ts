// A sales order's lifecycle as a transition table (server/domain/documents/transitions.ts): open -> invoiced (an
// invoice names it; the invoices module moves it) or open -> cancelled (POST /orders/{id}/cancel). Both are final.
// Every move writes order.status_changed.
import { defineTransitions } from '../../domain/documents/transitions.js';

export type OrderStatus = 'open' | 'invoiced' | 'cancelled';
export type OrderCommand = 'invoice' | 'cancel';
export const ORDER_CREATED = 'order.created';
export const ORDER_STATUS_CHANGED = 'order.status_changed';

export const orderLifecycle = defineTransitions<OrderStatus, OrderCommand, typeof ORDER_STATUS_CHANGED>(
  'order',
  'open',
  {
    open: [
      { command: 'invoice', to: 'invoiced', event: ORDER_STATUS_CHANGED, when: 'an invoice names it' },
      { command: 'cancel', to: 'cancelled', event: ORDER_STATUS_CHANGED },
    ],
    invoiced: [],
    cancelled: [],
  },
);
