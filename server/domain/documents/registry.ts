// The composed registry of document types: each document module declares its types in its manifest
// (`documentTypes`, DocumentDeclarations below), with the lifecycle that moves them; server/composition/modules.ts
// builds the registry from every manifest and installs it as that list loads, so every process composed from it
// (the service, the operator CLI, the benches) and every test harness that imports it has it. Whoever acts on a
// document type it does not own reads it here instead of importing its module: the customer account moves an
// invoice to paid and back by the invoice's own table without importing the invoices module, which posts to it.
import type { DocumentTransitions } from './transitions.js';

/** A document type as its module declares it. */
export interface DocumentType {
  /** As the document's rows and events name it (`invoice`, `credit_note`). */
  type: string;
  /** Its transition table (server/domain/documents/transitions.ts). */
  // The registry holds every type's table side by side, so their status, command and event unions are widened.
  lifecycle: DocumentTransitions<string, string, string>;
}

/** What a module's manifest adds to ModuleManifest (server/platform/modules/manifest.ts) when it owns document types. */
export interface DocumentDeclarations {
  documentTypes?: readonly DocumentType[];
}

/**
 * Declares a document type by its lifecycle, which names it (`defineTransitions('invoice', …)`), the table's unions
 * widened for the registry (a module's manifest calls it).
 */
export function documentType<State extends string, Command extends string, Event extends string>(
  lifecycle: DocumentTransitions<State, Command, Event>,
): DocumentType {
  return {
    type: lifecycle.documentType,
    lifecycle: lifecycle as unknown as DocumentTransitions<string, string, string>,
  };
}

export type DocumentRegistry = ReadonlyMap<string, DocumentType>;

/** Builds the registry from the modules' declarations; a document type declared twice is a bug. */
export function documentRegistryOf(
  declarations: readonly ({ name: string } & DocumentDeclarations)[],
): DocumentRegistry {
  const types = new Map<string, DocumentType>();
  const owners = new Map<string, string>();
  for (const module of declarations) {
    for (const declared of module.documentTypes ?? []) {
      if (types.has(declared.type))
        throw new Error(
          `document type ${declared.type} is declared by two modules (${owners.get(declared.type)}, ${module.name})`,
        );
      types.set(declared.type, declared);
      owners.set(declared.type, module.name);
    }
  }
  return types;
}

let installed: DocumentRegistry | null = null;

/** Makes `registry` the one read here (the composition calls it); returns it. */
export function installDocumentRegistry(registry: DocumentRegistry): DocumentRegistry {
  installed = registry;
  return installed;
}

/** A document type as its module declared it. */
export function documentTypeOf(type: string): DocumentType {
  if (!installed)
    throw new Error(
      "No document registry is installed: the composition (server/composition/modules.ts) installs the one built from the modules' manifests.",
    );
  const declared = installed.get(type);
  if (!declared) throw new Error(`No module declares the document type ${type} (documentTypes in its manifest).`);
  return declared;
}
