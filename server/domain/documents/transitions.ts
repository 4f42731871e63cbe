// A document type's lifecycle, written once as a table (Vendure's `Transitions<S>`): for each status, the commands
// allowed from it, the status each leads to and the event it writes. Every status must have a row (a terminal one
// has an empty list), so adding a status without deciding its moves does not compile; the table is checked when it
// is defined (every target is a status, no command twice from one status, every status reachable from the
// initial one), so a wrong table fails at import. A move is persisted by a guarded UPDATE (`... AND status =
// from`), so of two concurrent commands on one document only the first moves it: the state is never checked in
// memory and then overwritten.
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';
import { ApiError } from '../../platform/errors/api-error.js';

/** One allowed move from a status: the command, the status it leads to, the event it writes. */
export interface Move<State extends string, Command extends string, Event extends string = string> {
  command: Command;
  to: State;
  /** The event type the move records (`order.cancelled`). */
  event: Event;
  /**
   * Set for a move the service makes itself, never on request: what makes it (`its balance reaches zero`). A refusal
   * names such a move by what makes it, not by its command, so that no client looks for an operation `reopen`.
   */
  when?: string;
}

/**
 * Every status has a row listing its moves; a terminal status has `[]`. The statuses are the table's keys: a move's
 * `to` does not add one (NoInfer), so a move to a status without a row does not compile either.
 */
export type Transitions<State extends string, Command extends string, Event extends string = string> = {
  readonly [S in State]: readonly Move<NoInfer<State>, Command, Event>[];
};

export interface DocumentTransitions<State extends string, Command extends string, Event extends string = string> {
  /** `order`, `credit_note`: names the document in error details. */
  readonly documentType: string;
  readonly initial: State;
  readonly table: Transitions<State, Command, Event>;
  /**
   * The move `command` makes from `from`, or 409 invalid_state whose detail names the document (with its id
   * when given), its status, the statuses the command is allowed from, and the commands allowed from `from`.
   */
  next(from: State, command: Command, documentId?: string): { to: State; event: Event };
  /** The commands allowed from a status, in the table's order (for `allowedActions`-style fields). */
  allowedCommands(from: State): Command[];
  /** `next`, then `applyTransition`: checks the command and persists the move it makes. */
  move<T extends StatusTable>(
    tx: Transaction<DB>,
    target: { table: T; organizationId: string; id: string; from: State & StatusOf<T> },
    command: Command,
  ): Promise<{ to: State; event: Event }>;
}

/**
 * Checks a table: the initial status has a row, every move leads to a status that has one, no status lists a
 * command twice, and every status can be reached from the initial one. Throws one Error naming every problem.
 */
export function validateTransitions<State extends string, Command extends string, Event extends string = string>(
  table: Transitions<State, Command, Event>,
  initial: NoInfer<State>,
  documentType = 'transitions',
): void {
  const states = Object.keys(table) as State[];
  const problems: string[] = [];
  if (!states.includes(initial)) problems.push(`the initial status ${initial} has no row`);
  for (const from of states) {
    const seen = new Set<Command>();
    for (const { command, to } of table[from]) {
      if (seen.has(command)) problems.push(`${from} lists ${command} twice`);
      seen.add(command);
      if (!states.includes(to)) problems.push(`${from} --${command}--> ${to}, which is not a status`);
    }
  }
  const reached = new Set<State>([initial]);
  for (const from of reached) {
    // a Set iterates over what is added while iterating: a breadth-first walk
    for (const { to } of table[from] ?? []) reached.add(to);
  }
  const unreachable = states.filter((state) => !reached.has(state));
  if (unreachable.length > 0) problems.push(`${unreachable.join(', ')} cannot be reached from ${initial}`);
  if (problems.length > 0) throw new Error(`${documentType}: ${problems.join('; ')}`);
}

