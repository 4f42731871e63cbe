// The one transaction owner. Every write of an operation (the record, its lines, ledger rows, balances, outbox
// events and the idempotency result) runs in one Kysely transaction over the pool, typed `Tx` = Transaction<DB>:
// a function that takes a Tx cannot be handed the root `Db` (Kysely makes the two types incompatible), so a
// posting function cannot run outside a transaction by mistake.
import { AsyncLocalStorage } from 'node:async_hooks';
import type {
  Kysely,
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  Transaction,
  UnknownRow,
} from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';

/** The database, outside any transaction (reads, and the start of a transaction). */
export type Db = Kysely<DB>;
/** One open transaction. Writes take a Tx; reads take a Db, which a Tx also is. */
export type Tx = Transaction<DB>;

const RETRYABLE = new Set(['40P01', '40001']); // deadlock detected, serialization failure
const ATTEMPTS = 3;

interface OpenTransaction {
  /** Effects to run once the transaction has committed (wake a dispatcher, send a job). */
  afterCommit: (() => void | Promise<void>)[];
}

const current = new AsyncLocalStorage<OpenTransaction>();
const openTransactions = new WeakMap<Tx, OpenTransaction>();

/**
 * Runs fn in one transaction: every write of an operation commits together or not at all. A transaction that
 * PostgreSQL aborted as a deadlock victim or serialization failure is run again, up to three times in all. That
 * is safe only because fn reaches nothing outside Postgres: `assertOutsideTransaction` refuses a network call made
 * inside, and effects outside the database are registered with `afterCommit`, which runs them once, after COMMIT.
 */
export async function inTransaction<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  if (current.getStore())
    throw new Error(
      'inTransaction inside a transaction: pass the open Tx down instead (one transaction owner per operation)',
    );
  for (let attempt = 1; ; attempt += 1) {
    const open: OpenTransaction = { afterCommit: [] };
    let result: T;
    try {
      result = await current.run(open, () =>
        db.transaction().execute(async (root) => {
          const guard = new ClosedTransactionGuard();
          const tx = root.withPlugin(guard);
          openTransactions.set(tx, open);
          try {
            return await fn(tx);
          } finally {
            guard.close();
          }
        }),
      );
    } catch (error) {
      if (attempt >= ATTEMPTS || !RETRYABLE.has((error as { code?: string }).code ?? '')) throw error;
      continue;
    }
    for (const effect of open.afterCommit) await effect();
    return result;
  }
}

/** Runs effect after the transaction commits (never if it rolls back, once if it is retried). */
export function afterCommit(tx: Tx, effect: () => void | Promise<void>): void {
  const open = openTransactions.get(tx);
  if (!open) throw new Error('afterCommit: this transaction was not opened by inTransaction');
  open.afterCommit.push(effect);
}

/**
 * Refuses work that leaves the database (an HTTP request, a message) while a transaction is open in this async
 * context: a deadlock retry would repeat it, and a rollback could not take it back. Called by every outbound
 * client of the service; a test proves it.
 */
export function assertOutsideTransaction(what: string): void {
  if (current.getStore()) {
    throw new Error(
      `${what} inside a database transaction: register it with afterCommit(tx, ...) or send it from a job`,
    );
  }
}

/**
 * A query on a transaction after its callback has settled (an un-awaited promise, a stray closure) would run on
 * a connection already returned to the pool, outside the transaction: make it fail loudly instead.
 */
class ClosedTransactionGuard implements KyselyPlugin {
  private closed = false;

  close(): void {
    this.closed = true;
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (this.closed) throw new Error('query on a transaction that has already ended');
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}
