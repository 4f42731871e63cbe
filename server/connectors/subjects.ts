// What a document type gives the postings to the external systems, and what others may hear of them: the contract
// between the document modules, the postings module and whoever follows a posting (the DMS flags). A module
// declares its subjects and listeners in its manifest (PostingDeclarations below); the composition reads
// every manifest into one registry (server/composition/modules.ts), which the postings module consults. So the
// postings module imports no document module, and no document module writes another's tables to follow a posting.
import type { Tx } from '../platform/database/transaction.js';
import type {
  AccountingConnector,
  AccountingRef,
  ConnectorResult,
  FiscalApplication,
  FiscalConnector,
  FiscalReceipt,
} from './types.js';

/**
 * A call ready to make, or why not yet (another document must post first), never (nothing to send), or not until
 * someone acts here (a missing set-up the service can name: failed with the reason, retried with `admin postings retry`).
 */
export type Prepared<C> =
  | { kind: 'call'; call: C }
  | { kind: 'wait'; reason: string }
  | { kind: 'skip'; reason: string }
  | { kind: 'fail'; reason: string };

/** What an accounting posting made there: its object, and any others made with it (a credit note's cash refund). */
export type PostedRefs = AccountingRef & { related?: AccountingRef[] };
export type AccountingCall = (
  connector: AccountingConnector,
  requestId: string,
) => Promise<ConnectorResult<PostedRefs>>;

/** A fiscal call's answer in the document's terms: fiscalised, or a credit note application still waiting, or refused. */
export type FiscalAnswer =
  | { state: 'fiscalised'; receipt: FiscalReceipt }
  | { state: 'submitted'; applicationId: string }
  | { state: 'rejected'; reason: string };
export type FiscalCall = (connector: FiscalConnector) => Promise<ConnectorResult<FiscalAnswer>>;

/** A document's accounting posting, as its `posting` block and external_postings say. */
export type PostingStatus = 'pending' | 'posted' | 'failed' | 'not_applicable' | 'reversed';

export interface PostingBlock {
  status: PostingStatus;
  accountingRef: string | null;
  accountingType: string | null;
  reason: string | null;
}

export interface FiscalBlock {
  status: 'pending' | 'submitted' | 'fiscalised' | 'failed' | 'rejected' | 'cancelled';
  receipt: FiscalReceipt | null;
  reason: string | null;
}

/**
 * A document type the external systems receive, as its module describes it (its `posting.ts`): the document in the
 * connectors' terms, read in the posting's transaction, and the writers of its own `posting` and `fiscal` blocks.
 */
export interface PostingSubject {
  /** Its accounting posting: the call to make with the document as the accounting system takes it. */
  accounting(tx: Tx, organizationId: string, id: string): Promise<Prepared<AccountingCall>>;
  /**
   * Its fiscal submission, which makes the document type fiscalised (invoices, credit notes: queuePostings queues a
   * fiscal posting where the organisation is connected); `application` is a credit note's application id once
   * submitted.
   */
  fiscal?(tx: Tx, organizationId: string, id: string, application: string | null): Promise<Prepared<FiscalCall>>;
  setPosting(tx: Tx, organizationId: string, id: string, block: PostingBlock): Promise<void>;
  setFiscal?(tx: Tx, organizationId: string, id: string, block: FiscalBlock): Promise<void>;
}

/** How a document's accounting posting ended: posted there (its ref), failed for good, or nothing to send. */
export type AccountingOutcome =
  | { status: 'posted'; ref: string }
  | { status: 'failed'; reason: string; periodClosed: boolean }
  | { status: 'not_applicable' };

/**
 * Told, in the transaction that records it, when a document's accounting posting settles (a `post`, not a reversal).
 * It writes only its own module's tables (the DMS: the flags of the documents that applied this one).
 */
export type PostingListener = (
  tx: Tx,
  organizationId: string,
  document: { type: string; id: string },
  outcome: AccountingOutcome,
) => Promise<void>;

/**
 * The part of a document type's declaration (`documentType({...})`, server/domain/documents/registry.ts) this layer
 * owns: what the external systems receive of it. The composition reads it into the postings registry
 * (server/modules/postings/registry.ts), where the external_postings rows find it by the document's type.
 */
export interface PostedDocument {
  /** Its posting subject (its module's `posting.ts`); none: the external systems receive nothing of it. */
  posting?: PostingSubject;
}

/**
 * What a module's manifest adds to ModuleManifest (server/platform/modules/manifest.ts) when it follows postings (its
 * posted document types declare their subjects in their own declarations, PostedDocument above).
 */
export interface PostingDeclarations {
  /** What it does when a document's accounting posting settles (the DMS: its flags follow), in that transaction. */
  postingListeners?: readonly PostingListener[];
}

/** FiscalApplication (the connector's) as a FiscalAnswer. */
export function answerOfApplication(application: FiscalApplication): FiscalAnswer {
  switch (application.status) {
    case 'approved':
      return { state: 'fiscalised', receipt: application.receipt };
    case 'submitted':
      return { state: 'submitted', applicationId: application.applicationId };
    case 'rejected':
      return {
        state: 'rejected',
        reason: `The fiscal system rejected the credit note application ${application.applicationId}: ${application.reason}`,
      };
    case 'cancelled':
      return {
        state: 'rejected',
        reason: `The credit note application ${application.applicationId} was cancelled in the fiscal system.`,
      };
  }
}
