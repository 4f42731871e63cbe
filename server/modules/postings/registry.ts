// The composed registry the postings module reads: every posted document type's posting subject (the `posting` of its
// declaration, `documentType({...})` in its module's manifest) and every listener of posting outcomes, from the
// modules' manifests (server/composition/modules.ts builds it from MODULES and installs it as that list loads, so every
// process composed from it, and every test harness that imports it, has it). The postings module owns
// external_postings; it imports no document module and no listener's code.
import type {
  AccountingOutcome,
  PostedDocument,
  PostingDeclarations,
  PostingListener,
  PostingSubject,
} from '../../connectors/subjects.js';
import {
  declaredDocumentTypes,
  type DocumentDeclarations,
  type DocumentType,
} from '../../domain/documents/registry.js';
import type { Tx } from '../../platform/database/transaction.js';

export interface PostingRegistry {
  /** Document type -> its subject: the document types the external systems receive, and no other. */
  subjects: ReadonlyMap<string, PostingSubject>;
  listeners: readonly PostingListener[];
}

/** Builds a registry from the modules' declarations; a document type declared twice is a bug. */
export function postingRegistryOf(
  declarations: readonly ({ name: string } & PostingDeclarations &
    DocumentDeclarations<DocumentType & PostedDocument>)[],
): PostingRegistry {
  const subjects = new Map<string, PostingSubject>();
  for (const { declared } of declaredDocumentTypes(declarations))
    if (declared.posting) subjects.set(declared.type, declared.posting);
  return { subjects, listeners: declarations.flatMap((module) => module.postingListeners ?? []) };
}

let installed: PostingRegistry | null = null;

/** Makes `registry` the one the postings module reads (the composition calls it); returns it. */
export function installPostingRegistry(registry: PostingRegistry): PostingRegistry {
  installed = registry;
  return installed;
}

function registry(): PostingRegistry {
  if (!installed)
    throw new Error(
      "No posting registry is installed: the composition (server/composition/modules.ts) installs the one built from the modules' manifests.",
    );
  return installed;
}

/** The posting subject of a document type (a row of external_postings names it). */
export function subjectOf(type: string): PostingSubject {
  const subject = registry().subjects.get(type);
  if (!subject)
    throw new Error(
      `No module declares a posting subject for ${type} (the \`posting\` of its documentType in its manifest).`,
    );
  return subject;
}

/** Whether the fiscal system receives documents of this type: its subject has a fiscal submission. */
export function isFiscalised(type: string): boolean {
  return subjectOf(type).fiscal !== undefined;
}

/** Tells every listener that a document's accounting posting settled, in the transaction that records it. */
export async function accountingPostingSettled(
  tx: Tx,
  organizationId: string,
  document: { type: string; id: string },
  outcome: AccountingOutcome,
): Promise<void> {
  for (const listener of registry().listeners) await listener(tx, organizationId, document, outcome);
}