/** A document type's lifecycle; the table is validated here, so an invalid one fails when its module is imported. */
export function defineTransitions<State extends string, Command extends string, Event extends string = string>(
  documentType: string,
  initial: NoInfer<State>,
  table: Transitions<State, Command, Event>,
): DocumentTransitions<State, Command, Event> {
  validateTransitions(table, initial, documentType);
  const rowOf = (from: State) => {
    const row = table[from];
    // A status the table does not know came from the database: a migration or a bug, not the caller (500).
    if (row === undefined) throw new Error(`${documentType}: ${from} is not a status of the table`);
    return row;
  };
  const allowedCommands = (from: State) => rowOf(from).map((move) => move.command);
  const next = (from: State, command: Command, documentId?: string) => {
    const move = rowOf(from).find((candidate) => candidate.command === command);
    if (move) return { to: move.to, event: move.event };
    const origins = (Object.keys(table) as State[]).filter((state) =>
      table[state].some((candidate) => candidate.command === command),
    );
    const moves = rowOf(from);
    const requested = moves.filter((candidate) => candidate.when === undefined).map((candidate) => candidate.command);
    const automatic = moves
      .filter((candidate) => candidate.when !== undefined)
      .map((candidate) => `it becomes ${candidate.to} when ${candidate.when}`);
    const name = documentType.replaceAll('_', ' ');
    const document =
      documentId === undefined ? `The ${name}` : `${name.charAt(0).toUpperCase()}${name.slice(1)} ${documentId}`;
    const onward =
      moves.length === 0
        ? 'nothing, it is final'
        : [requested.length > 0 ? requested.join(', ') : 'nothing on request', ...automatic].join('; ');
    throw new ApiError(
      'invalid_state',
      `${document} is ${from}; ${command} is allowed only from ${origins.length > 0 ? origins.join(' or ') : 'no status'}` +
        ` (from ${from}: ${onward}).`,
    );
  };
  return {
    documentType,
    initial,
    table,
    next,
    allowedCommands,
    async move(tx, target, command) {
      const move = next(target.from, command, target.id);
      await persistMove(tx, target.table, target.organizationId, target.id, target.from, move.to, documentType);
      return move;
    },
  };
}

/** The tables a transition can move: each has organization_id, id, status and updated_at. */
export type StatusTable = {
  [T in keyof DB]: Selectable<DB[T]> extends { organization_id: string; id: string; status: string; updated_at: Date }
    ? T
    : never;
}[keyof DB];

/** The status column's type of a table (a union once the schema declares one with `@kyselyType`). */
export type StatusOf<T extends StatusTable> = Selectable<DB[T]> extends { status: infer S extends string } ? S : never;

export interface TransitionWrite<T extends StatusTable> {
  table: T;
  organizationId: string;
  id: string;
  from: StatusOf<T>;
  to: StatusOf<T>;
  /** Names the document in the 409's detail; the table's name when absent. */
  documentType?: string;
}

/**
 * Persists a move: `UPDATE <table> SET status = to, updated_at = now() WHERE organization_id = ? AND id = ? AND
 * status = from`. When no row matches (another transaction moved the document first, or it is not there) the
 * answer is 409 invalid_state, never a lost update. Runs in the caller's transaction.
 */
export async function applyTransition<T extends StatusTable>(
  tx: Transaction<DB>,
  write: TransitionWrite<T>,
): Promise<void> {
  await persistMove(
    tx,
    write.table,
    write.organizationId,
    write.id,
    write.from,
    write.to,
    write.documentType ?? write.table,
  );
}

async function persistMove(
  tx: Transaction<DB>,
  table: StatusTable,
  organizationId: string,
  id: string,
  from: string,
  to: string,
  documentType: string,
): Promise<void> {
  const { numUpdatedRows } = await statusColumns(tx)
    .updateTable(table)
    .set((eb) => ({ status: to, updated_at: eb.fn<Date>('now') }))
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .where('status', '=', from)
    .executeTakeFirst();
  if (numUpdatedRows === 0n) {
    throw new ApiError(
      'invalid_state',
      `The ${documentType.replaceAll('_', ' ')} ${id} is not ${from} any more (or is not there): another request changed it first. Read it again.`,
    );
  }
}

/**
 * The one cast: Kysely types a statement by its table's name, and cannot type one UPDATE over a table chosen by a
 * type parameter (the column names of `DB[T]` are not known inside the function). StatusTable guarantees that
 * every such table has these four columns, so the transaction is viewed as a database of just those.
 */
function statusColumns(
  tx: Transaction<DB>,
): Kysely<Record<StatusTable, { organization_id: string; id: string; status: string; updated_at: Date }>> {
  return tx as unknown as Kysely<
    Record<StatusTable, { organization_id: string; id: string; status: string; updated_at: Date }>
  >;
}
