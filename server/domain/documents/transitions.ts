// A document type's lifecycle, written once as a table: from each status, which commands are allowed, the status
// each leads to and the event it writes. Every status must have a row (a terminal one has no moves), so adding a
// status without deciding its moves does not compile; the table is checked when it is defined (every target is a
// status, every status is reachable from the initial one). A move is persisted by a guarded UPDATE, so two
// concurrent commands cannot both move the same document.
import type { Kysely } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';
import type { Tx } from '../../platform/database/transaction.js';
import { ApiError } from '../../platform/errors/api-error.js';

export interface Move<Status extends string, Event extends string> {
  to: Status;
  /** The event the move writes (`order.status_changed`). */
  event: Event;
}

/** Every status has a row; a row maps each allowed command to its move. */
export type Transitions<Status extends string, Command extends string, Event extends string = string> = {
  readonly [S in Status]: Readonly<Partial<Record<Command, Move<Status, Event>>>>;
};

export interface Lifecycle<Status extends string, Command extends string, Event extends string> {
  documentType: string;
  initial: Status;
  table: Transitions<Status, Command, Event>;
  /** The move `command` makes from `from`, or 409 invalid_state naming the document's status and what it allows. */
  next(documentId: string, from: Status, command: Command): Move<Status, Event>;
  /** The commands allowed from a status (for `allowedActions`-style fields and error details). */
  allowedCommands(from: Status): Command[];
}

/** Throws on a move to an unknown status, and on a status that no sequence of moves reaches from the initial one. */
export function validateTransitions<Status extends string, Command extends string, Event extends string>(
  documentType: string, initial: Status, table: Transitions<Status, Command, Event>,
): void {
  const statuses = Object.keys(table) as Status[];
  if (!statuses.includes(initial)) throw new Error(`${documentType}: the initial status ${initial} has no row`);
  for (const from of statuses) {
    for (const [command, move] of Object.entries(table[from]) as [Command, Move<Status, Event>][]) {
      if (!statuses.includes(move.to)) throw new Error(`${documentType}: ${from} --${command}--> ${move.to}, which is not a status`);
    }
  }
  const reached = new Set<Status>([initial]);
  const queue: Status[] = [initial];
  while (queue.length > 0) {
    const from = queue.shift()!;
    for (const move of Object.values(table[from]) as Move<Status, Event>[]) {
      if (!reached.has(move.to)) { reached.add(move.to); queue.push(move.to); }
    }
  }
  const unreachable = statuses.filter((status) => !reached.has(status));
  if (unreachable.length > 0) throw new Error(`${documentType}: ${unreachable.join(', ')} cannot be reached from ${initial}`);
}

export function defineLifecycle<Status extends string, Command extends string, Event extends string>(
  documentType: string, initial: Status, table: Transitions<Status, Command, Event>,
): Lifecycle<Status, Command, Event> {
  validateTransitions(documentType, initial, table);
  const allowedCommands = (from: Status) => Object.keys(table[from]) as Command[];
  return {
    documentType,
    initial,
    table,
    allowedCommands,
    next(documentId, from, command) {
      const move = table[from][command];
      if (move) return move as Move<Status, Event>;
      const origins = (Object.keys(table) as Status[]).filter((status) => table[status][command] !== undefined);
      const allowed = allowedCommands(from);
      throw new ApiError('invalid_state', `${capitalised(documentType)} ${documentId} is ${from}; ${command} is allowed only from ${origins.length > 0 ? origins.join(' or ') : 'no status'}`
        + ` (from ${from}: ${allowed.length > 0 ? allowed.join(', ') : 'nothing, it is final'}).`);
    },
  };
}

/** The document tables a lifecycle moves: each has organization_id, id, status and updated_at. */
export type DocumentTableName = { [T in keyof DB]: DB[T] extends { organization_id: string; id: string; status: string } ? T : never }[keyof DB];

/**
 * Persists a move with `UPDATE ... SET status = to WHERE organization_id, id AND status = from`: when another
 * transaction moved the document first, no row matches and the answer is 409 invalid_state, never a lost update.
 */
export async function applyMove<Status extends string>(
  tx: Tx, table: DocumentTableName, organizationId: string, documentId: string, documentType: string, from: Status, to: Status,
): Promise<void> {
  // Kysely cannot type one UPDATE over a table chosen by a parameter; the columns named are those every document
  // table has (DocumentTableName says so), so the untyped view is confined to this statement.
  const { numUpdatedRows } = await (tx as unknown as Kysely<Record<string, { organization_id: string; id: string; status: string; updated_at: Date }>>)
    .updateTable(table)
    .set((eb) => ({ status: to, updated_at: eb.fn('now') }))
    .where('organization_id', '=', organizationId).where('id', '=', documentId).where('status', '=', from)
    .executeTakeFirst();
  if (numUpdatedRows === 0n) {
    throw new ApiError('invalid_state', `${capitalised(documentType)} ${documentId} is no longer ${from}: another request changed it first. Read it again.`);
  }
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
