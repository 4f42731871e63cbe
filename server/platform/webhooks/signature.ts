// The Service-Signature header: `t=<unix seconds>,v1=<hex>[,v1=<hex>]`, each v1 the lowercase hex HMAC-SHA256 of
// `<t>.<raw body>` keyed with one signing secret (the whole `whsec_...` text, as UTF-8). During a secret rotation
// both the new and the old secret sign, so a receiver holding either accepts the delivery (Stripe's scheme).
import { createHmac } from 'node:crypto';

export const SIGNATURE_HEADER = 'Service-Signature';

export function signatureOf(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');
}

/** The header value for a body signed at `timestamp` (Unix seconds) with every secret given, newest first. */
export function signatureHeader(secrets: readonly string[], timestamp: number, body: string): string {
  return [`t=${timestamp}`, ...secrets.map((secret) => `v1=${signatureOf(secret, timestamp, body)}`)].join(',');
}
