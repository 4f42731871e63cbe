// Walks a list page by page (spec: "Pagination and change feed rules"). The cursor is opaque and only moves
// forward; a page may hold fewer than `limit` records, even none, while `hasMore` is true (filters run per page,
// and a page can stop early within a read budget), so only `hasMore` ends the walk.
import type { ErpClient, ErpPaths } from './typed-paths.js';

type ListBody<Path> = Path extends keyof ErpPaths
  ? ErpPaths[Path] extends { get: { responses: { 200: { content: { 'application/json': infer Body } } } } }
    ? Body
    : never
  : never;

/** Paths whose GET answers with a page (`{ data, nextCursor, hasMore }`). */
export type PagePath = {
  [Path in keyof ErpPaths]: ListBody<Path> extends {
    data?: readonly unknown[];
    nextCursor: string | null;
    hasMore: boolean;
  }
    ? Path
    : never;
}[keyof ErpPaths];

/** The type of one record of a list. */
export type PageItem<Path extends PagePath> =
  ListBody<Path> extends { data?: infer Data }
    ? NonNullable<Data> extends readonly unknown[]
      ? NonNullable<Data>[number]
      : never
    : never;

type ListParameters<Path extends PagePath> = ErpPaths[Path] extends { get: { parameters: { query?: infer Query } } }
  ? NonNullable<Query>
  : never;

/** The list's query parameters except the cursor, which the walk supplies. */
export type ListQuery<Path extends PagePath> = Omit<ListParameters<Path>, 'cursor'>;

/** The list's path parameters (`{ system: string }` for `/dms/{system}/flags`); never for a list without any. */
export type ListPathParameters<Path extends PagePath> = ErpPaths[Path] extends {
  get: { parameters: { path?: infer Parameters } };
}
  ? NonNullable<Parameters>
  : never;

interface PaginateCommon {
  /** Extra headers for every page request (for example X-Request-Id). */
  headers?: Record<string, string>;
  /** Stops the walk between pages (and aborts a request in flight). */
  signal?: AbortSignal;
}

/**
 * How to walk a list: `params` as openapi-fetch takes them (`{ path: { system: 'canonical' }, query: { limit: 100 } }`),
 * `params.path` required exactly when the list's path has parameters. `query` alone is the older shorthand for
 * `params.query`, kept for lists without path parameters.
 */
export type PaginateOptions<Path extends PagePath> = PaginateCommon &
  ([ListPathParameters<Path>] extends [never]
    ? { params?: { query?: ListQuery<Path> }; query?: ListQuery<Path> }
    : { params: { path: ListPathParameters<Path>; query?: ListQuery<Path> }; query?: ListQuery<Path> });

/** The options argument: optional for a list without path parameters, required (for `params.path`) otherwise. */
export type PaginateArguments<Path extends PagePath> = [ListPathParameters<Path>] extends [never]
  ? [options?: PaginateOptions<Path>]
  : [options: PaginateOptions<Path>];

export interface Page<Item> {
  data: Item[];
  nextCursor: string | null;
  hasMore: boolean;
}

/** Every page of a list, in order, from the first to the one with `hasMore: false`. */
export async function* paginatePages<Path extends PagePath>(
  erp: ErpClient,
  path: Path,
  ...[options]: PaginateArguments<Path>
): AsyncGenerator<Page<PageItem<Path>>, void, undefined> {
  // The generic path cannot be checked against openapi-fetch's per-path overloads; the result is typed above.
  const get = erp.GET as unknown as (
    url: string,
    init: Record<string, unknown>,
  ) => Promise<{ data: Page<PageItem<Path>> }>;
  const { pathParameters, query: filters } = requestParameters(path, options);
  let cursor: string | undefined;
  // The cursor only moves forward: one seen before would walk the same pages again, for ever.
  const seen = new Set<string>();
  for (;;) {
    options?.signal?.throwIfAborted();
    const query = { ...filters, ...(cursor === undefined ? {} : { cursor }) };
    const params = pathParameters === undefined ? { query } : { path: pathParameters, query };
    const { data: page } = await get(path, { params, headers: options?.headers, signal: options?.signal });
    yield { data: page.data ?? [], nextCursor: page.nextCursor, hasMore: page.hasMore };
    if (!page.hasMore) return;
    // Stopping here would quietly drop the rest of the list.
    if (!page.nextCursor)
      throw new Error(
        `Inconsistent page from GET ${path}: hasMore is true but nextCursor is ${JSON.stringify(page.nextCursor)}, so the rest of the list cannot be read.`,
      );
    if (cursor !== undefined) seen.add(cursor);
    if (seen.has(page.nextCursor))
      throw new Error(
        `Inconsistent page from GET ${path}: nextCursor ${JSON.stringify(page.nextCursor)} is a cursor already followed, so the walk would never end.`,
      );
    cursor = page.nextCursor;
  }
}

/** Every record of a list, each once, across all pages. */
export async function* paginate<Path extends PagePath>(
  erp: ErpClient,
  path: Path,
  ...options: PaginateArguments<Path>
): AsyncGenerator<PageItem<Path>, void, undefined> {
  for await (const page of paginatePages(erp, path, ...options)) yield* page.data;
}

/**
 * The path parameters and filters of a walk, checked before the first request: a template parameter without a
 * value would otherwise go out as the literal `{system}` and come back as a 400 about the path, far from the call
 * that left it out (JavaScript callers, and casts, get past the types).
 */
function requestParameters(
  path: string,
  options: { params?: { path?: unknown; query?: unknown }; query?: unknown } | undefined,
): { pathParameters?: Record<string, unknown>; query: Record<string, unknown> } {
  if (options?.query !== undefined && options.params?.query !== undefined) {
    throw new TypeError(`paginate ${path}: give the filters once, as params.query (or the shorthand query), not both.`);
  }
  const pathParameters = options?.params?.path as Record<string, unknown> | undefined;
  for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
    const value = pathParameters?.[name!];
    if (value === undefined || value === null || value === '')
      throw new TypeError(`paginate ${path}: params.path.${name} is required.`);
  }
  return {
    pathParameters,
    query: { ...((options?.params?.query ?? options?.query) as Record<string, unknown> | undefined) },
  };
}
