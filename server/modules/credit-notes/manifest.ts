// Credit notes: issue (applied at once), cancel, reads. Its events carry the credit note as GET answers it.
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import type { DmsDeclarations } from '../dms/handlers/types.js';
import { documentType, type DocumentDeclarations } from '../../domain/documents/registry.js';
import type { PostingDeclarations } from '../postings/subject.js';
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

export const creditNotesModule: ModuleManifest & PostingDeclarations & DocumentDeclarations & DmsDeclarations = {
  name: 'credit-notes',
  // The DMS documents it maps onto its posting functions (dms.ts).
  dmsHandlers: { credit_note: creditNote },
  documentTypes: [documentType(creditNoteLifecycle)],
  postingSubjects: [creditNotePosting],
  routes: ({ db, connectors }) => creditNoteRoutes(db, connectors),
  webhookObjects: {
    [CREDIT_NOTE_CREATED]: creditNoteObject,
    [CREDIT_NOTE_CANCELLED]: creditNoteObject,
    [CREDIT_NOTE_UPDATED]: creditNoteObject,
  },
};
