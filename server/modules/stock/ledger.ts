// The stock ledger: the one way stock moves. Every inventory document (an adjustment or transfer of this module; an
// invoice, return or trip load of the modules to come) hands its movements to postMovements inside its own
// transaction; the movements are appended, and the levels and the moving average cost they change are updated in
// the same transaction. A removal that would take a level below zero refuses the whole document with 422
// insufficient_stock naming its line, and nothing is written.
//
// Concurrency: every row a posting changes is locked in one global order (valuations by product, then levels by
// location and product, then, by the document, its number sequence), so concurrent postings on the same level wait
// for each other instead of deadlocking or losing an update; the check against zero is made on the locked level.
import { Decimal } from 'decimal.js';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';
import { ApiError, type FieldError } from '../../platform/errors/api-error.js';
import { newId } from '../../platform/ids.js';

/** Costs carry 6 decimals of the base currency per base unit; 40 significant digits leave the arithmetic exact. */
const Cost = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP });
const COST_DECIMALS = 6;

export interface Movement {
  /** The document line (1-based) that causes it. */
  line: number;
  productId: string;
  /** Null: a receipt (from a supplier, a count that found more). */
  fromLocationId: string | null;
  /** Null: an issue (to a customer, a count that found less, a write-off). */
  toLocationId: string | null;
  /** Base units (bottles, pieces), a positive integer. */
  quantity: number;
  /** A receipt's cost of one base unit; without it, a receipt comes in at the product's moving average cost. */
  unitCost?: string;
}

export interface PostedMovement extends Required<Omit<Movement, 'unitCost'>> {
  id: string;
  unitCost: string;
  createdAt: Date;
}

export interface DocumentRef {
  /** stock_document, invoice, return, ... */
  type: string;
  id: string;
}

/** The field of a line's quantity in the caller's request, for errors[] (`/lines/0/quantity`). */
export type LineField = (line: number) => string;

type LevelKey = `${string}|${string}`;
const levelKey = (locationId: string, productId: string): LevelKey => `${locationId}|${productId}`;

/**
 * The current levels of (location, product) pairs, locked for the rest of the transaction (rows that do not exist yet
 * are created at zero first, so that every pair has a row to lock). Locks are taken in (location, product) order.
 */
export async function lockLevels(
  tx: Transaction<DB>,
  organizationId: string,
  pairs: { locationId: string; productId: string }[],
): Promise<Map<LevelKey, number>> {
  await lockValuations(
    tx,
    organizationId,
    pairs.map((p) => p.productId),
  ); // the global order: valuations, then levels
  return lockLevelRows(tx, organizationId, pairs);
}

/** The levels' rows alone, locked in (location, product) order; the caller holds the valuations' locks already. */
async function lockLevelRows(
  tx: Transaction<DB>,
  organizationId: string,
  pairs: { locationId: string; productId: string }[],
): Promise<Map<LevelKey, number>> {
  const unique = [...new Map(pairs.map((p) => [levelKey(p.locationId, p.productId), p])).values()].sort((a, b) =>
    a.locationId === b.locationId ? compare(a.productId, b.productId) : compare(a.locationId, b.locationId),
  );
  if (unique.length === 0) return new Map();
  await tx
    .insertInto('stock_levels')
    .values(
      unique.map((p) => ({
        organization_id: organizationId,
        location_id: p.locationId,
        product_id: p.productId,
        quantity: 0,
      })),
    )
    .onConflict((conflict) => conflict.doNothing())
    .execute();
  const rows = await tx
    .selectFrom('stock_levels')
    .select(['location_id', 'product_id', 'quantity'])
    .where('organization_id', '=', organizationId)
    .where((eb) =>
      eb.or(unique.map((p) => eb.and([eb('location_id', '=', p.locationId), eb('product_id', '=', p.productId)]))),
    )
    // In byte order, as `compare` sorts the inserts above: one lock order whatever the database's collation.
    .orderBy(sql`location_id COLLATE "C"`)
    .orderBy(sql`product_id COLLATE "C"`)
    .forUpdate()
    .execute();
  return new Map(rows.map((row) => [levelKey(row.location_id, row.product_id), row.quantity]));
}

/**
 * Appends the document's movements to the ledger and updates the levels and moving average costs they change, in the
 * caller's transaction. Refuses the whole document (422 insufficient_stock, each short line named) when a removal would
 * take a level below zero. It is the set form (lockStock, planMovements, writeMovements) for one document.
 */
export async function postMovements(
  tx: Transaction<DB>,
  organizationId: string,
  document: DocumentRef,
  movements: Movement[],
  fieldOf: LineField,
): Promise<PostedMovement[]> {
  const state = await lockStock(tx, organizationId, movements);
  const plan = planMovements(state, movements, fieldOf);
  if (plan instanceof ApiError) throw plan;
  applyPlan(state, plan);
  return (await writeMovements(tx, organizationId, state, [{ document, planned: plan.movements }]))[0]!;
}

/**
 * The ledger rows a set of documents' movements change, locked for the rest of the transaction, with their values:
 * valuations by product, levels by (location, product). Documents are planned on it in memory, one after another
 * (planMovements), and written together (writeMovements): a set of documents costs a handful of statements.
 */
