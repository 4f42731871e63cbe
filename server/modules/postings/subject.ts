// What the posting jobs need from each document module (invoices, payments, credit notes): the document in the
// connector's terms, read in a transaction, and the writers of its own `posting` and `fiscal` blocks (each change is
// the document's `*.updated` event). The document modules implement it in their posting.ts; this module never
// touches their tables itself.
import type { PostedDocumentType, PostingStatus } from '../../domain/postings.js';
import type { Tx } from '../../platform/database/transaction.js';
import type { AccountingConnector, AccountingRef, ConnectorResult, FiscalApplication, FiscalConnector, FiscalReceipt } from '../../connectors/types.js';

/** A call ready to make, or why not yet (another document must post first) or never (nothing to send). */
export type Prepared<C> = { kind: 'call'; call: C } | { kind: 'wait'; reason: string } | { kind: 'skip'; reason: string };

/** What an accounting posting made there: its object, and any others made with it (a credit note's cash refund). */
export type PostedRefs = AccountingRef & { related?: AccountingRef[] };
export type AccountingCall = (connector: AccountingConnector, requestId: string) => Promise<ConnectorResult<PostedRefs>>;

/** A fiscal call's answer in the document's terms: fiscalised, or a credit note application still waiting, or refused. */
export type FiscalAnswer = { state: 'fiscalised'; receipt: FiscalReceipt } | { state: 'submitted'; applicationId: string } | { state: 'rejected'; reason: string };
export type FiscalCall = (connector: FiscalConnector) => Promise<ConnectorResult<FiscalAnswer>>;

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

export interface PostingSubject {
  type: PostedDocumentType;
  /** Its accounting posting: the call to make with the document as the accounting system takes it. */
  accounting(tx: Tx, organizationId: string, id: string): Promise<Prepared<AccountingCall>>;
  /** Its fiscal submission (invoices, credit notes); `application` is a credit note's application id once submitted. */
  fiscal?(tx: Tx, organizationId: string, id: string, application: string | null): Promise<Prepared<FiscalCall>>;
  setPosting(tx: Tx, organizationId: string, id: string, block: PostingBlock): Promise<void>;
  setFiscal?(tx: Tx, organizationId: string, id: string, block: FiscalBlock): Promise<void>;
}

/** FiscalApplication (the connector's) as a FiscalAnswer. */
export function answerOfApplication(application: FiscalApplication): FiscalAnswer {
  switch (application.status) {
    case 'approved': return { state: 'fiscalised', receipt: application.receipt };
    case 'submitted': return { state: 'submitted', applicationId: application.applicationId };
    case 'rejected': return { state: 'rejected', reason: `The fiscal system rejected the credit note application ${application.applicationId}: ${application.reason}` };
    case 'cancelled': return { state: 'rejected', reason: `The credit note application ${application.applicationId} was cancelled in the fiscal system.` };
  }
}
