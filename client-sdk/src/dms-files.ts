// Uploading a DMS XML file (POST /dms/{system}/files). The body is the file's own bytes as application/xml: sent
// through openapi-fetch's default serializer it would go out as a JSON string (quoted, with escaped newlines), and
// the batch would fail "Text data outside of root node". The client's body serializer (client.ts) passes a string
// or bytes through as they are when the Content-Type is not JSON; this helper sets that Content-Type, takes a
// Buffer or Uint8Array too (the spec types the body as a string only) and names the Idempotency-Key.
import type { components } from './generated/api-types.js';
import type { ErpClient } from './typed-paths.js';

export type DmsFileBatch = components['schemas']['DmsFileBatch'];

export interface UploadDmsFileOptions {
  /** The upload's Idempotency-Key (for example your file's name or id): a re-run then replays the first answer. Default: one the client makes, the same on every retry. */
  idempotencyKey?: string;
  /** Extra headers (for example X-Request-Id). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/**
 * Uploads an XML file to the DMS connection `system` (`canonical`). Resolves with the batch as registered (202, the
 * worker parses it next; or 200 with the earlier batch when the same bytes came before) and the response; read
 * `GET /dms/{system}/files/{batchId}` for its progress.
 */
export async function uploadDmsFile(
  erp: ErpClient,
  system: string,
  xml: string | Uint8Array,
  options: UploadDmsFileOptions = {},
): Promise<{ data: DmsFileBatch; response: Response }> {
  if (typeof xml !== 'string' && !(xml instanceof Uint8Array))
    throw new TypeError('uploadDmsFile takes the XML file as a string, a Buffer or a Uint8Array.');
  const headers: Record<string, string> = { ...options.headers, 'Content-Type': 'application/xml' };
  if (options.idempotencyKey !== undefined) headers['Idempotency-Key'] = options.idempotencyKey;
  // The spec types the body as a string; bytes are sent the same way (the serializer passes both through).
  const post = erp.POST as unknown as (
    url: string,
    init: Record<string, unknown>,
  ) => Promise<{ data: DmsFileBatch; response: Response }>;
  return post('/dms/{system}/files', { params: { path: { system } }, body: xml, headers, signal: options.signal });
}
