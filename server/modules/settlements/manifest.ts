// Settlements: the settlement sheet of a delivery trip (read over REST) and its closing (the operator CLI).
// `settlement.closed` carries the sheet as GET /trips/{id}/settlement returns it; one over 256 KB (a van of many
// products) goes out as the truncated record, whose fetch is that path.
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import type { MappedDocument } from '../dms/handlers/types.js';
import { documentType, type DocumentDeclarations, type DocumentType } from '../../domain/documents/registry.js';
import type { PostedDocument } from '../postings/subject.js';
import { API_BASE_PATH } from '../../platform/spec.js';
import type { WebhookObject, WebhookObjectSource } from '../../platform/webhooks/objects.js';
import { settlementRoutes } from './routes.js';
import { settlementPosting } from './posting.js';
import { SETTLEMENT_CLOSED, SETTLEMENT_UPDATED } from './documents.js';
import { readSettlementForWebhook } from './service.js';
import { routeSettlement } from './dms.js';

export const settlementObject: WebhookObjectSource = {
  read: async (db, actor, id) => (await readSettlementForWebhook(db, actor, id)) as unknown as WebhookObject | null,
  // The sheet is read by its trip: the record (the sheet itself) names it.
  fetchPath: (_id, record) => `${API_BASE_PATH}/trips/${encodeURIComponent(String(record.tripId))}/settlement`,
};

export const settlementsModule: ModuleManifest & DocumentDeclarations<DocumentType & PostedDocument & MappedDocument> =
  {
    name: 'settlements',
    documentTypes: [
      documentType({
        // The settlement sheet: frozen once, no lifecycle of its own (closing it closes the trip).
        type: 'settlement',
        // Accounting only (a JournalEntry of the day's cash): posting.ts.
        posting: settlementPosting,
        webhook: { object: settlementObject, events: [SETTLEMENT_CLOSED, SETTLEMENT_UPDATED] },
        // The DMS documents mapped onto its posting functions (dms.ts).
        dms: { route_settlement: routeSettlement },
      }),
    ],
    routes: ({ db }) => settlementRoutes(db),
  };
