// Delivery trips: read over REST (GET /trips, /trips/{id}, /trips/{id}/locations), moved by the operator CLI, the
// sandbox and the DMS's van days through the posting functions of documents.ts. `trip.closed` is the spec's webhook
// event of a trip; the other moves (trip.opened, trip.loaded, trip.departed, trip.returned) are outbox rows that
// no webhook carries yet (the spec's event kinds name only trip.closed).
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import { documentType, type DocumentDeclarations } from '../../domain/documents/registry.js';
import { tripLifecycle } from './lifecycle.js';
import { API_BASE_PATH } from '../../platform/spec.js';
import type { WebhookObjectSource } from '../../platform/webhooks/objects.js';
import { tripRoutes } from './routes.js';
import { dmsDayTrip, openDmsTripOf } from './documents.js';
import { readTripForWebhook } from './service.js';
import type { DmsDeclarations } from '../dms/handlers/types.js';

const tripObject: WebhookObjectSource = {
  read: async (db, actor, id) => readTripForWebhook(db, actor, id),
  fetchPath: (id) => `${API_BASE_PATH}/trips/${encodeURIComponent(id)}`,
};

export const tripsModule: ModuleManifest & DocumentDeclarations & DmsDeclarations = {
  name: 'trips',
  // The trips a DMS van day posts on (the DMS reaches them through the registry: dms -> trips would close a circle).
  dmsVanDayTrips: { dayTrip: dmsDayTrip, openTripOf: openDmsTripOf },
  documentTypes: [documentType({ lifecycle: tripLifecycle, webhook: { object: tripObject, events: ['trip.closed'] } })],
  routes: ({ db }) => tripRoutes(db),
};
