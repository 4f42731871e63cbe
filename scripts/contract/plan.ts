// Which requests the contract command sends, built from the document's examples, and in what order.
//
// One request per operation, or one per named request-body example when the operation has a body. Path, query
// and header parameters: the required ones, each from the parameter's example of the same name as the body
// example, else its `example`, else its first `examples` entry (optional parameters are left out, so a list is
// asked for its first page without filters). Order: first the writes that create or upsert records (POST to a
// collection, PUT by code, PUT of a whole collection such as a price list), then every read, then the writes
// to a record by id (PATCH, PUT of a record's part), then deletes. Among the first writes, the document's
// order, except that a request carrying a placeholder id of a kind another pending write returns waits for it.
import { placeholdersIn, prefixOf, idsIn } from './bind.js';
import { exampleValue, operationsOf, resolve, type Json, type Operation } from './operations.js';

export type Phase = 'create' | 'read' | 'change' | 'delete';

export interface PlannedRequest {
  method: string;
  template: string;
  /** The request-body example this request sends, when the operation names its examples. */
  exampleName?: string;
  pathParameters: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, string>;
  body?: { mediaType: string; value: unknown };
  /** Why the document does not let this request be built; it is then reported as failed, not sent. */
  unusable?: string;
  phase: Phase;
  /** Prefixes of the ids the operation's success examples return: the kinds of record it writes. */
  produces: string[];
  /** Prefixes of the placeholder ids the request carries. */
  needs: string[];
  /**
   * An operation read by a signed URL (`x-signed-url`: a photo): the list whose records link one, and the field
   * that holds it. Its examples cannot be live (no deployment made their signature); the runner sends a linked URL.
   */
  signedUrl?: { list: string; field: string };
  /**
   * `x-contract-live-records: true` on the operation: a write that may act on a record that was there before the run
   * (it changes only the caller's read state of a record only the service writes, such as a notification); sent
   * against a live one, and skipped, not failed, when the organisation has none.
   */
  liveRecords?: boolean;
  /**
   * `x-contract-dms: true` on the operation: it sends DMS documents, which the service keeps and posts for good; sent
   * only with --dms (dms.ts).
   */
  dms?: boolean;
  /** The flags the example declares its documents get (`x-expected-flags` on the example: a malformed document). */
  expectedFlags?: { state: string; reasonCode?: string }[];
}

/** Headers the command sets itself on every request. */
const OWN_HEADERS = new Set(['authorization', 'idempotency-key', 'x-request-id', 'content-type', 'accept']);
const READS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/** Whether a request with this method only reads (anything else is a write, bound only to this run's records). */
export function isRead(method: string): boolean {
  return READS.has(method);
}

export function planRequests(document: Json): PlannedRequest[] {
  const requests = operationsOf(document).flatMap((operation) => requestsOf(document, operation));
  const inPhase = (phase: Phase) => requests.filter((r) => r.phase === phase);
  return [...orderWrites(inPhase('create')), ...inPhase('read'), ...inPhase('change'), ...inPhase('delete')];
}

function requestsOf(document: Json, { method, template, operation, parameters }: Operation): PlannedRequest[] {
  const produces = producedPrefixes(document, operation);
  const bodies = bodyExamples(document, operation);
  return bodies.map(({ name, body, unusable, expectedFlags }) => {
    const request: PlannedRequest = {
      method,
      template,
      exampleName: name,
      pathParameters: {},
      query: {},
      headers: {},
      body,
      unusable,
      phase: 'read',
      produces,
      needs: [],
    };
    if (operation['x-contract-dms'] === true) request.dms = true;
    if (expectedFlags) request.expectedFlags = expectedFlags;
    const signed = operation['x-signed-url'] as { list?: unknown; field?: unknown } | undefined;
    if (typeof signed?.list === 'string' && typeof signed.field === 'string')
      request.signedUrl = { list: signed.list, field: signed.field };
    if (operation['x-contract-live-records'] === true) request.liveRecords = true;
    for (const parameter of parameters) {
      const where = String(parameter.in);
      const parameterName = String(parameter.name);
      if (where === 'header' && OWN_HEADERS.has(parameterName.toLowerCase())) continue;
      if (!parameter.required && where !== 'path') continue;
      const value = parameterValue(document, parameter, name);
      if (value === undefined) {
        request.unusable ??= `the ${where} parameter ${parameterName} has no example`;
        continue;
      }
      if (where === 'path') request.pathParameters[parameterName] = value;
      else if (where === 'query') request.query[parameterName] = value;
      else if (where === 'header') request.headers[parameterName] = String(value);
      else request.unusable ??= `the ${where} parameter ${parameterName} cannot be sent`;
    }
    request.needs = [
      ...new Set(
        placeholdersIn([request.pathParameters, request.query, request.headers, request.body?.value]).map(
          (p) => prefixOf(p)!,
        ),
      ),
    ];
    request.phase = READS.has(method)
      ? 'read'
      : method === 'DELETE'
        ? 'delete'
        : placeholdersIn(request.pathParameters).length > 0
          ? 'change'
          : 'create';
    return request;
  });
}

