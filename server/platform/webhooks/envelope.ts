// The JSON body of a delivery (spec: Events > Envelope). Built at every attempt, so data.object is the record as
// it is when sent; the event id stays the same across attempts and resends, which is what receivers dedupe on.
import type { WebhookObject } from './objects.js';

export interface EventRow {
  organizationId: string;
  id: string;
  type: string;
  createdAt: Date;
}

export function envelopeBody(event: EventRow, object: WebhookObject): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    createdAt: event.createdAt.toISOString(),
    apiVersion: 'v1',
    organizationId: event.organizationId,
    data: { object },
  });
}
