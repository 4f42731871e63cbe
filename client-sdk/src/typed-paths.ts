// Types the client adds over the generated `paths`. The spec marks Idempotency-Key as required on creates, and
// it is, on the wire; but the client generates one when the caller gives none, so here it is optional. And a
// call resolves only on success (errors are thrown), so its result is the success member of openapi-fetch's union.
import type { Client, ClientPathsWithMethod, FetchResponse, MaybeOptionalInit, Middleware } from 'openapi-fetch';
import type { paths } from './generated/api-types.js';

export type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace';
type MediaType = `${string}/${string}`;

// biome-ignore lint/complexity/noBannedTypes: `{} extends Pick<T, K>` is the test for an optional key; `{}` is the empty object type it needs.
type RequiredKeysOf<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T];

type WithOptionalIdempotencyKey<Operation> = Operation extends { parameters: { header: infer Header } }
  ? Header extends { 'Idempotency-Key': string }
    ? Omit<Operation, 'parameters'> & {
        parameters: Omit<Operation['parameters'], 'header'> &
          HeaderParameter<Omit<Header, 'Idempotency-Key'> & { 'Idempotency-Key'?: string }>;
      }
    : Operation
  : Operation;

// A header object with no required member becomes optional itself, so `params` can be left out altogether.
type HeaderParameter<Header> = [RequiredKeysOf<Header>] extends [never] ? { header?: Header } : { header: Header };

/** The API's paths as the client takes them (Idempotency-Key optional: the client makes one). */
export type ErpPaths = {
  [Path in keyof paths]: { [Method in keyof paths[Path]]: WithOptionalIdempotencyKey<paths[Path][Method]> };
};

type InitParam<Init> = [RequiredKeysOf<Init>] extends [never]
  ? [(Init & { [key: string]: unknown })?]
  : [Init & { [key: string]: unknown }];

/** The success member of a response union: `data` is the 2xx body. */
export type Settled<Result> = Exclude<Result, { error: unknown }>;

export type ErpMethod<Method extends HttpMethod> = <
  Path extends ClientPathsWithMethod<Client<ErpPaths>, Method>,
  Init extends MaybeOptionalInit<ErpPaths[Path], Method>,
>(
  url: Path,
  ...init: InitParam<Init>
) => Promise<Settled<FetchResponse<Extract<ErpPaths[Path][Method], Record<string | number, any>>, Init, MediaType>>>;

/**
 * The client: openapi-fetch's methods, typed by the spec. Each resolves with `{ data, response }` on a 2xx answer
 * and rejects with ErpApiError (any other answer) or ErpConnectionError (no answer after the retries).
 */
export interface ErpClient {
  GET: ErpMethod<'get'>;
  PUT: ErpMethod<'put'>;
  POST: ErpMethod<'post'>;
  DELETE: ErpMethod<'delete'>;
  PATCH: ErpMethod<'patch'>;
  HEAD: ErpMethod<'head'>;
  OPTIONS: ErpMethod<'options'>;
  /** Registers openapi-fetch middleware (runs once per call, before the retries). */
  use(...middleware: Middleware[]): void;
  eject(...middleware: Middleware[]): void;
}

/** Paths that have an operation for `Method`. */
export type PathsWithMethod<Method extends HttpMethod> = ClientPathsWithMethod<Client<ErpPaths>, Method>;
