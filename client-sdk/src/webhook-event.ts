// The webhook envelope (spec: Events > Envelope) as a union discriminated by `type`, so narrowing on the type
// gives the object's type. data.object is the record as the API's GET returns it (without customers:pii
// fields), or one of the special objects when the record was deleted or is too big to send.
import type { components } from './generated/api-types.js';

type Schemas = components['schemas'];

/** The event kinds of the spec (Events > Event kinds). */
export type WebhookEventType =
  | 'customer.created' | 'customer.updated'
  | 'product.created' | 'product.updated'
  | 'order.created' | 'order.status_changed'
  | 'invoice.created' | 'invoice.updated' | 'invoice.voided'
  | 'credit_note.created'
  | 'payment.created' | 'payment.reversed'
  | 'stock.movement.created'
  | 'trip.closed' | 'settlement.closed'
  | 'dms.document.flagged' | 'dms.reconciliation.completed' | 'dms.action.status_changed'
  | 'webhook.test';

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

interface TypedObjects {
  'customer.created': Sent<Schemas['Customer']>;
  'customer.updated': Sent<Schemas['Customer']>;
  'product.created': Sent<Schemas['Product']>;
  'product.updated': Sent<Schemas['Product']>;
  'trip.closed': Sent<Schemas['Trip']>;
}

export type WebhookObjectOf<Type extends WebhookEventType> = Type extends keyof TypedObjects ? TypedObjects[Type] : WebhookRecord;

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