interface BodyExample {
  name?: string;
  body?: { mediaType: string; value: unknown };
  unusable?: string;
  expectedFlags?: { state: string; reasonCode?: string }[];
}

/** One entry per request to send: each named example, the single example, or no body. */
function bodyExamples(document: Json, operation: Json): BodyExample[] {
  if (!operation.requestBody) return [{}];
  const requestBody = resolve(document, operation.requestBody);
  const content = (requestBody.content ?? {}) as Record<string, Json>;
  const mediaType =
    Object.keys(content).find((t) => t === 'application/json') ??
    Object.keys(content).find((t) => /[/+]json$/.test(t)) ??
    Object.keys(content)[0];
  const media = mediaType ? content[mediaType]! : undefined;
  if (!mediaType || !media)
    return [requestBody.required ? { unusable: 'the request body declares no media type' } : {}];
  const named = Object.entries((media.examples ?? {}) as Record<string, unknown>);
  if (named.length > 0) {
    return named.map(([name, example]) => {
      const value = exampleValue(document, example);
      if (value === undefined)
        return { name, unusable: `the example ${name} has no value (externalValue is not fetched)` };
      const expected = resolve(document, example)['x-expected-flags'];
      return {
        name,
        body: { mediaType, value },
        ...(Array.isArray(expected) ? { expectedFlags: expected as { state: string; reasonCode?: string }[] } : {}),
      };
    });
  }
  const schema = media.schema ? resolve(document, media.schema) : {};
  const single = media.example ?? (Array.isArray(schema.examples) ? schema.examples[0] : schema.example);
  if (single !== undefined) return [{ body: { mediaType, value: single } }];
  return [requestBody.required ? { unusable: 'the request body has no example' } : {}];
}

function parameterValue(document: Json, parameter: Json, exampleName: string | undefined): unknown {
  const examples = (parameter.examples ?? {}) as Record<string, unknown>;
  if (exampleName && examples[exampleName]) return exampleValue(document, examples[exampleName]);
  if (parameter.example !== undefined) return parameter.example;
  const first = Object.values(examples)[0];
  if (first) return exampleValue(document, first);
  const schema = parameter.schema ? resolve(document, parameter.schema) : {};
  return Array.isArray(schema.examples) ? schema.examples[0] : schema.example;
}

/** The kinds of record (id prefixes) the operation's 2xx JSON examples carry. */
function producedPrefixes(document: Json, operation: Json): string[] {
  const prefixes = new Set<string>();
  for (const [status, response] of Object.entries((operation.responses ?? {}) as Record<string, unknown>)) {
    if (!status.startsWith('2')) continue;
    for (const [type, media] of Object.entries((resolve(document, response).content ?? {}) as Record<string, Json>)) {
      if (!/json$/.test(type)) continue;
      const values = [
        media.example,
        ...Object.values((media.examples ?? {}) as Record<string, unknown>).map((e) => exampleValue(document, e)),
      ];
      for (const id of values.flatMap(idsIn)) prefixes.add(id.slice(0, id.indexOf('_')));
    }
  }
  return [...prefixes];
}

/** The document's order, except that a request waits for the pending writes that return the kinds it needs. */
function orderWrites(writes: PlannedRequest[]): PlannedRequest[] {
  const pending = [...writes];
  const ordered: PlannedRequest[] = [];
  const written = new Set<string>();
  while (pending.length > 0) {
    const ready = pending.findIndex((request) =>
      request.needs.every(
        (prefix) =>
          written.has(prefix) || !pending.some((other) => other !== request && other.produces.includes(prefix)),
      ),
    );
    // A cycle the examples do not break: the document's order; a write whose record is not there yet is not sent.
    const [next] = pending.splice(ready === -1 ? 0 : ready, 1);
    ordered.push(next!);
    for (const prefix of next!.produces) written.add(prefix);
  }
  return ordered;
}
