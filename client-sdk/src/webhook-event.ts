// The webhook envelope (spec: Events > Envelope) as a union discriminated by `type`, so narrowing on the type
// gives the object's type. data.object is the record as the API's GET returns it (without customers:pii
// fields), or one of the special objects when the record was deleted or is too big to send.
import type { components } from './generated/api-types.js';

type Schemas = components['schemas'];

/** The event kinds the service sends (spec: Events > Event kinds, and each schema's own list of its events). */
export const WEBHOOK_EVENT_TYPES = [
  'customer.created',
  'customer.updated',
  'product.created',
  'product.updated',
  'order.created',
  'order.status_changed',
  'invoice.created',
  'invoice.updated',
  'invoice.voided',
  'credit_note.created',
  'credit_note.cancelled',
  'credit_note.updated',
  'payment.created',
  'payment.reversed',
  'payment.updated',
  'stock.movement.created',
  'trip.closed',
  'settlement.closed',
  'settlement.updated',
  'dms.document.flagged',
  'dms.reconciliation.completed',
  'dms.action.status_changed',
  'webhook.test',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** A record deleted before the event was sent. */
export interface DeletedRecord {
  id: string;
  deleted: true;
  deletedAt: string;
  updatedAt: string;
}

/** A record over 256 KB (or too costly to build): read it in full from `fetch`. */
export interface TruncatedRecord {
  id: string;
  truncated: true;
  reason: string;
  /** The GET path that reads the record in full. */
  fetch: string;
  summary: Record<string, unknown>;
  updatedAt: string;
  summaryTruncated?: true;
}

/** An object whose schema the SDK does not type (yet): the fields of the record as the API returns it. */
export interface WebhookRecord {
  id?: string;
  updatedAt?: string;
  [field: string]: unknown;
}

type Sent<Record> = Record | DeletedRecord | TruncatedRecord;

/** Each event kind's object: the record as the GET of its resource returns it. */
interface TypedObjects {
  'customer.created': Sent<Schemas['Customer']>;
  'customer.updated': Sent<Schemas['Customer']>;
  'product.created': Sent<Schemas['Product']>;
  'product.updated': Sent<Schemas['Product']>;
  'order.created': Sent<Schemas['Order']>;
  'order.status_changed': Sent<Schemas['Order']>;
  'invoice.created': Sent<Schemas['Invoice']>;
  'invoice.updated': Sent<Schemas['Invoice']>;
  'invoice.voided': Sent<Schemas['Invoice']>;
  'credit_note.created': Sent<Schemas['CreditNote']>;
  'credit_note.cancelled': Sent<Schemas['CreditNote']>;
  'credit_note.updated': Sent<Schemas['CreditNote']>;
  'payment.created': Sent<Schemas['Payment']>;
  'payment.reversed': Sent<Schemas['Payment']>;
  'payment.updated': Sent<Schemas['Payment']>;
  /** The stock document with its movements (cut, with `movementsTruncated`, when they do not all fit). */
  'stock.movement.created': Sent<Schemas['StockDocument']>;
  'trip.closed': Sent<Schemas['Trip']>;
  'settlement.closed': Sent<Schemas['Settlement']>;
  'settlement.updated': Sent<Schemas['Settlement']>;
  /** The flag as `GET /dms/{system}/flags` lists it. */
  'dms.document.flagged': Sent<Schemas['DmsFlag']>;
  /** The reconciled day as `GET /dms/{system}/reconciliations` lists it. */
  'dms.reconciliation.completed': Sent<Schemas['DmsReconciliation']>;
  // dms.action.status_changed (an action towards the DMS) and webhook.test (the endpoint) have no schema in the
  // API description: their objects are WebhookRecord.
}

export type WebhookObjectOf<Type extends WebhookEventType> = Type extends keyof TypedObjects
  ? TypedObjects[Type]
  : WebhookRecord;

export interface WebhookEnvelope<Type extends WebhookEventType = WebhookEventType> {
  /** The event id (`evt_...`): the same on every attempt and resend; skip ids already processed. */
  id: string;
  type: Type;
  createdAt: string;
  /** `v1`. */
  apiVersion: string;
  organizationId: string;
  data: { object: WebhookObjectOf<Type> };
}

/** A verified webhook delivery; narrow on `type` to get the object's type. */
export type WebhookEvent = { [Type in WebhookEventType]: WebhookEnvelope<Type> }[WebhookEventType];

// One name per event kind, as `InvoiceCreatedEvent` for `invoice.created` (test/sdk/packed-sdk.test.ts checks
// that every kind of WEBHOOK_EVENT_TYPES has its name here).
export type CustomerCreatedEvent = WebhookEnvelope<'customer.created'>;
export type CustomerUpdatedEvent = WebhookEnvelope<'customer.updated'>;
export type ProductCreatedEvent = WebhookEnvelope<'product.created'>;
export type ProductUpdatedEvent = WebhookEnvelope<'product.updated'>;
export type OrderCreatedEvent = WebhookEnvelope<'order.created'>;
export type OrderStatusChangedEvent = WebhookEnvelope<'order.status_changed'>;
export type InvoiceCreatedEvent = WebhookEnvelope<'invoice.created'>;
export type InvoiceUpdatedEvent = WebhookEnvelope<'invoice.updated'>;
export type InvoiceVoidedEvent = WebhookEnvelope<'invoice.voided'>;
export type CreditNoteCreatedEvent = WebhookEnvelope<'credit_note.created'>;
export type CreditNoteCancelledEvent = WebhookEnvelope<'credit_note.cancelled'>;
export type CreditNoteUpdatedEvent = WebhookEnvelope<'credit_note.updated'>;
export type PaymentCreatedEvent = WebhookEnvelope<'payment.created'>;
export type PaymentReversedEvent = WebhookEnvelope<'payment.reversed'>;
export type PaymentUpdatedEvent = WebhookEnvelope<'payment.updated'>;
export type StockMovementCreatedEvent = WebhookEnvelope<'stock.movement.created'>;
export type TripClosedEvent = WebhookEnvelope<'trip.closed'>;
export type SettlementClosedEvent = WebhookEnvelope<'settlement.closed'>;
export type SettlementUpdatedEvent = WebhookEnvelope<'settlement.updated'>;
export type DmsDocumentFlaggedEvent = WebhookEnvelope<'dms.document.flagged'>;
export type DmsReconciliationCompletedEvent = WebhookEnvelope<'dms.reconciliation.completed'>;
export type DmsActionStatusChangedEvent = WebhookEnvelope<'dms.action.status_changed'>;
export type WebhookTestEvent = WebhookEnvelope<'webhook.test'>;
