// Photos of competitor observations: what is accepted (PNG or JPEG by their magic bytes, at most 2 MB), and the
// short-lived signed URL they are read by (docs/decisions/0015-signed-photo-urls.md). The URL names the
// organisation, the photo and its expiry; the signature is an HMAC of exactly those with a key derived from the
// cursor secret, so it works on every process of a deployment and on no other deployment.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../../platform/errors/api-error.js';
import { API_BASE_PATH } from '../../platform/spec.js';

export const MAX_PHOTO_BYTES = 2 * 1024 * 1024;
/** How long a photo URL works after the response that carried it. */
export const PHOTO_URL_SECONDS = 5 * 60;

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff]);

export interface AcceptedPhoto {
  contentType: 'image/png' | 'image/jpeg';
  bytes: Buffer;
  sha256: string;
}

/** The photo's type by its first bytes (never by a name or a declared type); anything else is refused naming `field`. */
export function acceptPhoto(bytes: Buffer, field = '/photo'): AcceptedPhoto {
  if (bytes.length > MAX_PHOTO_BYTES) {
    throw new ApiError(
      'payload_too_large',
      `The photo has ${bytes.length} bytes; at most ${MAX_PHOTO_BYTES} (2 MB) are accepted.`,
      [{ field, code: 'payload_too_large', message: `must be at most ${MAX_PHOTO_BYTES} bytes` }],
    );
  }
  const contentType = bytes.subarray(0, PNG.length).equals(PNG)
    ? 'image/png'
    : bytes.subarray(0, JPEG.length).equals(JPEG)
      ? 'image/jpeg'
      : null;
  if (contentType === null) {
    throw new ApiError('unsupported_media_type', 'The photo is neither a PNG nor a JPEG (judged by its first bytes).', [
      { field, code: 'unsupported_media_type', message: 'must be a PNG or a JPEG image' },
    ]);
  }
  return { contentType, bytes, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** Signs and checks photo URLs with a key derived from the deployment's cursor secret (one secret to keep). */
export interface PhotoUrlSigner {
  /** The absolute URL of a photo under `origin` (`https://host`), valid until now + PHOTO_URL_SECONDS. */
  url(origin: string, organizationId: string, photoId: string, now?: Date): string;
  /** Refuses an edited URL (403 invalid_signature) and then an expired one (403 url_expired). */
  check(organizationId: string, photoId: string, expires: number, signature: string, now?: Date): void;
}

export function photoUrlSigner(cursorSecret: string): PhotoUrlSigner {
  // A key of its own: a cursor's signature can never pass for a photo URL's, nor the other way round.
  const key = createHmac('sha256', cursorSecret).update('photo-url/v1').digest();
  const sign = (organizationId: string, photoId: string, expires: number) =>
    createHmac('sha256', key).update(`${organizationId}\n${photoId}\n${expires}`).digest('base64url');
  return {
    url(origin, organizationId, photoId, now = new Date()) {
      const expires = Math.floor(now.getTime() / 1000) + PHOTO_URL_SECONDS;
      const query = new URLSearchParams({
        organizationId,
        expires: String(expires),
        signature: sign(organizationId, photoId, expires),
      });
      return `${origin}${API_BASE_PATH}/photos/${encodeURIComponent(photoId)}?${query.toString()}`;
    },
    check(organizationId, photoId, expires, signature, now = new Date()) {
      const expected = Buffer.from(sign(organizationId, photoId, expires));
      const given = Buffer.from(signature);
      if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
        throw new ApiError(
          'invalid_signature',
          'This photo URL is not one the service issued: a part of it was changed. Use photoUrl exactly as the API gave it.',
        );
      }
      if (expires * 1000 <= now.getTime()) {
        throw new ApiError(
          'url_expired',
          `This photo URL expired at ${new Date(expires * 1000).toISOString()}. Read the observation again for a fresh one, and download promptly.`,
        );
      }
    },
  };
}
