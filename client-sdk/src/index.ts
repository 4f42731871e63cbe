// The TypeScript SDK of the Distributor ERP Integration API: openapi-fetch over the types generated from the
// API description, so every path, parameter, body and response is typed end to end.
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './generated/api-types.js';

export type { components, paths };

/** Base addresses of the hosted environments (each ends in /api/v1). */
export const ENVIRONMENTS = {
  sandbox: 'https://sandbox.distributor-erp.example/api/v1',
  production: 'https://api.distributor-erp.example/api/v1',
} as const;

export type Environment = keyof typeof ENVIRONMENTS;

export interface ErpClientOptions {
  /** The API key (`..._test_...` for the sandbox, `..._live_...` for production). Not needed for /health. */
  apiKey?: string;
  /** A hosted environment; ignored when baseUrl is given. Defaults to the sandbox. */
  environment?: Environment;
  /** Any deployment's base address, ending in /api/v1 (for example http://localhost:3000/api/v1). */
  baseUrl?: string;
  /** A fetch implementation (defaults to the global one). */
  fetch?: ClientOptions['fetch'];
}

export type ErpClient = Client<paths>;

export function createErpClient(options: ErpClientOptions = {}): ErpClient {
  const baseUrl = options.baseUrl ?? ENVIRONMENTS[options.environment ?? 'sandbox'];
  const client = createClient<paths>({ baseUrl, ...(options.fetch ? { fetch: options.fetch } : {}) });
  if (options.apiKey) {
    const authorization = `Bearer ${options.apiKey}`;
    client.use({
      onRequest({ request }) {
        request.headers.set('Authorization', authorization);
        return request;
      },
    });
  }
  return client;
}
