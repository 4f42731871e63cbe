// The composed registry the postings module reads: every document type's posting subject and every listener of
// posting outcomes, from the modules' manifests (server/composition/modules.ts builds it from MODULES and installs it
// as that list loads, so every process composed from it, and every test harness that imports it, has it). The
// postings module owns external_postings; it imports no document module and no listener's code.
import type { AccountingOutcome, PostingListener, PostingSubject } from '../../connectors/subjects.js';
import type { Tx } from '../../platform/database/transaction.js';

export interface PostingRegistry {
  subjects: ReadonlyMap<string, PostingSubject>;
  listeners: readonly PostingListener[];
}

/** Builds a registry from the modules' declarations; a document type declared twice is a bug. */
export function postingRegistryOf(
  declarations: readonly {
    name: string;
    postingSubjects?: readonly PostingSubject[];
    postingListeners?: readonly PostingListener[];
  }[],
): PostingRegistry {
  const subjects = new Map<string, PostingSubject>();
  const owners = new Map<string, string>();
  for (const module of declarations) {
    for (const subject of module.postingSubjects ?? []) {
      if (subjects.has(subject.type))
        throw new Error(
          `posting subject ${subject.type} is declared by two modules (${owners.get(subject.type)}, ${module.name})`,
        );
      subjects.set(subject.type, subject);
      owners.set(subject.type, module.name);
    }
  }
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
  if (!subject) throw new Error(`No module declares a posting subject for ${type} (postingSubjects in its manifest).`);
  return subject;
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