export interface StockState {
  valuations: Map<string, { quantity: number; averageCost: Decimal }>;
  levels: Map<LevelKey, number>;
}

/** A movement planned on a StockState: its cost fixed, not yet written. */
export type PlannedMovement = Omit<PostedMovement, 'id' | 'createdAt'>;

/** Locks every row the movements (of one or several documents) change, in the ledger's one global order. */
export async function lockStock(
  tx: Transaction<DB>,
  organizationId: string,
  movements: readonly Movement[],
): Promise<StockState> {
  for (const move of movements) checkMovement(move);
  // Valuations first (by product), then levels: the one global lock order of the ledger (lockLevels keeps it too).
  // Locking a row this transaction already holds (a counted adjustment read its levels first) waits for nothing.
  const valuations = await lockValuations(
    tx,
    organizationId,
    movements.map((m) => m.productId),
  );
  const levels = await lockLevelRows(
    tx,
    organizationId,
    movements.flatMap((m) => [
      ...(m.fromLocationId ? [{ locationId: m.fromLocationId, productId: m.productId }] : []),
      ...(m.toLocationId ? [{ locationId: m.toLocationId, productId: m.productId }] : []),
    ]),
  );
  return { valuations, levels };
}

/** One document's movements planned on a StockState: the movements with their costs, and the rows after them. */
export interface StockPlan {
  movements: PlannedMovement[];
  levels: Map<LevelKey, number>;
  valuations: Map<string, { quantity: number; averageCost: Decimal }>;
}

/**
 * Plans one document's movements on the state, in line order, without changing it: their costs, and the levels and
 * valuations after them. A line that takes a level below zero is short: all of them are named (not just the first)
 * in the 422 insufficient_stock returned. applyPlan makes a plan the state the next document is planned on.
 */
export function planMovements(
  state: StockState,
  movements: readonly Movement[],
  fieldOf: LineField,
): StockPlan | ApiError {
  const levels = new Map<LevelKey, number>();
  const valuations = new Map<string, { quantity: number; averageCost: Decimal }>();
  const level = (key: LevelKey) => levels.get(key) ?? state.levels.get(key)!;
  const valuationOf = (productId: string) => {
    if (!valuations.has(productId)) valuations.set(productId, { ...state.valuations.get(productId)! });
    return valuations.get(productId)!;
  };
  const short: FieldError[] = [];
  const planned: PlannedMovement[] = [];
  for (const move of movements) {
    const valuation = valuationOf(move.productId);
    let unitCost = valuation.averageCost;
    if (move.fromLocationId) {
      const key = levelKey(move.fromLocationId, move.productId);
      const before = level(key);
      if (before < move.quantity) {
        short.push({
          field: fieldOf(move.line),
          code: 'insufficient_stock',
          message: `the location holds ${before} base units of the product at this point of the document; the line takes ${move.quantity}`,
        });
      }
      levels.set(key, before - move.quantity);
    }
    if (move.toLocationId) {
      const key = levelKey(move.toLocationId, move.productId);
      levels.set(key, level(key) + move.quantity);
    }
    if (!move.fromLocationId) {
      // A receipt averages its cost in: (on hand x average + received x cost) / (on hand + received).
      unitCost = move.unitCost === undefined ? valuation.averageCost : new Cost(move.unitCost);
      const total = valuation.quantity + move.quantity;
      valuation.averageCost = valuation.averageCost
        .times(valuation.quantity)
        .plus(unitCost.times(move.quantity))
        .dividedBy(total)
        .toDecimalPlaces(COST_DECIMALS);
      valuation.quantity = total;
    } else if (!move.toLocationId) {
      valuation.quantity -= move.quantity; // an issue carries the average out and leaves it unchanged
    }
    planned.push({
      line: move.line,
      productId: move.productId,
      fromLocationId: move.fromLocationId,
      toLocationId: move.toLocationId,
      quantity: move.quantity,
      unitCost: unitCost.toFixed(COST_DECIMALS),
    });
  }
  if (short.length > 0) {
    return new ApiError(
      'insufficient_stock',
      `${short.length === 1 ? 'A line takes' : `${short.length} lines take`} more stock than the location holds; nothing was posted. errors[] names each line.`,
      short,
    );
  }
  return { movements: planned, levels, valuations };
}

/** The document planned is accepted: its levels and valuations become the state's. */
export function applyPlan(state: StockState, plan: StockPlan): void {
  for (const [key, quantity] of plan.levels) state.levels.set(key, quantity);
  for (const [productId, valuation] of plan.valuations) state.valuations.set(productId, valuation);
}

/**
 * Appends the planned movements of every document given (one statement) and writes the state's levels and
 * valuations (one statement each). Returns each document's movements as written, in the order given.
 */
