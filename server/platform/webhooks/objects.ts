// What a delivery carries as data.object. The platform does not know the resources: the composition level
// (the modules' manifests, composed in server/composition/) gives a registry, one entry per event type, that reads the record as the API's
// GET returns it without personal fields. Here the special objects of the spec are made: a record deleted since
// the event becomes the deleted-record object, one over the size limit the truncated-record object.
import type { Actor } from '../access/actor.js';
import type { Db } from '../database/transaction.js';
import { operationIndex } from '../operations.js';
import { personalFieldsOf } from '../personal-fields.js';
import { API_BASE_PATH, apiDocument } from '../spec.js';

export type WebhookObject = Record<string, unknown>;

export interface WebhookObjectSource {
  /**
   * The record as the API returns it to `actor` (the delivery job, which holds no scopes: so without customers:pii
   * fields); null when it no longer exists.
   */
  read(db: Db, actor: Actor, recordId: string): Promise<WebhookObject | null>;
  /**
   * The GET path (under the API base) that reads the record in full, for the truncated-record object; `record` is the
   * record as read, for a path that names another of its ids (a trip's settlement is read by the trip's id).
   */
  fetchPath(recordId: string, record: WebhookObject): string;
}

/** Event type -> where its object comes from. Adding an event kind is one line in the registry. */
export type WebhookObjectRegistry = Readonly<Record<string, WebhookObjectSource>>;

/** The spec's limit: an object over 256 KB is sent as a truncated record. */
export const OBJECT_LIMIT_BYTES = 256 * 1024;
/** Summary strings are cut at 1 KB and end with an ellipsis. */
export const SUMMARY_STRING_BYTES = 1024;
const ELLIPSIS = '\u2026';

export async function webhookObject(
  source: WebhookObjectSource,
  db: Db,
  actor: Actor,
  recordId: string,
  now: Date,
  limitBytes = OBJECT_LIMIT_BYTES,
): Promise<WebhookObject> {
  const read = await source.read(db, actor, recordId);
  if (read === null) return deletedRecord(recordId, now);
  const record = withoutPersonalFields(read, source.fetchPath(recordId, read));
  if (Buffer.byteLength(JSON.stringify(record), 'utf8') <= limitBytes) return record;
  return truncatedRecord(
    record,
    recordId,
    source.fetchPath(recordId, record),
    `The record is over ${Math.round(limitBytes / 1024)} KB; read it in full from fetch.`,
  );
}

const operations = operationIndex(apiDocument);

/**
 * The record without the fields the spec marks `x-personal`, where the 200 response of its fetch path's GET puts
 * them (a record, or one item of a page such as the flags pull). The delivery job already reads with no scopes, so
 * the representations leave them out; this is the spec's own word on it, so a representation that forgets a personal
 * field still never sends it. An object with no GET (a DMS action) is sent as its source read it.
 */
function withoutPersonalFields(record: WebhookObject, fetchPath: string): WebhookObject {
  const path = fetchPath.split('?')[0]!;
  const operation = path.startsWith(API_BASE_PATH) ? operations.find('GET', path.slice(API_BASE_PATH.length)) : null;
  if (!operation) return record;
  const redaction = personalFieldsOf(apiDocument).response(operation, 200);
  const asPage = redaction.apply({ data: [record] }) as { data?: WebhookObject[] };
  // A page's redaction reaches the record through `data`; a record's redaction drops nothing called `data` of a page.
  return redaction.properties.has('data') && !('data' in record)
    ? asPage.data![0]!
    : (redaction.apply(record) as WebhookObject);
}

/** The deleted-record object. The service keeps no tombstones, so deletedAt is when the delivery found the record gone. */
export function deletedRecord(recordId: string, now: Date): WebhookObject {
  return { id: recordId, deleted: true, deletedAt: now.toISOString(), updatedAt: now.toISOString() };
}

export function truncatedRecord(record: WebhookObject, recordId: string, fetch: string, reason: string): WebhookObject {
  const summary: WebhookObject = {};
  let summaryTruncated = false;
  for (const [field, value] of Object.entries(record)) {
    if (typeof value === 'string') {
      const cut = cutString(value);
      if (cut !== value) summaryTruncated = true;
      summary[field] = cut;
    } else if (value === null || typeof value !== 'object') {
      summary[field] = value;
    } else if (Buffer.byteLength(JSON.stringify(value), 'utf8') <= SUMMARY_STRING_BYTES) {
      summary[field] = value; // a small nested value (money, codes) is kept whole
    } else {
      summaryTruncated = true; // a large nested value is left out of the summary
    }
  }
  const object: WebhookObject = {
    id: recordId,
    truncated: true,
    reason,
    fetch,
    summary,
    updatedAt: typeof record.updatedAt === 'string' ? record.updatedAt : null,
  };
  if (summaryTruncated) object.summaryTruncated = true;
  return object;
}

/** A string of at most 1 KB (UTF-8): longer ones keep what fits before an ellipsis, never splitting a character. */
export function cutString(value: string, maxBytes = SUMMARY_STRING_BYTES): string {
  if (Buffer.byteLength(value, 'utf8') <= maxBytes) return value;
  const room = maxBytes - Buffer.byteLength(ELLIPSIS, 'utf8');
  let bytes = 0;
  let end = 0;
  for (const char of value) {
    const size = Buffer.byteLength(char, 'utf8');
    if (bytes + size > room) break;
    bytes += size;
    end += char.length;
  }
  return value.slice(0, end) + ELLIPSIS;
}
