// The empties ledger: crates and returnable bottles (products with is_empty) moving between the distributor and a
// customer or the supplier. Every empties movement names the document line that caused it; with a customer it changes
// what the customer holds (customer_empties), in the same transaction, never below zero; with a location the empties
// also move in the stock ledger, and the empties movement names that stock movement.
//
// Lock order (the ledger's, extended): valuations, levels (postMovements), then customers' empties by (customer,
// product) in byte order, then the document's number. The sales documents of the next modules call
// postEmptiesMovements from their own posting functions; receipts from and returns to the supplier, and adjustments
// of what a customer holds, are documents of this module.
import { sql, type Transaction } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';
import type { Actor } from '../../platform/access/actor.js';
import { ApiError, type FieldError } from '../../platform/errors/api-error.js';
import { newId } from '../../platform/ids.js';
import { postDocument, resolveLines, perBaseUnit, throwIfAny, type StockDocument } from './documents.js';
import type { DocumentRef, Movement, PostedMovement } from './ledger.js';

export type EmptiesMovementType =
  | 'issued_with_sale'
  | 'collected'
  | 'received_from_supplier'
  | 'returned_to_supplier'
  | 'bought_back'
  | 'adjustment';

/** Seen from the distributor: `out` leaves it (to a customer, to the supplier), `in` comes back. */
export type EmptiesDirection = 'in' | 'out';

export interface EmptiesMove {
  /** The document line (1-based). */
  line: number;
  type: EmptiesMovementType;
  direction: EmptiesDirection;
  productId: string;
  /** Pieces, more than 0. */
  quantity: number;
  customerId: string | null;
  tripId: string | null;
  locationId: string | null;
  /** The stock movement of the same line, when the empties moved physically. */
  stockMovementId: string | null;
}

/** The direction each type has (an adjustment says its own). */
const DIRECTION_OF: Record<Exclude<EmptiesMovementType, 'adjustment'>, EmptiesDirection> = {
  issued_with_sale: 'out',
  collected: 'in',
  received_from_supplier: 'in',
  returned_to_supplier: 'out',
  bought_back: 'in',
};

/**
 * Appends empties movements and changes what each customer holds, in the caller's transaction. A movement that would
 * take a customer's holding below zero refuses the whole document (422 business_rule naming the line). It is the
 * set form (lockEmpties, planEmpties, writeEmpties) for one document.
 */
export async function postEmptiesMovements(
  tx: Transaction<DB>,
  organizationId: string,
  document: DocumentRef,
  moves: EmptiesMove[],
  fieldOf: (line: number) => string,
): Promise<string[]> {
  const held = await lockEmpties(tx, organizationId, moves);
  const plan = planEmpties(held, moves, fieldOf);
  if (plan instanceof ApiError) throw plan;
  for (const [key, quantity] of plan) held.set(key, quantity);
  return (await writeEmpties(tx, organizationId, held, [{ document, moves }]))[0]!;
}

/** What the customers of the moves (of one or several documents) hold, locked; see postEmptiesMovements. */
export async function lockEmpties(
  tx: Transaction<DB>,
  organizationId: string,
  moves: readonly EmptiesMove[],
): Promise<Map<string, number>> {
  for (const move of moves) {
    // The documents validate what callers send; these are the ledger's own invariants (a failure here is a bug).
    if (!Number.isSafeInteger(move.quantity) || move.quantity <= 0)
      throw new Error(`empties ledger: line ${move.line} moves ${move.quantity}`);
    if (move.type !== 'adjustment' && DIRECTION_OF[move.type] !== move.direction)
      throw new Error(`empties ledger: ${move.type} goes ${DIRECTION_OF[move.type]}, not ${move.direction}`);
  }
  return lockCustomerEmpties(
    tx,
    organizationId,
    moves.filter((m) => m.customerId !== null).map((m) => ({ customerId: m.customerId!, productId: m.productId })),
  );
}

/**
 * Plans one document's moves on what the customers hold, without changing it: the holdings after them (to set into
 * `held` when the document is accepted), or the 422 business_rule naming each line that would take one below zero.
 */
export function planEmpties(
  held: ReadonlyMap<string, number>,
  moves: readonly EmptiesMove[],
  fieldOf: (line: number) => string,
): Map<string, number> | ApiError {
  const after = new Map<string, number>();
  const short: FieldError[] = [];
  for (const move of moves) {
    if (move.customerId === null) continue;
    const key = `${move.customerId}|${move.productId}`;
    const before = after.get(key) ?? held.get(key)!;
    const next = move.direction === 'out' ? before + move.quantity : before - move.quantity;
    if (next < 0)
      short.push({
        field: fieldOf(move.line),
        code: 'business_rule',
        message: `the customer holds ${before} of this empty at this point of the document; the line takes back ${move.quantity}`,
      });
    after.set(key, next);
  }
  if (short.length > 0)
    return new ApiError(
      'business_rule',
      'A line takes back more empties than the customer holds; nothing was posted. errors[] names each line.',
      short,
    );
  return after;
}

