// A posting function's refusal as a DMS document's outcome, in one table (docs/decisions/0038-refusal-codes-to-reason-codes.md).
// The posting functions refuse with an ApiError: a code of the API's error catalogue, and where that code covers
// cases that end differently, a refusal reason (invalid_state: posting_under_way / held_by_accounting /
// fiscal_submitted). The DMS decides on those codes alone, never on the detail's words: each row says whether the
// document waits (tried again; R08 with the same text once its 48 hours are over) or is rejected, with which reason
// code, and how the flag's text reads. The table is total over the catalogue (a Record), so a new code does not
// compile until someone decides here what the DMS does with it.
import type { FieldError } from '../../platform/errors/api-error.js';
import { ApiError } from '../../platform/errors/api-error.js';
import type { ErrorCode, RefusalReason } from '../../platform/errors/catalogue.js';
import { DmsRejection, DmsWait, waitKeys, type ReasonCode } from './reasons.js';

export type RefusalCode = ErrorCode | RefusalReason;

/**
 * What the DMS does with a refusal:
 * - `wait`: it clears by itself (stock arrives on the location, a posting ends); R08 after the retry window;
 * - `reject`: the flag becomes rejected with `reasonCode`.
 * `text` says how the flag's text reads: `detail` (the service's words and the fields'), `in_the_service` (R06: said
 * to be the service's period, not the accounting system's), `stock` (what is short where).
 */
export interface RefusalRow {
  outcome: 'wait' | 'reject';
  reasonCode: ReasonCode;
  text: 'detail' | 'in_the_service' | 'stock';
  /**
   * What wakes a waiting document at once (besides its growing retry intervals): stock arriving on the location the
   * caller names, or the posting of the document the refusal is about (ApiError.subject) settling.
   */
  wakesOn?: 'stock' | 'posting';
}

const wait = (text: RefusalRow['text'], wakesOn: RefusalRow['wakesOn']): RefusalRow => ({
  outcome: 'wait',
  reasonCode: 'R08',
  text,
  wakesOn,
});
const reject = (reasonCode: ReasonCode, text: RefusalRow['text'] = 'detail'): RefusalRow => ({
  outcome: 'reject',
  reasonCode,
  text,
});

/** Every refusal code the service knows, and what the DMS does with it. */
export const REFUSAL_TABLE: Record<RefusalCode, RefusalRow> = {
  // Clears by itself: the document waits.
  insufficient_stock: wait('stock', 'stock'),
  posting_under_way: wait('detail', 'posting'),
  // The service's books are closed through the document's date (R06 says which system's).
  period_closed: reject('R06', 'in_the_service'),
  // Never clears by itself: the spec's R09 ("Other"), with the service's words.
  held_by_accounting: reject('R09'),
  fiscal_submitted: reject('R09'),
  not_fiscalisable: reject('R09'),
  invalid_state: reject('R09'),
  business_rule: reject('R09'),
  credit_limit_exceeded: reject('R09'),
  currency_not_supported: reject('R09'),
  currency_mismatch: reject('R09'),
  over_allocation: reject('R09'),
  unallocated_amount: reject('R09'),
  no_open_trip: reject('R09'),
  field_sales_disabled: reject('R09'),
  // A reference the handler resolved by its DMS code and the function did not find (a race with a delete): R09, not
  // R08 (the handlers wait for codes not yet received themselves, before they call the function).
  customer_not_found: reject('R09'),
  invoice_not_found: reject('R09'),
  product_not_found: reject('R09'),
  not_found: reject('R09'),
  // A command the handler built that the function finds malformed: a mapping's defect, said in the service's words.
  invalid_field: reject('R09'),
  required_field: reject('R09'),
  unknown_field: reject('R09'),
  // HTTP's own refusals: no posting function gives them; were one to, it would not clear by itself.
  key_in_query: reject('R09'),
  idempotency_key_required: reject('R09'),
  invalid_json: reject('R09'),
  unauthorized: reject('R09'),
  wrong_environment: reject('R09'),
  api_disabled: reject('R09'),
  insufficient_scope: reject('R09'),
  ip_not_allowed: reject('R09'),
  module_disabled: reject('R09'),
  invalid_signature: reject('R09'),
  url_expired: reject('R09'),
  idempotency_in_progress: reject('R09'),
  payload_too_large: reject('R09'),
  unsupported_media_type: reject('R09'),
  idempotency_key_reused: reject('R09'),
  rate_limited: reject('R09'),
  server_error: reject('R09'),
};

/** The row of a refusal: its reason's when it has one, else its code's. */
export function refusalRow(error: ApiError): RefusalRow {
  return REFUSAL_TABLE[error.reason ?? error.code];
}

const fieldsOf = (errors: readonly FieldError[] | undefined, withField: boolean) =>
  (errors ?? []).map((e) => (withField ? `${e.field}: ${e.message}` : e.message)).join('; ');

/**
 * A posting function's refusal as the DMS document's outcome. `stockAt` names the location whose stock a `stock`
 * wait waits for (the van of a sale), so that a replenishment of it wakes the document at once.
 */
export function refusalOutcome(error: ApiError, stockAt?: string): DmsWait | DmsRejection {
  const row = refusalRow(error);
  const text = textOf(error, row, stockAt);
  if (row.outcome === 'wait') return new DmsWait(text, wakeKey(error, row, stockAt));
  return new DmsRejection(row.reasonCode, text);
}

function wakeKey(error: ApiError, row: RefusalRow, stockAt: string | undefined): string | null {
  if (row.wakesOn === 'stock' && stockAt) return waitKeys.stock(stockAt);
  if (row.wakesOn === 'posting' && error.subject) return waitKeys.posting(error.subject.type, error.subject.id);
  return null;
}

function textOf(error: ApiError, row: RefusalRow, stockAt: string | undefined): string {
  switch (row.text) {
    case 'stock': {
      const short = fieldsOf(error.errors, false);
      return `Stock not yet on ${stockAt ? `the van ${stockAt}` : 'the location'}: ${error.detail}${short ? ` (${short})` : ''}`;
    }
    case 'in_the_service':
      return `In the service: ${error.detail}`;
    case 'detail': {
      const fields = fieldsOf(error.errors, true);
      return `${error.detail}${fields && !error.detail.includes(fields) ? ` (${fields})` : ''}`;
    }
  }
}

/** Any error a handler or a posting function threw, as an outcome: null for one that is no refusal (a bug). */
export function asOutcome(error: unknown): DmsWait | DmsRejection | null {
  if (error instanceof DmsWait || error instanceof DmsRejection) return error;
  return error instanceof ApiError ? refusalOutcome(error) : null;
}
