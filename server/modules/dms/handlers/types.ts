// What a document handler gets and gives: the document (with the earlier version it replaces, when that one was
// posted) and the connection's context in; out, the record it posted to, the document whose accounting posting its
// flag follows, and the wait keys it satisfies (documents waiting for them are tried again at once).
import type { Actor, DmsConnectionActor } from '../../../platform/access/actor.js';
import type { Tx } from '../../../platform/database/transaction.js';
import type { DmsDocumentJson } from '../canonical.js';
import type { DmsConnectionRow } from '../connections.js';
import type { Logger } from 'pino';
import type { ConnectorSettings } from '../../../connectors/connections.js';
import type { Db } from '../../../platform/database/transaction.js';

/** What posting needs from its process: the database, how to reach the external systems, where to log. */
export interface DmsRunner {
  db: Db;
  settings: ConnectorSettings;
  logger: Logger;
}

export interface DmsContext {
  actor: DmsConnectionActor;
  connection: DmsConnectionRow;
  /** The organisation is connected to the fiscal system and the connection's fiscalise switch is on. */
  fiscalApplies: boolean;
  /** The organisation has an accounting connection (its documents' postings are queued there). */
  accountingConnected: boolean;
}

export interface PreviousVersion {
  id: string;
  state: 'received' | 'posted' | 'rejected';
  /**
   * Whether the service applied it (it names the record it posted to). An applied version may still be `received`
   * (its accounting posting pending) or `rejected` (that posting failed): it is reversed all the same.
   */
  applied: boolean;
  dmsStatus: string;
  mikonoTable: string | null;
  mikonoId: string | null;
  /** The posted document whose accounting posting its flag followed. */
  accounting: { type: string; id: string } | null;
  document: DmsDocumentJson;
}

export interface LoadedDocument {
  id: string;
  organizationId: string;
  connectionId: string;
  type: string;
  number: string;
  date: string;
  /** The DMS status (confirmed, cancelled, cleared, bounced, active, inactive). */
  status: string;
  document: DmsDocumentJson;
  receivedAt: Date;
  retryUntil: Date | null;
  attempts: number;
  /** The flag's state when it was read (only a `received` document is posted), its note and what it waits for. */
  state: string;
  note: string | null;
  waitingFor: string | null;
  /** The earlier version this one replaces, when that one was posted (null for a first version). */
  previous: PreviousVersion | null;
  /**
   * What an earlier posting of this very document applied in the service (a document held for its accounting posting,
   * or rejected when that posting failed, then re-processed): never applied twice, only its flag follows the posting.
   */
  applied: { table: string; id: string; accounting: { type: string; id: string } | null } | null;
}

/**
 * The canonical DMS document as a mapping reads it (its number, date, header and body): what a module's pure
 * `…ToCommand(document, lookups)` maps onto its posting function's command, with the ids its handler looked up first.
 */
export type CanonicalDocument = Pick<LoadedDocument, 'number' | 'date' | 'document'>;

export interface Applied {
  /** The record posted to, as the flag's mikonoRef names it. */
  table: string;
  id: string;
  /** The document whose accounting posting the flag's quickbooksRef follows (invoice, payment, credit_note, stock_document). */
  accounting?: { type: 'invoice' | 'payment' | 'credit_note' | 'stock_document'; id: string } | null;
  /** Wait keys this document satisfies (reasons.ts waitKeys). */
  provides?: string[];
}

export interface DocumentHandler {
  /**
   * Before the transaction, outside it: asks the accounting system whether a posting this document reverses may
   * still be voided there (server/modules/postings/reversal.ts). Throws the refusal (R09 naming what to void by hand).
   */
  prepare?(runner: DmsRunner, context: DmsContext, document: LoadedDocument): Promise<void>;
  /** prepare runs for a first version too (a bounced cheque reverses another document). */
  preparesFresh?: boolean;
  apply(tx: Tx, context: DmsContext, document: LoadedDocument): Promise<Applied>;
  /**
   * The set form of apply, for first versions (no earlier version) that share a setKey (a van day's invoices): posted
   * together in the caller's savepoint, each outcome what apply gives or throws for the document alone (a DmsWait, a
   * DmsRejection or an ApiError). A thrown error fails the set: its documents are then posted one by one.
   */
  applyMany?(tx: Tx, context: DmsContext, documents: readonly LoadedDocument[]): Promise<(Applied | Error)[]>;
  setKey?(document: LoadedDocument): string;
}

/**
 * The part of a document type's declaration (`documentType({...})`, server/domain/documents/registry.ts) the DMS owns:
 * per DMS documentType, the handler that maps it onto the document type's posting functions (the module's `dms.ts`,
 * written with the DMS's kit: lookup.ts, reasons.ts, setup.ts, van-day.ts). The composition reads every declaration's
 * into one registry (registry.ts), which the DMS consults; so the DMS imports no document module to plug it in.
 */
export interface MappedDocument {
  dms?: Readonly<Record<string, DocumentHandler>>;
}

/**
 * What a module's manifest adds to ModuleManifest (server/platform/modules/manifest.ts) when it maps DMS documents that
 * are not document types of the service (master data: customers, products, prices, routes, locations; the DMS's own
 * reason codes, inventory summary and daily totals). A document type's mapping is declared with it (MappedDocument).
 */
export interface DmsDeclarations {
  dmsHandlers?: Readonly<Record<string, DocumentHandler>>;
  /** The trips a van day posts on (the trips module's): the kit's van-day.ts reads them from the registry. */
  dmsVanDayTrips?: VanDayTrips;
}

/**
 * What the kit's van day (van-day.ts) asks of the trips module, which declares it in its manifest: the DMS reaches
 * trips through the composed registry, not by import, because trips post stock (trips -> stock) and stock maps its DMS
 * documents with the kit (stock -> dms), so an import would close the circle dms -> trips -> stock -> dms.
 */
export interface VanDayTrips {
  /** The salesman's DMS day as a trip in transit on the van, opened and departed for the day when there is none. */
  dayTrip(
    tx: Tx,
    actor: Actor,
    day: {
      vanLocationId: string;
      warehouseLocationId: string;
      businessDate: string;
      routeId: string;
      salespersonId?: string;
    },
  ): Promise<{ id: string }>;
  /** The van's DMS day trip if one is open (loading or in transit): what a load of the van is recorded on. */
  openTripOf(tx: Tx, organizationId: string, vanLocationId: string): Promise<string | null>;
}
