// Every error code the API can return: its status, a fixed title and what the caller should do. The spec's
// error responses list the same codes per status; test/spec/error-catalogue.test.ts keeps the two equal.
// Served at GET /errors and GET /errors/{code}, which every problem document's `type` points at.

export interface ErrorCodeEntry {
  status: number;
  title: string;
  description: string;
}

export const ERROR_CATALOGUE = {
  invalid_field: {
    status: 400,
    title: 'Invalid field',
    description:
      'A field has the wrong type, format, enum value, length or bounds, or a cursor is not one this list issued. `errors[]` names each field; fix them and send again.',
  },
  key_in_query: {
    status: 400,
    title: 'Key in query string',
    description:
      'An API key was sent in the query string, where it leaks into logs and caches. Send it only as "Authorization: Bearer <API_KEY>", and rotate the key.',
  },
  unknown_field: {
    status: 400,
    title: 'Unknown field',
    description:
      'The request has a body property or query parameter that the operation does not declare. `errors[]` names each one; remove them (check the spelling).',
  },
  idempotency_key_required: {
    status: 400,
    title: 'Idempotency key required',
    description:
      'Every POST that creates a record needs an Idempotency-Key header (1 to 255 characters). Make one per logical operation and reuse it on every retry.',
  },
  invalid_json: {
    status: 400,
    title: 'Invalid JSON',
    description:
      'The body could not be read as JSON: it is not JSON, not UTF-8 (the detail gives the byte offset), holds an escaped lone surrogate such as "\\ud800" (the detail names the field), does not decompress under its Content-Encoding, or ends before its Content-Length. Fix the body and send it again.',
  },
  required_field: {
    status: 400,
    title: 'Required field',
    description: 'A required body property, parameter or header is missing. `errors[]` names each one.',
  },
  unauthorized: {
    status: 401,
    title: 'Unauthorized',
    description:
      'The API key is missing, mistyped, revoked or expired. Send a valid key as "Authorization: Bearer <API_KEY>".',
  },
  wrong_environment: {
    status: 401,
    title: 'Wrong environment',
    description:
      'A sandbox key (erp_test_..., or _test_ in a key issued before that form) was used on production, or a production key (erp_live_..., or _live_) on the sandbox. Use the key of this environment.',
  },
  api_disabled: {
    status: 403,
    title: 'API access disabled',
    description: 'The organisation has not enabled API access. An administrator must switch it on.',
  },
  insufficient_scope: {
    status: 403,
    title: 'Insufficient scope',
    description: 'The key lacks a scope this operation needs; the detail names it. Create a key with that scope.',
  },
  ip_not_allowed: {
    status: 403,
    title: 'IP address not allowed',
    description: "The caller's address is outside the key's IP allowlist.",
  },
  module_disabled: {
    status: 403,
    title: 'Module disabled',
    description: 'The organisation has the module this operation belongs to switched off.',
  },
  invalid_signature: {
    status: 403,
    title: 'Invalid signature',
    description:
      "A signed URL (a photo's photoUrl) was changed after it was issued, or was signed by another deployment. Use the URL exactly as the API gave it, or read the record again for a fresh one.",
  },
  url_expired: {
    status: 403,
    title: 'URL expired',
    description:
      "A signed URL (a photo's photoUrl) is past its expiry (5 minutes after it was issued). Read the record again for a fresh URL, and download promptly.",
  },
  not_found: {
    status: 404,
    title: 'Not found',
    description: "No such path or method, or no record with this id or code in the key's organisation.",
  },
  idempotency_in_progress: {
    status: 409,
    title: 'Idempotent request in progress',
    description:
      'A request with the same Idempotency-Key is still running. Retry after Retry-After seconds with the same key.',
  },
  invalid_state: {
    status: 409,
    title: 'Invalid state',
    description: "The record's current state does not allow this operation; the detail says which state it is in.",
  },
  payload_too_large: {
    status: 413,
    title: 'Payload too large',
    description: 'The body is over the limit: 1 MB for JSON, 5 MB for a DMS file.',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    description:
      'The Content-Type, its charset (only UTF-8) or the Content-Encoding (only gzip, deflate, br or identity) is not one this operation accepts; the detail lists those it does.',
  },
  business_rule: {
    status: 422,
    title: 'Business rule',
    description: 'The request is well-formed but a business rule refuses it; the detail says which.',
  },
  currency_not_supported: {
    status: 422,
    title: 'Currency not supported',
    description: "The operation accepts only the organisation's base currency here.",
  },
  customer_not_found: {
    status: 422,
    title: 'Customer not found',
    description: 'A customer the body refers to does not exist in this organisation. `errors[]` names the field.',
  },
  idempotency_key_reused: {
    status: 422,
    title: 'Idempotency key reused',
    description:
      'This Idempotency-Key was already used with another body or another path. Use a new key for a new operation.',
  },
  invoice_not_found: {
    status: 422,
    title: 'Invoice not found',
    description: 'An invoice the body refers to does not exist in this organisation. `errors[]` names the field.',
  },
  period_closed: {
    status: 422,
    title: 'Period closed',
    description: "The accounting period of the document's date is closed.",
  },
  product_not_found: {
    status: 422,
    title: 'Product not found',
    description: 'A product the body refers to does not exist in this organisation. `errors[]` names the field.',
  },
  no_open_trip: {
    status: 422,
    title: 'No open trip',
    description: "A van sale needs the salesperson's in-transit trip with that van.",
  },
  credit_limit_exceeded: {
    status: 422,
    title: 'Credit limit exceeded',
    description: "The customer's open balance plus this document would exceed the credit limit.",
  },
  insufficient_stock: {
    status: 422,
    title: 'Insufficient stock',
    description:
      'A line would take a stock level below zero; nothing of the document was posted. `errors[]` names each short line and says what the location holds at that point of the document. Post less, or move stock there first.',
  },
  field_sales_disabled: {
    status: 422,
    title: 'Field sales disabled',
    description: 'A van sale needs the field sales modules, which the organisation has switched off.',
  },
  over_allocation: {
    status: 422,
    title: 'Over-allocation',
    description:
      "A payment allocation is more than the invoice's balance, or names an invoice that is paid or void; nothing was recorded. `errors[]` names the allocation's amount and says the balance left. Allocate at most the balance, and leave the rest unallocated.",
  },
  unallocated_amount: {
    status: 422,
    title: 'Unallocated amount',
    description:
      "A payment's allocations plus its unallocated rest do not add up to its amount; nothing was recorded. `errors[]` names /unallocated and says the difference.",
  },
  currency_mismatch: {
    status: 422,
    title: 'Currency mismatch',
    description:
      'An amount, or the invoice it pays, is in another currency than the payment; a payment allocates only to invoices in its own currency. `errors[]` names the field.',
  },
  rate_limited: {
    status: 429,
    title: 'Rate limited',
    description: "The key's budget for this request class is spent. Retry after Retry-After seconds.",
  },
  server_error: {
    status: 500,
    title: 'Server error',
    description:
      'The service failed to complete the request; nothing was half-written. Retry with the same Idempotency-Key; quote the request id to support if it persists.',
  },
} as const satisfies Record<string, ErrorCodeEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/**
 * Codes that appear only as a field's own `code` in `errors[]`, each inside a problem of one code (its `problem`):
 * the finer reason a field was refused. Served at GET /errors/{code} like the problem codes, with the status of
 * the problem that carries them, so that every code a caller can meet resolves to what it means.
 */
