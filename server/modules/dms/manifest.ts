// The DMS: documents pushed by a distributor management system, posted through the same module functions as the
// REST API, each with its update flag (received, posted, rejected with a reason code, superseded). The push and the
// flags pull (routes.ts), the job that posts due documents (process.ts, sent by dispatch.ts), and the flag as the
// object of dms.document.flagged.
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import type { PostingDeclarations } from '../postings/subject.js';
import type { DmsDeclarations } from './handlers/types.js';
import { reasonCode } from './handlers/master-data.js';
import { dailyTotals } from './handlers/day-close.js';
import { inventorySummary } from './handlers/inventory.js';
import type { SendMany } from '../../platform/jobs/jobs.js';
import { API_BASE_PATH } from '../../platform/spec.js';
import type { WebhookObject, WebhookObjectSource } from '../../platform/webhooks/objects.js';
import { followAccountingPosting } from './accounting.js';
import { DMS_ACTION_STATUS_CHANGED, findAction } from './actions.js';
import { claimDocuments, DMS_QUEUE, releaseDocuments, type DmsJob } from './dispatch.js';
import { DMS_DOCUMENT_FLAGGED, findFlag, toFlag } from './flags.js';
import { processDocuments } from './process.js';
import { dmsRoutes } from './routes.js';
import { DMS_RECONCILIATION_COMPLETED, reconcileDue } from './reconciliation.js';
import { findReconciliation } from './reconciliation-reads.js';
import { reconciliationRoutes } from './reconciliation-routes.js';

const flagObject: WebhookObjectSource = {
  async read(db, actor, id) {
    const found = await findFlag(db, actor.organization.id, id);
    return found ? (toFlag(found) as unknown as WebhookObject) : null;
  },
  // A flag is read back through the pull, from its last change on.
  fetchPath: (_id, record) =>
    `${API_BASE_PATH}/dms/canonical/flags?since=${encodeURIComponent(String((record as { updatedAt?: string }).updatedAt ?? ''))}`,
};

// An action is read back with `admin dms actions` (no API operation lists them).
const actionObject: WebhookObjectSource = {
  async read(db, actor, id) {
    return (await findAction(db, actor.organization.id, id)) as unknown as WebhookObject | null;
  },
  fetchPath: () => '',
};

// A reconciled day is read back through the list, by its salesman and date.
const reconciliationObject: WebhookObjectSource = {
  async read(db, actor, id) {
    return (await findReconciliation(db, actor.organization.id, id)) as unknown as WebhookObject | null;
  },
  fetchPath: (_id, record) => {
    const day = record as { salesmanCode?: string; businessDate?: string };
    return `${API_BASE_PATH}/dms/canonical/reconciliations?salesman=${encodeURIComponent(String(day.salesmanCode ?? ''))}&date=${String(day.businessDate ?? '')}`;
  },
};

export const dmsModule: ModuleManifest & PostingDeclarations & DmsDeclarations = {
  name: 'dms',
  // The documents the DMS keeps itself: its reason codes, the inventory summary and daily totals (kept with the
  // document). The modules declare the documents they post (their dms.ts).
  dmsHandlers: { reason_code: reasonCode, inventory_summary: inventorySummary, daily_totals: dailyTotals },
  routes: ({ db }) => dmsRoutes(db).use(reconciliationRoutes(db)),
  // A document's flag follows the accounting posting of what it applied (accounting.ts).
  postingListeners: [followAccountingPosting],
  webhookObjects: {
    [DMS_DOCUMENT_FLAGGED]: flagObject,
    [DMS_ACTION_STATUS_CHANGED]: actionObject,
    [DMS_RECONCILIATION_COMPLETED]: reconciliationObject,
  },
  jobs: ({ db, logger, connectors, processId }) =>
    [
      {
        queue: DMS_QUEUE,
        concurrency: 2,
        wakeAfterJob: true,
        // A job whose worker died before claiming its documents is failed by the sweep and retried (jobs/lost.ts); the
        // documents of one that died posting them are due again by the sweep (dispatch.ts). The expiry is the last resort.
        queueOptions: { expireInSeconds: 300, retryLimit: 5, retryDelay: 5 },
        async handle(jobs: { id: string; data: DmsJob }[], _sendMany: SendMany) {
          for (const job of jobs) {
            await claimDocuments(db, processId, job.id, job.data);
            try {
              await processDocuments(
                { db, settings: connectors, logger },
                job.data.organizationId,
                job.data.documentIds,
              );
            } finally {
              await releaseDocuments(db, processId, job.data);
            }
          }
        },
      },
      {
        // The daily reconciliation (reconciliation.ts): each minute, the days past their connection's cut-off that are due.
        queue: 'dms.reconciliation',
        cron: '* * * * *',
        async handle() {
          await reconcileDue(db);
        },
      },
    ] as never,
};