/** Appends the moves of every document given (one statement) and writes the holdings; each document's movement ids. */
export async function writeEmpties(
  tx: Transaction<DB>,
  organizationId: string,
  held: Map<string, number>,
  documents: readonly { document: DocumentRef; moves: readonly EmptiesMove[] }[],
): Promise<string[][]> {
  const rows = documents.map(({ document, moves }) =>
    moves.map((m) => ({
      organization_id: organizationId,
      id: newId('emv'),
      type: m.type,
      direction: m.direction,
      product_id: m.productId,
      quantity: m.quantity,
      customer_id: m.customerId,
      trip_id: m.tripId,
      location_id: m.locationId,
      stock_movement_id: m.stockMovementId,
      document_type: document.type,
      document_id: document.id,
      line_number: m.line,
    })),
  );
  if (rows.every((document) => document.length === 0)) return rows.map(() => []);
  await tx.insertInto('empties_movements').values(rows.flat()).execute();
  if (held.size > 0) {
    const changed = [...held].map(([key, quantity]) => {
      const [customerId, productId] = key.split('|') as [string, string];
      return { customer_id: customerId, product_id: productId, quantity };
    });
    // A set of rows from one JSON parameter has no builder form (jsonb_to_recordset); the parameter is bound.
    await sql`
      UPDATE customer_empties AS c SET quantity = x.quantity, updated_at = now()
        FROM jsonb_to_recordset(${JSON.stringify(changed)}::jsonb) AS x(customer_id text, product_id text, quantity int)
       WHERE c.organization_id = ${organizationId} AND c.customer_id = x.customer_id AND c.product_id = x.product_id`.execute(
      tx,
    );
  }
  return rows.map((document) => document.map((row) => row.id));
}

/** What customers hold of empties, locked in (customer, product) byte order; missing rows are created at zero first. */
async function lockCustomerEmpties(
  tx: Transaction<DB>,
  organizationId: string,
  pairs: { customerId: string; productId: string }[],
): Promise<Map<string, number>> {
  const unique = [...new Map(pairs.map((p) => [`${p.customerId}|${p.productId}`, p])).values()];
  if (unique.length === 0) return new Map();
  await tx
    .insertInto('customer_empties')
    .values(
      unique.map((p) => ({
        organization_id: organizationId,
        customer_id: p.customerId,
        product_id: p.productId,
        quantity: 0,
      })),
    )
    .onConflict((conflict) => conflict.doNothing())
    .execute();
  const rows = await tx
    .selectFrom('customer_empties')
    .select(['customer_id', 'product_id', 'quantity'])
    .where('organization_id', '=', organizationId)
    .where((eb) =>
      eb.or(unique.map((p) => eb.and([eb('customer_id', '=', p.customerId), eb('product_id', '=', p.productId)]))),
    )
    // Byte order whatever the database's collation: one lock order for every posting.
    .orderBy(sql`customer_id COLLATE "C"`)
    .orderBy(sql`product_id COLLATE "C"`)
    .forUpdate()
    .execute();
  return new Map(rows.map((row) => [`${row.customer_id}|${row.product_id}`, row.quantity]));
}

export interface SupplierEmptiesCommand {
  /** The warehouse the empties come into or leave. */
  locationId: string;
  note?: string | null;
  /** Pieces of each empty; a receipt may give the cost of one piece (else it comes in at the moving average). */
  lines: { productId: string; quantity: number; unitCost?: string }[];
}

/** Empties received from the supplier into a warehouse: an `ERC-` document, its stock receipts and empties movements. */
export async function receiveEmptiesFromSupplier(
  tx: Transaction<DB>,
  actor: Actor,
  command: SupplierEmptiesCommand,
): Promise<StockDocument> {
  return postSupplierEmpties(tx, actor, command, 'received_from_supplier');
}

/** Empties returned to the supplier from a warehouse: an `ERT-` document; a return of more than the warehouse holds is insufficient_stock. */
export async function returnEmptiesToSupplier(
  tx: Transaction<DB>,
  actor: Actor,
  command: SupplierEmptiesCommand,
): Promise<StockDocument> {
  return postSupplierEmpties(tx, actor, command, 'returned_to_supplier');
}

