// The composed registry of document types. A document type is declared once, in its module's manifest
// (`documentTypes: [documentType({...})]`, DocumentDeclarations below), and that declaration carries everything the
// rest of the service needs of it: its lifecycle (the transition table that moves it), the webhook object its
// events carry, and, declared by the layers that own those contracts and added by intersection, its accounting and
// fiscal posting subject (PostedDocument, server/connectors/subjects.ts) and its DMS mappings (MappedDocument,
// server/modules/dms/handlers/types.ts). server/composition/modules.ts builds every registry from these declarations
// (this one, the postings', the DMS handlers', the webhook objects) and installs them as that list loads, so every
// process composed from it (the service, the operator CLI, the benches) and every test harness that imports it has
// them. Whoever acts on a document type it does not own reads it here instead of importing its module: the customer
// account moves an invoice to paid and back by the invoice's own table without importing the invoices module.
import type { WebhookObjectSource } from '../../platform/webhooks/objects.js';
import type { DocumentTransitions } from './transitions.js';

/** The webhook object of a document type's events: each event type listed carries the document `object` reads. */
export interface DocumentWebhook {
  object: WebhookObjectSource;
  events: readonly string[];
}

/** A document type as its module declares it (the parts every layer reads; the others add theirs by intersection). */
export interface DocumentType {
  /** As the document's rows, events and external_postings name it (`invoice`, `credit_note`, `stock_document`). */
  type: string;
  /**
   * Its transition table (server/domain/documents/transitions.ts); none for a document that is written once and never
   * moves (a stock document, a settlement sheet). The registry holds every type's table side by side, so their status,
   * command and event unions are widened.
   */
  lifecycle?: DocumentTransitions<string, string, string>;
  /** The object its webhook events carry (none: it writes no event of its own, as a return). */
  webhook?: DocumentWebhook;
}

/**
 * What a module's manifest adds to ModuleManifest (server/platform/modules/manifest.ts) when it owns document types;
 * `Declared` is the declaration with the parts the other layers add (the composition names them all).
 */
export interface DocumentDeclarations<Declared extends DocumentType = DocumentType> {
  documentTypes?: readonly Declared[];
}

/** A declaration names its type by its lifecycle (`defineTransitions('invoice', …)`) or, without one, by `type`. */
type Named<State extends string, Command extends string, Event extends string> =
  | { lifecycle: DocumentTransitions<State, Command, Event>; type?: undefined }
  | { type: string; lifecycle?: undefined };

/**
 * Declares a document type (a module's manifest calls it): named by its lifecycle or its `type`, with its webhook
 * object and the parts the other layers define (`posting`, `dms`), kept as given; the lifecycle's unions are widened
 * for the registry.
 */
export function documentType<State extends string, Command extends string, Event extends string, Parts extends object>(
  declaration: Named<State, Command, Event> & { webhook?: DocumentWebhook } & Parts,
): DocumentType & Omit<Parts, 'type' | 'lifecycle'> {
  const { lifecycle, type, ...parts } = declaration;
  return {
    ...(parts as unknown as Omit<Parts, 'type' | 'lifecycle'>),
    type: lifecycle ? lifecycle.documentType : (type as string),
    ...(lifecycle ? { lifecycle: lifecycle as unknown as DocumentTransitions<string, string, string> } : {}),
  };
}

export type DocumentRegistry = ReadonlyMap<string, DocumentType>;

/**
 * The document types of every module's declarations, each with the module that declares it; a document type declared
 * twice is a bug. The registries that read one part of a declaration (postings, DMS handlers, webhook objects) walk
 * the declarations through this, so they refuse the same double declaration with the same words.
 */
export function declaredDocumentTypes<Declared extends DocumentType>(
  declarations: readonly ({ name: string } & DocumentDeclarations<Declared>)[],
): { module: string; declared: Declared }[] {
  const owners = new Map<string, string>();
  const found: { module: string; declared: Declared }[] = [];
  for (const module of declarations) {
    for (const declared of module.documentTypes ?? []) {
      const owner = owners.get(declared.type);
      if (owner !== undefined)
        throw new Error(`document type ${declared.type} is declared by two modules (${owner}, ${module.name})`);
      owners.set(declared.type, module.name);
      found.push({ module: module.name, declared });
    }
  }
  return found;
}

/** Builds the registry from the modules' declarations; a document type declared twice is a bug. */
export function documentRegistryOf(
  declarations: readonly ({ name: string } & DocumentDeclarations)[],
): DocumentRegistry {
  return new Map(declaredDocumentTypes(declarations).map(({ declared }) => [declared.type, declared]));
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

/** The transition table of a document type that has one (a type declared without one is a bug where one is asked). */
export function lifecycleOf(type: string): DocumentTransitions<string, string, string> {
  const { lifecycle } = documentTypeOf(type);
  if (!lifecycle) throw new Error(`The document type ${type} is declared without a lifecycle.`);
  return lifecycle;
}
