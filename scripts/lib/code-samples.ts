// Request samples for the API reference: every operation of the bundled description gets `x-codeSamples` (the
// extension Scalar and Redoc show in an operation's request panel): the call with curl and with the SDK, built
// from the operation's own examples, so that they change with the spec and are never written by hand. The
// reference page hides Scalar's generic clients (server/modules/system/api-reference.ts), so these are the ones
// a reader sees. test/docs/code-samples.test.ts type-checks every SDK sample against the SDK and runs the reads.
import { resolveRef } from '../../server/platform/openapi-ref.js';

type Json = Record<string, unknown>;

export interface CodeSample {
  lang: 'Shell' | 'TypeScript';
  label: 'curl' | 'SDK';
  source: string;
}

/** What a sample sends, taken from the operation's examples. */
export interface SampleRequest {
  method: string;
  /** The path template, as the SDK takes it (`/customers/{id}`). */
  template: string;
  path: Record<string, string>;
  query: [string, unknown][];
  /** Headers besides Authorization and Content-Type (Idempotency-Key). */
  headers: [string, string][];
  body?: unknown;
  contentType?: string;
  authenticated: boolean;
  /** Whether the operation takes an Idempotency-Key (the SDK then sends one of its own). */
  write: boolean;
  /** How the 2xx answer is read: JSON, text (the HTML page and its script) or a blob (a photo). */
  parseAs: 'json' | 'text' | 'blob';
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;
/** The page size sample lists ask for: the parameter's own example when it has one. */
const PAGE_SIZE = 'limit';
const SDK_PACKAGE = '@distributor-erp/sdk';

/** Adds `x-codeSamples` to every operation of a bundled document (in place), and returns the document. */
export function addCodeSamples(document: Json): Json {
  for (const [template, item] of Object.entries((document.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (!operation) continue;
      const request = sampleRequest(document, template, method, item, operation);
      operation['x-codeSamples'] = [
        { lang: 'Shell', label: 'curl', source: curlSample(request) },
        { lang: 'TypeScript', label: 'SDK', source: sdkSample(request) },
      ] satisfies CodeSample[];
    }
  }
  return document;
}

/**
 * The request of an operation's samples: path parameters from their examples, the page size and the operation's
 * first own filter that has an example (all filters at once would rarely match anything), the Idempotency-Key
 * parameter's example, and the first example of the first request body type.
 */
export function sampleRequest(
  document: Json,
  template: string,
  method: string,
  item: Json,
  operation: Json,
): SampleRequest {
  const parameters = mergedParameters(document, item, operation);
  const path: Record<string, string> = {};
  for (const { parameter } of parameters.filter(({ parameter }) => parameter.in === 'path')) {
    path[parameter.name as string] = String(
      exampleOf(document, parameter, `${method.toUpperCase()} ${template}: path parameter ${String(parameter.name)}`),
    );
  }
  const query: [string, unknown][] = [];
  const filter = parameters.find(
    ({ shared, parameter }) => !shared && parameter.in === 'query' && hasExample(parameter),
  );
  if (filter) query.push([filter.parameter.name as string, exampleOf(document, filter.parameter, '')]);
  const limit = parameters.find(
    ({ parameter }) => parameter.in === 'query' && parameter.name === PAGE_SIZE && hasExample(parameter),
  );
  if (limit) query.push([PAGE_SIZE, exampleOf(document, limit.parameter, '')]);
  for (const { parameter } of parameters.filter(({ parameter }) => parameter.in === 'query' && parameter.required)) {
    if (!query.some(([name]) => name === parameter.name))
      query.push([
        parameter.name as string,
        exampleOf(
          document,
          parameter,
          `${method.toUpperCase()} ${template}: query parameter ${String(parameter.name)}`,
        ),
      ]);
  }
  // Idempotency-Key only where it is required (creates), with the spec's example key: a sent-again sample then
  // shows the replay. PUT and PATCH accept one too, but the same key with another path or body is 422
  // idempotency_key_reused, a trap for a reader who tries several samples with one example key.
  const headers: [string, string][] = [];
  const idempotencyKey = parameters.find(
    ({ parameter }) => parameter.in === 'header' && parameter.name === 'Idempotency-Key',
  );
  if (idempotencyKey?.parameter.required)
    headers.push([
      'Idempotency-Key',
      String(exampleOf(document, idempotencyKey.parameter, `${method.toUpperCase()} ${template}: Idempotency-Key`)),
    ]);
  const write = idempotencyKey !== undefined;

  let body: unknown;
  let contentType: string | undefined;
  const requestBody = operation.requestBody ? resolveRef(document, operation.requestBody) : undefined;
  const [firstType] = Object.entries((requestBody?.content ?? {}) as Record<string, Json>);
  if (firstType) {
    contentType = firstType[0];
    body = exampleOf(document, firstType[1], `${method.toUpperCase()} ${template}: request body`);
  }

  const security = (operation.security ?? document.security ?? []) as unknown[];
  const success = Object.entries((operation.responses ?? {}) as Record<string, unknown>).find(([status]) =>
    /^2/.test(status),
  );
  const successContent = success ? Object.keys((resolveRef(document, success[1]).content ?? {}) as Json) : [];
  const parseAs =
    successContent.length === 0 || successContent.some((type) => /json/.test(type))
      ? 'json'
      : successContent.every((type) => type.startsWith('image/'))
        ? 'blob'
        : 'text';
  return {
    method: method.toUpperCase(),
    template,
    path,
    query,
    headers,
    body,
    contentType,
    authenticated: security.length > 0,
    write,
    parseAs,
  };
}

function mergedParameters(document: Json, item: Json, operation: Json): { parameter: Json; shared: boolean }[] {
  const all = [...((item.parameters ?? []) as Json[]), ...((operation.parameters ?? []) as Json[])].map((node) => ({
    parameter: resolveRef(document, node),
    // A parameter of components (paging, external codes) is shared by many operations; the operation's own ones
    // are its filters.
    shared: typeof node.$ref === 'string',
  }));
  // An operation's parameter replaces the path item's one of the same name and location.
  return all.filter(
    ({ parameter }, index) =>
      !all
        .slice(index + 1)
        .some((later) => later.parameter.name === parameter.name && later.parameter.in === parameter.in),
  );
}

function hasExample(node: Json): boolean {
  return node.example !== undefined || Object.keys((node.examples ?? {}) as Json).length > 0;
}

function exampleOf(document: Json, node: Json, where: string): unknown {
  if (node.example !== undefined) return node.example;
  const [first] = Object.values((node.examples ?? {}) as Record<string, Json>);
  if (first) return resolveRef(document, first).value;
  throw new Error(`${where} has no example to build the request samples from; add one in spec/.`);
}

/** The request as the README's curl calls make it: `$ERP_BASE_URL` and `$ERP_API_KEY` from the environment. */
export function curlSample(request: SampleRequest): string {
  const lines = [
    `curl -sS${request.method === 'GET' ? '' : ` -X ${request.method}`} "$ERP_BASE_URL${concretePath(request)}"`,
  ];
  if (request.authenticated) lines.push(`-H "Authorization: Bearer $ERP_API_KEY"`);
  for (const [name, value] of request.headers) lines.push(`-H ${shellQuote(`${name}: ${value}`)}`);
  if (request.body !== undefined) {
    lines.push(`-H ${shellQuote(`Content-Type: ${request.contentType}`)}`);
    // A file (application/xml) is its text as it is; a JSON body its example, indented.
    lines.push(
      typeof request.body === 'string' && !/json$/.test(request.contentType ?? '')
        ? `--data-binary ${shellQuote(request.body)}`
        : `--data ${shellQuote(JSON.stringify(request.body, null, 2))}`,
    );
  }
  return lines.join(' \\\n  ');
}

/** The path with its parameters and query filled in, each value percent-encoded (nothing the shell would expand). */
function concretePath(request: SampleRequest): string {
  const path = request.template.replace(/\{([^}]+)\}/g, (_, name: string) => encode(request.path[name]!));
  const query = request.query.map(([name, value]) => `${encode(name)}=${encode(String(value))}`).join('&');
  return query ? `${path}?${query}` : path;
}

function encode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Single quotes: nothing inside is expanded; a single quote itself is closed, escaped and reopened. */
function shellQuote(text: string): string {
  return /^[A-Za-z0-9_\-.,:/=@+]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The same request with the SDK: the typed call, which adds the key, an Idempotency-Key and the retries itself. */
export function sdkSample(request: SampleRequest): string {
  const options = request.authenticated
    ? '{ baseUrl: process.env.ERP_BASE_URL!, apiKey: process.env.ERP_API_KEY }'
    : '{ baseUrl: process.env.ERP_BASE_URL! }';
  const init: [string, string][] = [];
  const params: [string, string][] = [];
  if (Object.keys(request.path).length > 0) params.push(['path', tsLiteral(request.path, 2)]);
  if (request.query.length > 0) params.push(['query', tsLiteral(Object.fromEntries(request.query), 2)]);
  if (params.length > 0) init.push(['params', `{ ${params.map(([k, v]) => `${k}: ${v}`).join(', ')} }`]);
  if (request.body !== undefined) init.push(['body', tsLiteral(request.body, 1)]);
  if (request.parseAs !== 'json') init.push(['parseAs', `'${request.parseAs}'`]);
  if (request.contentType && request.contentType !== 'application/json') {
    init.push(['headers', tsLiteral({ 'Content-Type': request.contentType }, 1)]);
  }
  const args = [tsString(request.template)];
  if (init.length > 0) args.push(`{\n${init.map(([k, v]) => `  ${k}: ${v},`).join('\n')}\n}`);
  const lines = [
    `import { createErpClient } from '${SDK_PACKAGE}';`,
    '',
    `const erp = createErpClient(${options});`,
    '',
  ];
  if (request.write) {
    lines.push(
      `// The SDK sends an Idempotency-Key of its own, the same on each retry; headers: { 'Idempotency-Key': ... } gives yours.`,
    );
  }
  // Said in the sample because openapi-fetch alone would JSON-encode the string (the issue a partner met): the SDK
  // sends text under a Content-Type other than JSON as it is.
  if (typeof request.body === 'string' && request.contentType && !/json$/.test(request.contentType)) {
    lines.push(
      `// The body is the file's own text, sent as it is (${request.contentType}); for a Buffer or Uint8Array use the SDK's uploadDmsFile(erp, system, file).`,
    );
  }
  lines.push(`const { data } = await erp.${request.method}(${args.join(', ')});`, 'console.log(data);');
  return lines.join('\n');
}

/** A TypeScript literal: single-quoted strings, bare keys where allowed, on one line when short. */
export function tsLiteral(value: unknown, depth = 0): string {
  const inline = tsInline(value);
  if (inline.length + depth * 2 <= 72 || value === null || typeof value !== 'object') return inline;
  const pad = '  '.repeat(depth + 1);
  const close = '  '.repeat(depth);
  if (Array.isArray(value))
    return `[\n${value.map((item) => `${pad}${tsLiteral(item, depth + 1)},`).join('\n')}\n${close}]`;
  return `{\n${Object.entries(value)
    .map(([k, v]) => `${pad}${tsKey(k)}: ${tsLiteral(v, depth + 1)},`)
    .join('\n')}\n${close}}`;
}

function tsInline(value: unknown): string {
  if (typeof value === 'string') return tsString(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(tsInline).join(', ')}]`;
  const entries = Object.entries(value);
  return entries.length === 0 ? '{}' : `{ ${entries.map(([k, v]) => `${tsKey(k)}: ${tsInline(v)}`).join(', ')} }`;
}

function tsKey(key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? key : tsString(key);
}

function tsString(text: string): string {
  return `'${JSON.stringify(text).slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'")}'`;
}
