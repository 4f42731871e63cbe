// The one list of the service's modules. Everything a module adds (routes, the events it writes and how a webhook
// reads their records, its document types and their lifecycles, the documents it posts to the external systems and
// what it does when a posting settles, the DMS documents it maps, background jobs) comes from its manifest; adding a
// module is one line here.
import type { ModuleManifest } from '../platform/modules/manifest.js';
import type { PostedDocument, PostingDeclarations } from '../connectors/subjects.js';
import {
  declaredDocumentTypes,
  documentRegistryOf,
  installDocumentRegistry,
  type DocumentDeclarations,
  type DocumentRegistry,
  type DocumentType,
} from '../domain/documents/registry.js';
import type { WebhookObjectRegistry } from '../platform/webhooks/objects.js';
import { installPostingRegistry, postingRegistryOf, type PostingRegistry } from '../modules/postings/registry.js';
import {
  dmsHandlerRegistryOf,
  installDmsHandlers,
  installVanDayTrips,
  vanDayTripsOf,
  type DmsHandlerRegistry,
} from '../modules/dms/handlers/registry.js';
import type { DmsDeclarations, MappedDocument } from '../modules/dms/handlers/types.js';
import { systemModule } from '../modules/system/manifest.js';
import { customersModule } from '../modules/customers/manifest.js';
import { productsModule } from '../modules/products/manifest.js';
import { pricesModule } from '../modules/prices/manifest.js';
import { locationsModule } from '../modules/locations/manifest.js';
import { salespeopleModule } from '../modules/salespeople/manifest.js';
import { routesModule } from '../modules/routes/manifest.js';
import { journeyPlansModule } from '../modules/journey-plans/manifest.js';
import { stockModule } from '../modules/stock/manifest.js';
import { invoicesModule } from '../modules/invoices/manifest.js';
import { tripsModule } from '../modules/trips/manifest.js';
import { fieldActivityModule } from '../modules/field-activity/manifest.js';
import { ordersModule } from '../modules/orders/manifest.js';
import { creditNotesModule } from '../modules/credit-notes/manifest.js';
import { returnsModule } from '../modules/returns/manifest.js';
import { settlementsModule } from '../modules/settlements/manifest.js';
import { notificationsModule } from '../modules/notifications/manifest.js';
import { paymentsModule } from '../modules/payments/manifest.js';
import { postingsModule } from '../modules/postings/manifest.js';
import { dmsModule } from '../modules/dms/manifest.js';

/**
 * A document type's declaration with every part a layer defines: its lifecycle and webhook object (the domain's
 * DocumentType), its posting subject (PostedDocument) and its DMS mappings (MappedDocument).
 */
export type ComposedDocumentType = DocumentType & PostedDocument & MappedDocument;

/** A module's manifest with what it may offer the others through the composed registries. */
export type ComposedManifest = ModuleManifest &
  PostingDeclarations &
  DocumentDeclarations<ComposedDocumentType> &
  DmsDeclarations;

export const MODULES: readonly ComposedManifest[] = [
  systemModule,
  customersModule,
  productsModule,
  pricesModule,
  locationsModule,
  salespeopleModule,
  routesModule,
  journeyPlansModule,
  stockModule,
  invoicesModule,
  tripsModule,
  fieldActivityModule,
  ordersModule,
  creditNotesModule,
  returnsModule,
  settlementsModule,
  paymentsModule,
  postingsModule,
  dmsModule,
  notificationsModule,
];

/**
 * Event type -> how its webhook reads the record, from every module's manifest: the events of each document type's
 * declaration (its `webhook`), and the module's other events (`webhookObjects`). An event type declared twice is a bug.
 */
export function webhookObjectsOf(modules: readonly (ModuleManifest & DocumentDeclarations)[]): WebhookObjectRegistry {
  const registry: Record<string, NonNullable<ModuleManifest['webhookObjects']>[string]> = {};
  const add = (type: string, source: NonNullable<ModuleManifest['webhookObjects']>[string]) => {
    if (type in registry) throw new Error(`event type ${type} is declared by two modules`);
    registry[type] = source;
  };
  declaredDocumentTypes(modules); // refuses a document type declared twice, as every registry does
  for (const module of modules) {
    for (const { webhook } of module.documentTypes ?? [])
      for (const type of webhook?.events ?? []) add(type, webhook!.object);
    for (const [type, source] of Object.entries(module.webhookObjects ?? {})) add(type, source);
  }
  return registry;
}

/** The service's registry: every module's webhook objects. */
export const webhookObjects: WebhookObjectRegistry = webhookObjectsOf(MODULES);

/** Every event type an endpoint can subscribe to (webhook.test is sent on request, to one endpoint). */
export const webhookEventTypes: readonly string[] = Object.keys(webhookObjects);

/**
 * The service's posting registry: every module's posting subjects and posting listeners. Installed for the postings
 * module as this list loads: every process that posts (the service, the operator CLI, the bench) is composed from it.
 */
export const postingRegistry: PostingRegistry = installPostingRegistry(postingRegistryOf(MODULES));

/**
 * The service's document registry: every module's document types with their lifecycles. Installed as this list loads,
 * as the posting registry is (the customer account reads the invoice's lifecycle there).
 */
export const documentRegistry: DocumentRegistry = installDocumentRegistry(documentRegistryOf(MODULES));

/**
 * The DMS's handlers, per DMS documentType, from every module's manifest (each document type's `dms`, and the
 * `dmsHandlers` of what is not a document type). Installed as this list loads.
 */
export const dmsHandlers: DmsHandlerRegistry = installDmsHandlers(dmsHandlerRegistryOf(MODULES));

/** The trips the DMS's van day posts on (the trips module's `dmsVanDayTrips`). Installed as this list loads. */
export const vanDayTrips = installVanDayTrips(vanDayTripsOf(MODULES));