export const FIELD_REASON_CATALOGUE = {
  duplicate_code: {
    problem: 'business_rule',
    title: 'Duplicate code',
    description:
      'In `errors[]` of a 422 business_rule: the code (an outlet code, a product code, a location, route or salesman code, or an external code of a code system) already belongs to another record of this organisation; the message names it. Use another code, or update the record that holds it.',
  },
  duplicate_visit: {
    problem: 'business_rule',
    title: 'Duplicate visit',
    description:
      'In `errors[]` of a 422 business_rule on PUT /journey-plans: two visits of the plan share a weekday and sequence, or visit the same customer on the same weekday; both fields are named. Remove or renumber one.',
  },
  duplicate_allocation: {
    problem: 'business_rule',
    title: 'Duplicate allocation',
    description:
      'In `errors[]` of a 422 business_rule on POST /payments: a second allocation to an invoice the body already allocates to. Send one allocation per invoice, with the sum.',
  },
  location_not_found: {
    problem: 'business_rule',
    title: 'Location not found',
    description:
      'In `errors[]` of a 422 business_rule: the location named by the field is not a location of this organisation. Send the id of one of its locations (GET /locations).',
  },
  route_not_found: {
    problem: 'business_rule',
    title: 'Route not found',
    description:
      'In `errors[]` of a 422 business_rule: the route named by the field is not a route of this organisation. Create it (PUT /routes/by-code/{system}/{code}) or send the id of an existing one.',
  },
  unknown_code_system: {
    problem: 'business_rule',
    title: 'Unknown code system',
    description:
      'In `errors[]` of a 422 business_rule: the code system is neither `dms` nor a partner system registered for this organisation (operator CLI: code-system add).',
  },
} as const satisfies Record<string, { problem: ErrorCode; title: string; description: string }>;

