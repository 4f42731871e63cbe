// Raw HTTP for the fuzz pass: node:http, so that a request can carry any bytes (invalid UTF-8, a body not in
// its Content-Encoding, an empty body with a JSON content type) and any header, which fetch would refuse or fix.
import http from 'node:http';

export interface WireRequest {
  method: string;
  /** Path and query as sent, relative to the API root (`/customers?limit=%205`), already percent-encoded. */
  target: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export interface WireResponse {
  status: number;
  headers: Headers;
  bodyText: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

export function send(apiRoot: URL, request: WireRequest, timeoutMs = 15_000): Promise<WireResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: apiRoot.hostname,
        port: apiRoot.port,
        method: request.method,
        path: apiRoot.pathname + request.target,
        // Node adds Content-Length for a Buffer body; without a body it sends none.
        headers: { ...request.headers, ...(request.body ? { 'Content-Length': String(request.body.length) } : {}) },
        agent,
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value === undefined) continue;
            headers.set(name, Array.isArray(value) ? value.join(', ') : value);
          }
          resolve({ status: res.statusCode ?? 0, headers, bodyText: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(request.body);
  });
}

export function closeConnections(): void {
  agent.destroy();
}

/** The request as a shell command that sends the very same bytes (the key shown as $KEY). */
export function asCurl(apiRoot: URL, request: WireRequest, secrets: Record<string, string>, bodyFile?: string): string {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const hide = (s: string) =>
    Object.entries(secrets).reduce((text, [name, secret]) => text.split(secret).join(`$${name}`), s);
  const headers = Object.entries(request.headers).map(([name, value]) => `-H ${hide(quote(`${name}: ${value}`))}`);
  const url = quote(`${apiRoot.origin}${apiRoot.pathname}${request.target}`);
  const base = `curl -sS -i --path-as-is -X ${request.method} ${url} ${headers.join(' ')}`;
  if (!request.body) return base;
  if (bodyFile) return `${base} --data-binary @${quote(bodyFile)}`;
  return `printf %s ${quote(request.body.toString('base64'))} | base64 -d | ${base} --data-binary @-`;
}

/** The request for the failure message: method, target, headers and, when short, the body as base64 and as text. */
export function describe(request: WireRequest, secrets: Record<string, string>): string {
  const hide = (s: string) =>
    Object.entries(secrets).reduce((text, [name, secret]) => text.split(secret).join(`$${name}`), s);
  const body = request.body;
  return hide(
    JSON.stringify(
      {
        method: request.method,
        target: request.target,
        headers: request.headers,
        bodyBase64: body && body.length <= 4_096 ? body.toString('base64') : undefined,
        bodyText: body && body.length <= 2_000 ? body.toString('utf8') : body ? `(${body.length} bytes)` : undefined,
      },
      null,
      2,
    ),
  );
}