export async function writeMovements(
  tx: Transaction<DB>,
  organizationId: string,
  state: StockState,
  documents: readonly { document: DocumentRef; planned: readonly PlannedMovement[] }[],
): Promise<PostedMovement[][]> {
  const rows = documents.flatMap(({ document, planned }) =>
    planned.map((m) => ({
      organization_id: organizationId,
      id: newId('smv'),
      document_type: document.type,
      document_id: document.id,
      line_number: m.line,
      product_id: m.productId,
      from_location_id: m.fromLocationId,
      to_location_id: m.toLocationId,
      quantity: m.quantity,
      unit_cost: m.unitCost,
    })),
  );
  // Stryker disable ArrayDeclaration: equivalent; with no rows, what `written` holds is looked up by no movement.
  const written =
    rows.length === 0
      ? []
      : await tx.insertInto('stock_movements').values(rows).returning(['id', 'created_at']).execute();
  // Stryker restore ArrayDeclaration

  const changedLevels = [...state.levels].map(([key, quantity]) => {
    const [locationId, productId] = key.split('|') as [string, string];
    return { location_id: locationId, product_id: productId, quantity };
  });
  // A set of rows from one JSON parameter has no builder form (jsonb_to_recordset); the parameter is bound.
  if (changedLevels.length > 0)
    await sql`
    UPDATE stock_levels AS l SET quantity = x.quantity, updated_at = now()
      FROM jsonb_to_recordset(${JSON.stringify(changedLevels)}::jsonb) AS x(location_id text, product_id text, quantity int)
     WHERE l.organization_id = ${organizationId} AND l.location_id = x.location_id AND l.product_id = x.product_id`.execute(
      tx,
    );
  const changedValuations = [...state.valuations].map(([productId, v]) => ({
    product_id: productId,
    quantity: v.quantity,
    average_cost: v.averageCost.toFixed(COST_DECIMALS),
  }));
  // As above: one statement for the set, the JSON bound.
  if (changedValuations.length > 0)
    await sql`
    UPDATE stock_valuations AS v SET quantity = x.quantity, average_cost = x.average_cost, updated_at = now()
      FROM jsonb_to_recordset(${JSON.stringify(changedValuations)}::jsonb) AS x(product_id text, quantity int, average_cost numeric)
     WHERE v.organization_id = ${organizationId} AND v.product_id = x.product_id`.execute(tx);

  const createdAt = new Map(written.map((row) => [row.id, row.created_at]));
  let next = 0;
  return documents.map(({ planned }) =>
    planned.map((m) => {
      const id = rows[next++]!.id;
      return { ...m, id, createdAt: createdAt.get(id)! };
    }),
  );
}

/** The products' valuations, locked in product order (rows that do not exist yet are created at zero first). */
async function lockValuations(
  tx: Transaction<DB>,
  organizationId: string,
  products: string[],
): Promise<Map<string, { quantity: number; averageCost: Decimal }>> {
  const productIds = [...new Set(products)].sort(compare);
  if (productIds.length === 0) return new Map();
  await tx
    .insertInto('stock_valuations')
    .values(
      productIds.map((productId) => ({
        organization_id: organizationId,
        product_id: productId,
        quantity: 0,
        average_cost: '0',
      })),
    )
    .onConflict((conflict) => conflict.doNothing())
    .execute();
  // Locked in byte order, as `compare` sorts (the builder has no COLLATE).
  const rows = await tx
    .selectFrom('stock_valuations')
    .select(['product_id', 'quantity', 'average_cost'])
    .where('organization_id', '=', organizationId)
    .where('product_id', 'in', productIds)
    .orderBy(sql`product_id COLLATE "C"`)
    .forUpdate()
    .execute();
  return new Map(
    rows.map((row) => [row.product_id, { quantity: row.quantity, averageCost: new Cost(row.average_cost) }]),
  );
}

function checkMovement(move: Movement): void {
  // The documents validate what callers send; these are the ledger's own invariants (a failure here is a bug).
  if (!Number.isSafeInteger(move.quantity) || move.quantity <= 0)
    throw new Error(
      `stock ledger: line ${move.line} moves ${move.quantity}; a movement is a positive whole number of base units`,
    );
  if (move.fromLocationId === null && move.toLocationId === null)
    throw new Error(`stock ledger: line ${move.line} has neither a source nor a destination`);
  if (move.fromLocationId === move.toLocationId)
    throw new Error(`stock ledger: line ${move.line} moves from a location to itself`);
  if (move.unitCost !== undefined && move.fromLocationId !== null)
    throw new Error(`stock ledger: line ${move.line} gives a cost to a removal; removals carry the moving average`);
}

/** Byte order, as Postgres's C collation and the ids (ULIDs) sort: the lock order must be the same everywhere. */
function compare(a: string, b: string): number {
  // Stryker disable next-line EqualityOperator,ConditionalExpression: equivalent on Node; V8's sort tells only a negative answer from the rest, and what is sorted is distinct (a Set, a Map's keys), so neither a == b nor 0 against 1 changes an order.
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What a location holds now, per product (levels above zero), in base units; read without a lock. */
export async function heldAt(db: Kysely<DB>, organizationId: string, locationId: string): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('stock_levels')
    .select(['product_id', 'quantity'])
    .where('organization_id', '=', organizationId)
    .where('location_id', '=', locationId)
    .where('quantity', '>', 0)
    .execute();
  return new Map(rows.map((row) => [row.product_id, row.quantity]));
}
