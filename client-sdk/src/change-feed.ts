// A change-feed poller that follows the spec's rule ("Pagination and change feed rules", 4): a write can become
// visible a few seconds after its updatedAt, so each poll starts from the checkpoint minus an overlap (5 minutes)
// and skips the records whose (id, updatedAt) it already handled. The checkpoint is the high-water updatedAt plus
// the pairs handled within the overlap window; it is saved after every page, so a crash or a failing handler
// loses nothing and repeats little.
import {
  paginatePages,
  type ListPathParameters,
  type ListQuery,
  type PagePath,
  type PageItem,
  type PaginateArguments,
} from './pagination.js';
import type { ErpClient } from './typed-paths.js';

export interface HandledChange {
  id: string;
  updatedAt: string;
}

export interface Checkpoint {
  /** The newest updatedAt handled (ISO 8601); the next poll starts this much minus the overlap. */
  updatedAt: string;
  /** Records handled with updatedAt within the overlap window before `updatedAt`, to skip when they come again. */
  handled: HandledChange[];
}

/** Where the poller keeps its checkpoint between polls (a file, a database row, ...). */
export interface CheckpointStore {
  load(): Promise<Checkpoint | undefined>;
  save(checkpoint: Checkpoint): Promise<void>;
}

/** A checkpoint kept in memory: for tests and for processes that may start again from the beginning. */
export class MemoryCheckpointStore implements CheckpointStore {
  private checkpoint: Checkpoint | undefined;

  constructor(initial?: Checkpoint) {
    this.checkpoint = initial && copy(initial);
  }

  async load(): Promise<Checkpoint | undefined> {
    return this.checkpoint && copy(this.checkpoint);
  }

  async save(checkpoint: Checkpoint): Promise<void> {
    this.checkpoint = copy(checkpoint);
  }
}

/** The names a list's feed parameter goes by: `updatedSince` on most lists, `since` on DMS flags and trip trails. */
export type FeedParameterName = 'updatedSince' | 'since';

/** The feed parameters a list takes. */
export type FeedParameter<Path extends PagePath> = Extract<keyof ListQuery<Path>, FeedParameterName>;

/** The string fields of a list's records: what can name a record in the checkpoint (`id`, or `documentId` of a DMS flag). */
export type RecordIdField<Path extends PagePath> = {
  [Field in keyof PageItem<Path>]-?: PageItem<Path>[Field] extends string ? Field : never;
}[keyof PageItem<Path>] &
  string;

/** Lists whose records carry updatedAt and a string id and that take a feed parameter: the change feeds. */
export type FeedPath = {
  [Path in PagePath]: PageItem<Path> extends { updatedAt: string }
    ? [FeedParameter<Path>] extends [never]
      ? never
      : Path
    : never;
}[PagePath];

interface ChangeFeedCommonOptions<Path extends FeedPath> {
  storage: CheckpointStore;
  /** How far before the checkpoint each poll starts. Default 300 000 (the spec's 5 minutes). */
  overlapMs?: number;
  /** Other filters of the list (and `limit`, the page size); the feed parameter and `cursor` are the poller's. */
  query?: Omit<ListQuery<Path>, FeedParameterName>;
  /** Where the first poll starts when there is no checkpoint. Default: the beginning (every record). */
  startAt?: Date | string;
}

// Each option below is required exactly where its default does not fit the list, so that a feed that would be
// asked with the wrong parameter, keyed by a field its records lack, or sent without its path does not compile.
type FeedParameterOption<Path extends FeedPath> =
  'updatedSince' extends FeedParameter<Path>
    ? { /** The list's feed parameter. Default `updatedSince`. */ feedParameter?: FeedParameter<Path> }
    : { /** The list's feed parameter (`since` for DMS flags and trip trails). */ feedParameter: FeedParameter<Path> };

type IdFieldOption<Path extends FeedPath> =
  'id' extends RecordIdField<Path>
    ? { /** The field that names a record in the checkpoint. Default `id`. */ idField?: RecordIdField<Path> }
    : {
        /** The field that names a record in the checkpoint (`documentId` for DMS flags). */ idField: RecordIdField<Path>;
      };

type PathParametersOption<Path extends FeedPath> = [ListPathParameters<Path>] extends [never]
  ? { params?: { path?: never } }
  : { /** The list's path parameters, as openapi-fetch takes them. */ params: { path: ListPathParameters<Path> } };

export type ChangeFeedOptions<Path extends FeedPath> = ChangeFeedCommonOptions<Path> &
  FeedParameterOption<Path> &
  IdFieldOption<Path> &
  PathParametersOption<Path>;

export interface ChangeFeedPoller<Item> {
  /**
   * Reads every change since the checkpoint (minus the overlap), hands each new one to `handler` in feed order
   * (oldest change first) and saves the checkpoint after each page. Resolves with how many records the handler
   * got. When the handler throws, the poll stops: what was handled before is saved, and the next poll hands the
   * failed record again. The poll then rejects with the handler's own error; should saving the checkpoint fail
   * too, that failure is attached to it as `checkpointSaveError` (and the next poll hands again what this page
   * handled since the last save). A save failure after a handler that did not throw rejects the poll itself.
   */
  poll(handler: (record: Item) => Promise<void> | void): Promise<number>;
}

