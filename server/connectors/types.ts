// The connectors' contract: what the service asks of the accounting system (QuickBooks Online) and of the tax
// authority's fiscal system (EFRIS), in the service's own terms. Each connector is a real HTTP client of its system's
// wire format (server/connectors/accounting/, server/connectors/fiscal/); the simulators (server/connectors/simulators/)
// are HTTP servers of the same formats, so the code that would talk to the real systems is the code that runs.
//
// Every call is idempotent by the request id the caller passes (QuickBooks' `requestid`, EFRIS's seller
// `referenceNo`): the posting job derives it from the document and the operation, so a retry after a crash or a
// timeout sends the same id and the system does not book the document twice. Every call returns a result or a
// classified failure; it never throws for an answer of the system (a bug or a refused local check still throws).

/** Decimal amounts travel as strings (the service's `Money`), never as floats. */
export type Amount = string;
/** YYYY-MM-DD. */
export type Day = string;

/** Why a call did not succeed, classified for the posting job. */
export type ConnectorFailure =
  /** Worth retrying: an outage, a timeout, a 5xx, a rate limit (with the system's wait when it gave one). */
  | { kind: 'temporary'; message: string; retryAfterSeconds: number | null }
  /** The system's books are closed for the document's date; `closedThrough` is the last closed day when known. */
  | { kind: 'period_closed'; message: string; closedThrough: Day | null }
  /** Refused for good: the system's own code and message (for example QuickBooks 6140, EFRIS 2253 or 1434). */
  | { kind: 'rejected'; code: string; message: string };

export type ConnectorResult<T> = { ok: true; value: T } | { ok: false; failure: ConnectorFailure };

export const succeeded = <T>(value: T): ConnectorResult<T> => ({ ok: true, value });
export const failed = <T = never>(failure: ConnectorFailure): ConnectorResult<T> => ({ ok: false, failure });

// ---------------------------------------------------------------- accounting

/** The accounting system's object types the service writes (QuickBooks Online's entity names). */
export type AccountingType = 'Invoice' | 'Payment' | 'CreditMemo' | 'RefundReceipt' | 'Bill' | 'JournalEntry';

/** Where a document lives in the accounting system: its type and id (QuickBooks `Id`). */
export interface AccountingRef {
  type: AccountingType;
  id: string;
}

/** A customer or supplier as the accounting system names it: the service's id is the key, the name is shown. */
export interface AccountingParty {
  id: string;
  name: string;
}

export interface AccountingLine {
  /** The product's service id (QuickBooks ItemRef). */
  itemId: string;
  description: string;
  quantity: Amount;
  unitPrice: Amount;
  /** quantity x unitPrice less the line's discount, before tax. */
  amount: Amount;
  taxAmount: Amount;
}

export interface AccountingInvoice {
  /** The service's document number (QuickBooks DocNumber, unique per type). */
  docNumber: string;
  txnDate: Day;
  currency: string;
  customer: AccountingParty;
  lines: AccountingLine[];
  taxTotal: Amount;
  total: Amount;
  /** The organisation's default sales (income) account (`admin accounts set --sales`); null: the item's own. */
  incomeAccount?: string | null;
}

export type AccountingPaymentMethod = 'cash' | 'mobile_money' | 'cheque' | 'bank_transfer' | 'card';

export interface AccountingPayment {
  docNumber: string;
  txnDate: Day;
  currency: string;
  customer: AccountingParty;
  method: AccountingPaymentMethod;
  total: Amount;
  /** The invoices it pays, by their accounting refs (QuickBooks Line[].LinkedTxn); the rest is unapplied. */
  links: { invoice: AccountingRef; amount: Amount }[];
  /** Where the money goes (QuickBooks DepositToAccountRef): the organisation's cash account for a cash receipt; null: QuickBooks' default. */
  depositAccount?: string | null;
}

export interface AccountingCreditMemo {
  docNumber: string;
  txnDate: Day;
  currency: string;
  customer: AccountingParty;
  lines: AccountingLine[];
  taxTotal: Amount;
  total: Amount;
  /** The invoice it credits, when that invoice is posted (shown in the memo's PrivateNote). */
  invoice: AccountingRef | null;
  /** As the invoice's: the sales account the credit reverses; null: the item's own. */
  incomeAccount?: string | null;
}

export interface AccountingRefund {
  docNumber: string;
  txnDate: Day;
  currency: string;
  customer: AccountingParty;
  method: AccountingPaymentMethod;
  amount: Amount;
  description: string;
}

export interface AccountingBill {
  docNumber: string;
  txnDate: Day;
  currency: string;
  supplier: AccountingParty;
  lines: AccountingLine[];
  total: Amount;
}

/** A journal entry: stock adjustments (QuickBooks' InventoryAdjustment is US-only) and a trip's cash difference. */
export interface AccountingJournalEntry {
  docNumber: string;
  txnDate: Day;
  currency: string;
  description: string;
  /** Debits and credits balance: the sum of debits equals the sum of credits. */
  lines: { account: string; side: 'debit' | 'credit'; amount: Amount; description: string }[];
}

