// Credit notes: issue (applied at once), cancel, reads. Its events carry the credit note as GET answers it.
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import type { MappedDocument } from '../dms/handlers/types.js';
import { documentType, type DocumentDeclarations, type DocumentType } from '../../domain/documents/registry.js';
import type { PostedDocument } from '../postings/subject.js';
import { creditNoteLifecycle } from './lifecycle.js';
import { API_BASE_PATH } from '../../platform/spec.js';
import type { WebhookObject, WebhookObjectSource } from '../../platform/webhooks/objects.js';
import { CREDIT_NOTE_CANCELLED, CREDIT_NOTE_CREATED } from './documents.js';
import { CREDIT_NOTE_UPDATED, creditNotePosting } from './posting.js';
import { findCreditNote } from './repository.js';
import { toCreditNote } from './representation.js';
import { creditNoteRoutes } from './routes.js';
import { creditNote } from './dms.js';

/** Every credit note event carries the credit note as GET /credit-notes/{id} answers it (to the event's actor). */
const creditNoteObject: WebhookObjectSource = {
  async read(db, actor, id) {
    const found = await findCreditNote(db, actor.organization.id, id);
    return found ? (toCreditNote(found.row, found.parts, actor) as unknown as WebhookObject) : null;
  },
  fetchPath: (id) => `${API_BASE_PATH}/credit-notes/${encodeURIComponent(id)}`,
};

export const creditNotesModule: ModuleManifest & DocumentDeclarations<DocumentType & PostedDocument & MappedDocument> =
  {
    name: 'credit-notes',
    documentTypes: [
      documentType({
        lifecycle: creditNoteLifecycle,
        // Accounting (a CreditMemo) and fiscal (EFRIS's credit note application): posting.ts.
        posting: creditNotePosting,
        webhook: {
          object: creditNoteObject,
          events: [CREDIT_NOTE_CREATED, CREDIT_NOTE_CANCELLED, CREDIT_NOTE_UPDATED],
        },
        // The DMS documents mapped onto its posting functions (dms.ts).
        dms: { credit_note: creditNote },
      }),
    ],
    routes: ({ db, connectors }) => creditNoteRoutes(db, connectors),
  };