export const DEFAULT_OVERLAP_MS = 5 * 60_000;

export function createChangeFeedPoller<Path extends FeedPath>(
  erp: ErpClient,
  path: Path,
  options: ChangeFeedOptions<Path>,
): ChangeFeedPoller<PageItem<Path>> {
  const overlapMs = options.overlapMs ?? DEFAULT_OVERLAP_MS;
  if (!Number.isFinite(overlapMs) || overlapMs < 0)
    throw new TypeError(`overlapMs must be a finite number >= 0 (got ${overlapMs}).`);
  const startAt = options.startAt === undefined ? new Date(0) : new Date(options.startAt);
  const feedParameter: string = (options as { feedParameter?: string }).feedParameter ?? 'updatedSince';
  const idField: string = (options as { idField?: string }).idField ?? 'id';
  const pathParameters = (options as { params?: { path?: Record<string, unknown> } }).params?.path;
  let running = false;

  return {
    async poll(handler) {
      // Two polls at once would each save a checkpoint that misses the other's records.
      if (running) throw new Error(`A poll of ${path} is already running; wait for it before polling again.`);
      running = true;
      try {
        return await pollOnce(handler);
      } finally {
        running = false;
      }
    },
  };

  async function pollOnce(handler: (record: PageItem<Path>) => Promise<void> | void): Promise<number> {
    const checkpoint = await options.storage.load();
    const since = checkpoint ? new Date(Date.parse(checkpoint.updatedAt) - overlapMs) : startAt;
    let highWater = checkpoint?.updatedAt;
    const handled = new Map((checkpoint?.handled ?? []).map((change) => [keyOf(change), change]));
    const query = { ...(options.query as Record<string, unknown> | undefined), [feedParameter]: since.toISOString() };
    // Typed by the caller's options above; here the path is generic, so the walk's own overloads cannot be matched.
    const walk = (
      paginatePages as (
        erp: ErpClient,
        path: string,
        ...options: PaginateArguments<PagePath>
      ) => ReturnType<typeof paginatePages<Path>>
    )(erp, path, {
      params: { ...(pathParameters === undefined ? {} : { path: pathParameters }), query },
    } as PaginateArguments<PagePath>[0]);
    let count = 0;
    let unsaved = false;

    const save = async () => {
      // Nothing handled since the last save (or at all: then the next poll starts where this one did).
      if (!unsaved || highWater === undefined) return;
      const windowStart = Date.parse(highWater) - overlapMs;
      // Pairs before the window are never read again (not by this poll, whose cursor only moves forward, nor by
      // the next, which starts at the window): dropped here and from memory, a save costs the window, not the poll.
      for (const [key, change] of handled) if (Date.parse(change.updatedAt) < windowStart) handled.delete(key);
      await options.storage.save({ updatedAt: highWater, handled: [...handled.values()] });
      unsaved = false;
    };

    for await (const page of walk) {
      let failure: { error: unknown } | undefined;
      try {
        for (const record of page.data) {
          const fields = record as unknown as Record<string, unknown>;
          const id = fields[idField];
          // Without a name per record every change of one instant would share a key and all but one be skipped.
          if (typeof id !== 'string' || typeof fields.updatedAt !== 'string')
            throw new TypeError(
              `A record of ${path} has no string ${idField} and updatedAt to keep in the checkpoint; set idField to the field that names its records.`,
            );
          const change = { id, updatedAt: fields.updatedAt };
          if (handled.has(keyOf(change))) continue;
          await handler(record);
          count++;
          unsaved = true;
          handled.set(keyOf(change), change);
          if (highWater === undefined || Date.parse(change.updatedAt) > Date.parse(highWater))
            highWater = change.updatedAt;
        }
      } catch (error) {
        failure = { error };
      }
      // Also when the handler threw: the records it finished stay handled, the failed one and later are not.
      try {
        await save();
      } catch (saveError) {
        if (!failure) throw saveError;
        // The handler's error is what the caller must see; the save failure goes with it.
        attachSaveError(failure.error, saveError);
      }
      if (failure) throw failure.error;
    }
    return count;
  }
}

/**
 * Puts a failed checkpoint save on the handler's error as `checkpointSaveError` (when the error is an object that
 * takes it), without replacing the error or its own `cause`.
 */
function attachSaveError(handlerError: unknown, saveError: unknown): void {
  if (typeof handlerError !== 'object' || handlerError === null || !Object.isExtensible(handlerError)) return;
  Object.defineProperty(handlerError, 'checkpointSaveError', {
    value: saveError,
    configurable: true,
    writable: true,
    enumerable: false,
  });
}

function keyOf(change: HandledChange): string {
  return `${change.id}@${change.updatedAt}`;
}

function copy(checkpoint: Checkpoint): Checkpoint {
  return { updatedAt: checkpoint.updatedAt, handled: checkpoint.handled.map((change) => ({ ...change })) };
}
