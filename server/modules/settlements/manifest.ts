// Settlements: the settlement sheet of a delivery trip (read over REST) and its closing (the operator CLI).
// `settlement.closed` carries the sheet as GET /trips/{id}/settlement returns it; one over 256 KB (a van of many
// products) goes out as the truncated record, whose fetch is that path.
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import type { DmsDeclarations } from '../dms/handlers/types.js';
import type { PostingDeclarations } from '../postings/subject.js';
import { API_BASE_PATH } from '../../platform/spec.js';
import type { WebhookObject, WebhookObjectSource } from '../../platform/webhooks/objects.js';
import { settlementRoutes } from './routes.js';
import { settlementPosting } from './posting.js';
import { readSettlementForWebhook, SETTLEMENT_CLOSED, SETTLEMENT_UPDATED } from './service.js';
import { routeSettlement } from './dms.js';

export const settlementObject: WebhookObjectSource = {
  read: async (db, actor, id) => (await readSettlementForWebhook(db, actor, id)) as unknown as WebhookObject | null,
  // The sheet is read by its trip: the record (the sheet itself) names it.
  fetchPath: (_id, record) => `${API_BASE_PATH}/trips/${encodeURIComponent(String(record.tripId))}/settlement`,
};

export const settlementsModule: ModuleManifest & PostingDeclarations & DmsDeclarations = {
  name: 'settlements',
  // The DMS documents it maps onto its posting functions (dms.ts).
  dmsHandlers: { route_settlement: routeSettlement },
  postingSubjects: [settlementPosting],
  routes: ({ db }) => settlementRoutes(db),
  webhookObjects: { [SETTLEMENT_CLOSED]: settlementObject, [SETTLEMENT_UPDATED]: settlementObject },
};