async function postSupplierEmpties(
  tx: Transaction<DB>,
  actor: Actor,
  command: SupplierEmptiesCommand,
  type: 'received_from_supplier' | 'returned_to_supplier',
): Promise<StockDocument> {
  const organizationId = actor.organization.id;
  const receipt = type === 'received_from_supplier';
  const { products } = await resolveLines(
    tx,
    organizationId,
    command.lines.map((line) => ({ productId: line.productId, locationIds: [command.locationId] })),
    ['/locationId'],
  );
  throwIfAny(
    command.lines.flatMap((line, i): FieldError[] => [
      ...(Number.isSafeInteger(line.quantity) && line.quantity > 0
        ? []
        : [
            {
              field: `/lines/${i}/quantity`,
              code: 'invalid_field' as const,
              message: 'a whole number of pieces, more than 0',
            },
          ]),
      ...(line.unitCost !== undefined && !receipt
        ? [
            {
              field: `/lines/${i}/unitCost`,
              code: 'invalid_field' as const,
              message: 'a return moves at the moving average cost; leave unitCost out',
            },
          ]
        : []),
    ]),
  );
  const notEmpties = command.lines.flatMap((line, i): FieldError[] =>
    products.get(line.productId)!.isEmpty
      ? []
      : [
          {
            field: `/lines/${i}/productId`,
            code: 'business_rule',
            message: 'the product is not an empty (isEmpty is false)',
          },
        ],
  );
  if (notEmpties.length > 0)
    throw new ApiError(
      'business_rule',
      'Only empties are received from or returned to the supplier this way. errors[] names each line.',
      notEmpties,
    );

  const movements = command.lines.map(
    (line, i): Movement =>
      receipt
        ? {
            line: i + 1,
            productId: line.productId,
            fromLocationId: null,
            toLocationId: command.locationId,
            quantity: line.quantity,
            ...(line.unitCost === undefined ? {} : { unitCost: perBaseUnit(line.unitCost, 1) }),
          }
        : {
            line: i + 1,
            productId: line.productId,
            fromLocationId: command.locationId,
            toLocationId: null,
            quantity: line.quantity,
          },
  );
  const field = (line: number) => `/lines/${line - 1}/quantity`;
  return postDocument(
    tx,
    organizationId,
    {
      type: receipt ? 'empties_receipt' : 'empties_return',
      prefix: receipt ? 'ERC' : 'ERT',
      reasonCode: null,
      note: command.note ?? null,
      tripId: null,
    },
    movements,
    field,
    async (document, posted: PostedMovement[]) => {
      await postEmptiesMovements(
        tx,
        organizationId,
        document,
        posted.map((m) => ({
          line: m.line,
          type,
          direction: DIRECTION_OF[type],
          productId: m.productId,
          quantity: m.quantity,
          customerId: null,
          tripId: null,
          locationId: command.locationId,
          stockMovementId: m.id,
        })),
        field,
      );
    },
  );
}

export interface CustomerEmptiesAdjustment {
  customerId: string;
  /** adjustment reason: OPENING (the balance carried over from the books before), CORRECTION, ... */
  reasonCode: string;
  note?: string | null;
  /** Signed pieces, not 0: positive, the customer holds more (out); negative, less (in). */
  lines: { productId: string; quantity: number }[];
}

/**
 * Corrects what a customer holds without anything moving physically (an opening balance carried over, a count at
 * the outlet): an `ADJ-` document with empties movements of type `adjustment` and no stock movement.
 */
export async function adjustCustomerEmpties(
  tx: Transaction<DB>,
  actor: Actor,
  command: CustomerEmptiesAdjustment,
): Promise<StockDocument> {
  const organizationId = actor.organization.id;
  const customer = await tx
    .selectFrom('customers')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('id', '=', command.customerId)
    .executeTakeFirst();
  if (!customer)
    throw new ApiError('customer_not_found', `There is no customer ${command.customerId} in this organisation.`, [
      { field: '/customerId', code: 'customer_not_found', message: 'not a customer of this organisation' },
    ]);
  const { products } = await resolveLines(
    tx,
    organizationId,
    command.lines.map((line) => ({ productId: line.productId, locationIds: [] })),
  );
  throwIfAny(
    command.lines.flatMap((line, i): FieldError[] =>
      Number.isSafeInteger(line.quantity) && line.quantity !== 0
        ? []
        : [{ field: `/lines/${i}/quantity`, code: 'invalid_field', message: 'a whole number of pieces, not 0' }],
    ),
  );
  const notEmpties = command.lines.flatMap((line, i): FieldError[] =>
    products.get(line.productId)!.isEmpty
      ? []
      : [
          {
            field: `/lines/${i}/productId`,
            code: 'business_rule',
            message: 'the product is not an empty (isEmpty is false)',
          },
        ],
  );
  if (notEmpties.length > 0)
    throw new ApiError('business_rule', 'Only empties are held by customers. errors[] names each line.', notEmpties);
  const field = (line: number) => `/lines/${line - 1}/quantity`;
  return postDocument(
    tx,
    organizationId,
    { type: 'adjustment', prefix: 'ADJ', reasonCode: command.reasonCode, note: command.note ?? null, tripId: null },
    [],
    field,
    async (document) => {
      await postEmptiesMovements(
        tx,
        organizationId,
        document,
        command.lines.map((line, i) => ({
          line: i + 1,
          type: 'adjustment',
          direction: line.quantity > 0 ? 'out' : 'in',
          productId: line.productId,
          quantity: Math.abs(line.quantity),
          customerId: command.customerId,
          tripId: null,
          locationId: null,
          stockMovementId: null,
        })),
        field,
      );
    },
  );
}
