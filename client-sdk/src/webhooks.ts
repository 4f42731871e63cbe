// Verifies a webhook delivery (spec: Events > Signature): header `t=<unix seconds>,v1=<hex>[,v1=<hex>]`, each v1
// the lowercase hex HMAC-SHA256 of `<t>.<raw body>` keyed with the endpoint's secret (the whole `whsec_...` text).
// Any v1 may match any secret the receiver holds (during a rotation the service signs with both), compared in
// constant time; a t more than the tolerance away from the receiver's clock is refused, so a captured delivery
// cannot be replayed later.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookEvent } from './webhook-event.js';

export const SIGNATURE_HEADER = 'Service-Signature';
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type WebhookVerificationFailure =
  | 'missing_header'
  | 'malformed_header'
  | 'timestamp_out_of_tolerance'
  | 'no_matching_signature'
  | 'malformed_payload';

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
  readonly reason: WebhookVerificationFailure;

  constructor(reason: WebhookVerificationFailure, message: string) {
    super(message);
    this.reason = reason;
  }
}

export interface VerifyWebhookOptions {
  /** Largest accepted distance between the header's t and now, in seconds. Default 300 (the spec's 5 minutes). */
  toleranceSeconds?: number;
  /** The receiver's clock (for tests). */
  now?: Date;
}

const SIGNATURE_HEX = /^[0-9a-f]{64}$/;

/**
 * Checks the Service-Signature of a delivery and returns the parsed event; throws WebhookVerificationError.
 * `rawBody` must be the body exactly as received (not JSON parsed and serialised again).
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  signatureHeader: string | null | undefined,
  secrets: string | readonly string[],
  options: VerifyWebhookOptions = {},
): WebhookEvent {
  const keys = signingSecrets(secrets);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  // NaN compares false and Infinity never exceeds: either would turn the replay check off without a word.
  if (!Number.isFinite(tolerance) || tolerance < 0)
    throw new TypeError(`toleranceSeconds must be a finite number >= 0 (got ${tolerance}).`);
  const nowSeconds = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Number.isNaN(nowSeconds)) throw new TypeError('now must be a valid Date.');
  if (!signatureHeader?.trim())
    throw new WebhookVerificationError('missing_header', `The ${SIGNATURE_HEADER} header is missing.`);

  const { timestamp, signatures } = parseHeader(signatureHeader);
  const matched = keys.some((secret) => {
    // update() takes the string body as UTF-8 and bytes as they are.
    const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest();
    return signatures.some((signature) => timingSafeEqual(signature, expected));
  });
  if (!matched)
    throw new WebhookVerificationError(
      'no_matching_signature',
      'No signature matches the body with the given secret(s).',
    );

  if (Math.abs(nowSeconds - timestamp) > tolerance) {
    throw new WebhookVerificationError(
      'timestamp_out_of_tolerance',
      `The signature's time (t=${timestamp}) is more than ${tolerance} s from now (${nowSeconds}).`,
    );
  }
  return parseEvent(typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody));
}

/**
 * The secrets to try, every one of them a real secret. An empty or blank one is refused, not skipped: anyone can
 * compute an HMAC keyed with '', so a verifier holding one accepts forged events, and it is what a missing
 * environment variable gives (`process.env.WHSEC ?? ''`, or `[newSecret, oldSecret]` with one unset). A TypeError,
 * not a WebhookVerificationError, so that a receiver's "answer 400 to a bad delivery" cannot hide it.
 */
function signingSecrets(secrets: unknown): string[] {
  const keys: unknown[] =
    typeof secrets === 'string' ? [secrets] : Array.isArray(secrets) ? [...(secrets as unknown[])] : [];
  if (keys.length === 0) throw new TypeError('verifyWebhook needs at least one signing secret (whsec_...).');
  keys.forEach((secret, index) => {
    if (typeof secret !== 'string' || secret.trim() === '') {
      const what = typeof secret === 'string' ? 'empty or blank' : `${String(secret)}, not a string`;
      throw new TypeError(
        `verifyWebhook's signing secret [${index}] is ${what}: is its environment variable set? A signature keyed with an empty secret proves nothing.`,
      );
    }
  });
  return keys as string[];
}

function parseHeader(header: string): { timestamp: number; signatures: Buffer[] } {
  const timestamps: string[] = [];
  const signatures: Buffer[] = [];
  for (const part of header.split(',')) {
    const separator = part.indexOf('=');
    if (separator < 0) continue;
    const key = part.slice(0, separator).trim();
    const value = part.slice(separator + 1).trim();
    if (key === 't') timestamps.push(value);
    // A v1 that is not 32 bytes of lowercase hex can never match; other schemes (v0, a later v2) are ignored.
    if (key === 'v1' && SIGNATURE_HEX.test(value)) signatures.push(Buffer.from(value, 'hex'));
  }
  const [timestamp = ''] = timestamps;
  if (timestamps.length !== 1 || !/^\d{1,12}$/.test(timestamp)) {
    throw new WebhookVerificationError(
      'malformed_header',
      `The ${SIGNATURE_HEADER} header needs exactly one t=<unix seconds>.`,
    );
  }
  if (signatures.length === 0)
    throw new WebhookVerificationError(
      'malformed_header',
      `The ${SIGNATURE_HEADER} header has no v1=<64 hex digits> signature.`,
    );
  return { timestamp: Number(timestamp), signatures };
}

function parseEvent(text: string): WebhookEvent {
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch {
    throw new WebhookVerificationError('malformed_payload', 'The body is not JSON.');
  }
  const envelope = event as Record<string, unknown> | null;
  const data = envelope?.data as Record<string, unknown> | null | undefined;
  const valid =
    typeof envelope === 'object' &&
    envelope !== null &&
    typeof envelope.id === 'string' &&
    envelope.id.startsWith('evt_') &&
    ['type', 'createdAt', 'apiVersion', 'organizationId'].every((field) => typeof envelope[field] === 'string') &&
    typeof data === 'object' &&
    data !== null &&
    typeof data.object === 'object' &&
    data.object !== null;
  if (!valid)
    throw new WebhookVerificationError(
      'malformed_payload',
      'The body is not an event envelope (id evt_..., type, createdAt, apiVersion, organizationId, data.object).',
    );
  return event as WebhookEvent;
}