export interface AccountingConnector {
  postInvoice(requestId: string, invoice: AccountingInvoice): Promise<ConnectorResult<AccountingRef>>;
  postPayment(requestId: string, payment: AccountingPayment): Promise<ConnectorResult<AccountingRef>>;
  postCreditMemo(requestId: string, memo: AccountingCreditMemo): Promise<ConnectorResult<AccountingRef>>;
  postRefund(requestId: string, refund: AccountingRefund): Promise<ConnectorResult<AccountingRef>>;
  postBill(requestId: string, bill: AccountingBill): Promise<ConnectorResult<AccountingRef>>;
  postJournalEntry(requestId: string, entry: AccountingJournalEntry): Promise<ConnectorResult<AccountingRef>>;
  /** Voids (Invoice, Payment) or deletes (CreditMemo, RefundReceipt, Bill, JournalEntry: QuickBooks cannot void them). */
  reverse(requestId: string, ref: AccountingRef): Promise<ConnectorResult<void>>;
  /**
   * Whether the system holds the document so that it would refuse to void it (deposited, reconciled, in closed books):
   * a reversal in the service is then refused, naming what to void there by hand. Voided or deleted: not held.
   */
  holds(ref: AccountingRef): Promise<ConnectorResult<boolean>>;
  /** What the system holds under a ref, as its people would read it there; null when it holds nothing (deleted, or never made). */
  read(ref: AccountingRef): Promise<ConnectorResult<AccountingHeld | null>>;
}

/** A document as the accounting system holds it (the operator console shows it beside the service's posting). */
export interface AccountingHeld {
  type: AccountingType;
  id: string;
  /** Its number there (DocNumber; a payment's PaymentRefNum), null when it has none. */
  docNumber: string | null;
  txnDate: string | null;
  /** Its total there, as a decimal string (0 once voided). */
  total: Amount;
  currency: string | null;
  /** What is still open on it (invoices), null when the system keeps no balance for the type. */
  balance: Amount | null;
  /** `voided` (kept with its amounts zeroed), `deposited` (a payment in a bank deposit), else `active`. */
  state: 'active' | 'voided' | 'deposited';
}

// ---------------------------------------------------------------- fiscal

/** What the fiscal system gives a fiscalised document. */
export interface FiscalReceipt {
  /** The fiscal document number (EFRIS invoiceNo). */
  fdn: string;
  /** EFRIS antifakeCode. */
  verificationCode: string;
  qrCode: string;
  /** EFRIS's internal id of the document (basicInformation.invoiceId), needed to credit it later. */
  fiscalId: string;
  fiscalisedAt: string;
}

/** The payment modes the fiscal system records (EFRIS payWay); a method it cannot record is refused before submission. */
export type FiscalPaymentMode = 'credit' | 'cash' | 'cheque' | 'mobile_money' | 'card' | 'bank_transfer';

export interface FiscalLine {
  itemCode: string;
  itemName: string;
  quantity: Amount;
  unitPrice: Amount;
  /** Line total including tax, after its discount. */
  total: Amount;
  tax: Amount;
  /** '0.18', '0', or '-' for exempt. */
  taxRate: string;
}

export interface FiscalInvoice {
  /** The service's document number: EFRIS's seller referenceNo, unique (2253 on a repeat). */
  referenceNo: string;
  issuedAt: string;
  currency: string;
  buyer: { name: string; tin: string | null };
  lines: FiscalLine[];
  netAmount: Amount;
  taxAmount: Amount;
  grossAmount: Amount;
  payments: { mode: FiscalPaymentMode; amount: Amount }[];
}

export interface FiscalCreditNote {
  referenceNo: string;
  /** The fiscalised invoice it credits. */
  original: { fiscalId: string; fdn: string };
  /** EFRIS reasonCode: 101 return, 102 cancellation of purchase, 103 wrong amount, 104 waive off, 105 other. */
  reasonCode: '101' | '102' | '103' | '104' | '105';
  reason: string;
  currency: string;
  /** Positive figures; the client writes them negative as EFRIS wants. Each mirrors one line of the original. */
  lines: FiscalLine[];
  netAmount: Amount;
  taxAmount: Amount;
  grossAmount: Amount;
}

/** A credit note application's state in the fiscal system (EFRIS T111 approveStatus). */
export type FiscalApplication =
  | { status: 'submitted'; applicationId: string }
  | { status: 'approved'; applicationId: string; receipt: FiscalReceipt }
  | { status: 'rejected'; applicationId: string; reason: string }
  | { status: 'cancelled'; applicationId: string };

export interface FiscalConnector {
  submitInvoice(invoice: FiscalInvoice): Promise<ConnectorResult<FiscalReceipt>>;
  /** Applies for a credit note (T110); it is approved later, read with queryCreditNote. */
  submitCreditNote(note: FiscalCreditNote): Promise<ConnectorResult<FiscalApplication>>;
  queryCreditNote(referenceNo: string): Promise<ConnectorResult<FiscalApplication>>;
  /** Withdraws an application still waiting for approval. */
  cancelCreditNote(applicationId: string): Promise<ConnectorResult<void>>;
  /** The fiscalised document with this FDN as the fiscal system holds it (EFRIS T108); null when it holds none. */
  readReceipt(fdn: string): Promise<ConnectorResult<FiscalReceipt | null>>;
}