export type FieldReason = keyof typeof FIELD_REASON_CATALOGUE;

/**
 * Finer codes of a refusal whose problem code covers cases a caller must tell apart (its `problem`): a problem
 * document carries one as its `reason`. A 409 invalid_state that clears by itself (a posting under way) reads the
 * same as one that never will (the fiscal system holds the document) but for its reason, so a caller, and the DMS
 * (server/modules/dms/refusals.ts), decides on the reason, never on the detail's words. Served at GET
 * /errors/{code} like the others.
 */
export const REFUSAL_REASON_CATALOGUE = {
  posting_under_way: {
    problem: 'invalid_state',
    title: 'Posting under way',
    description:
      "The reason of a 409 invalid_state: the document's accounting posting is being sent now, and a reversal waits for it. Nothing changed. Retry when the document's posting.status is posted or failed.",
  },
  held_by_accounting: {
    problem: 'invalid_state',
    title: 'Held by the accounting system',
    description:
      "The reason of a 409 invalid_state: the accounting system holds the document's posting (deposited, reconciled or in closed books there), so the service cannot void it there. Void it in the accounting system by hand first (the detail names it), then ask again here.",
  },
  fiscal_submitted: {
    problem: 'invalid_state',
    title: 'Submitted to the fiscal system',
    description:
      'The reason of a 409 invalid_state: the document reached the fiscal system (the tax authority may hold it), so it cannot be withdrawn. Correct it with a credit note or a new invoice instead.',
  },
  not_fiscalisable: {
    problem: 'business_rule',
    title: 'Not fiscalisable',
    description:
      'The reason of a 422 business_rule: the document is to be submitted to the fiscal system, which cannot record it as it is (a sale paid by a method other than cash or mobile money; a credit note that carries only an amount, or credits a product not on exactly one line of its invoice). Nothing was posted. Fix the document as the detail says.',
  },
} as const satisfies Record<string, { problem: ErrorCode; title: string; description: string }>;

export type RefusalReason = keyof typeof REFUSAL_REASON_CATALOGUE;

export function isRefusalReason(value: string): value is RefusalReason {
  return Object.hasOwn(REFUSAL_REASON_CATALOGUE, value);
}

/** A code a caller can meet, as a problem's `code` or `reason`, or as a field's `code` in `errors[]`. */
export function catalogueEntry(code: string): ErrorCodeEntry | null {
  if (isErrorCode(code)) return ERROR_CATALOGUE[code];
  const reason = isRefusalReason(code)
    ? REFUSAL_REASON_CATALOGUE[code]
    : Object.hasOwn(FIELD_REASON_CATALOGUE, code)
      ? FIELD_REASON_CATALOGUE[code as FieldReason]
      : null;
  if (!reason) return null;
  return { status: ERROR_CATALOGUE[reason.problem].status, title: reason.title, description: reason.description };
}

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERROR_CATALOGUE, value);
}
