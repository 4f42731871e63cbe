// The outcomes of handling one DMS document, in the spec's words: rejected with a reason code (R01-R09, each with
// the text that says exactly what is wrong), or waiting (R08: something it depends on has not arrived; or a new
// version held for its previous version's accounting posting, which is never R08). A handler throws DmsRejection or
// DmsWait; the processor turns them into the flag.

export const REASON_CODES = ['R01', 'R02', 'R03', 'R04', 'R05', 'R06', 'R07', 'R08', 'R09'] as const;
export type ReasonCode = (typeof REASON_CODES)[number];

/** The reason codes' meanings (the spec's table), for the CLI and the docs. */
export const REASON_MEANINGS: Record<ReasonCode, string> = {
  R01: 'The document names no customer code.',
  R02: 'Reserved; never sent.',
  R03: 'Something is not set up in the service; fix the set-up, then re-process.',
  R04: 'Lines do not add up to the document total.',
  R05: 'Same document number received with different content and the same DMS status; cannot be re-processed.',
  R06: 'Accounting period closed.',
  R07: 'Document for another distributor code.',
  R08: 'Depends on something not yet received (waited 48 hours).',
  R09: 'Other (see the text).',
};

/** The document is refused: the flag becomes rejected with this code and text. */
export class DmsRejection extends Error {
  constructor(
    readonly code: ReasonCode,
    readonly text: string,
  ) {
    super(`${code}: ${text}`);
  }
}

/**
 * The document cannot post yet. `waitingFor` names what it waits for (`customer:UG0000001`, `invoice:CSR01000001`,
 * `posting:payment:pmt_…`), so that its arrival wakes the document at once; `kind` says whether the 48-hour window
 * ends in R08 (`dependency`) or the document is held for its previous version's accounting posting (`previous`).
 */
export class DmsWait extends Error {
  constructor(
    readonly note: string,
    readonly waitingFor: string | null,
    readonly kind: 'dependency' | 'previous' = 'dependency',
  ) {
    super(note);
  }
}

/** The note of a new version held for its previous version's accounting posting (the spec's exact words). */
export const PREVIOUS_POSTING_NOTE = "Waiting for the previous version's QuickBooks posting";

/**
 * The note of a document the service applied whose accounting posting is pending: it stays `received` until that
 * posting settles (`posted` with its quickbooksRef, or `rejected`), since `posted` includes the accounting posting.
 */
export const ACCOUNTING_NOTE = 'Applied in the service; waiting for its posting in the accounting system (QuickBooks).';

/** The note of a document type without a mapping (the spec's exact words). */
export const noMapperNote = (type: string) => `No mapper for ${type} yet`;

/** How long a waiting document is retried (and a held version's previous posting checked). */
export const RETRY_WINDOW_HOURS = 48;

/** Seconds until a waiting document is tried again after its n-th try (it is also woken when what it waits for arrives). */
export function retryDelaySeconds(attempts: number): number {
  const steps = [5, 30, 120, 600, 1800, 3600];
  return steps[Math.min(Math.max(attempts - 1, 0), steps.length - 1)]!;
}

export const waitKeys = {
  customer: (code: string) => `customer:${code}`,
  product: (code: string) => `product:${code}`,
  route: (code: string) => `route:${code}`,
  location: (code: string) => `location:${code}`,
  reason: (code: string) => `reason:${code}`,
  invoice: (number: string) => `invoice:${number}`,
  collection: (number: string) => `collection:${number}`,
  stock: (locationCode: string) => `stock:${locationCode}`,
  posting: (type: string, id: string) => `posting:${type}:${id}`,
  /** Any document of the connection by its number (a route settlement waits for the documents it lists). */
  document: (number: string) => `document:${number}`,
};
