// The stock module's own documents: adjustments (a reason code; lines of product, location and a signed quantity or
// a counted quantity) and transfers (from one location to another; lines of product and quantity). Each is posted
// at once, in one transaction, by a posting function (tx, actor, command): the document, its number and its ledger
// movements (ledger.ts), or nothing at all. REST routes, the operator CLI, the sandbox and the DMS handlers call
// these same functions.
import { Decimal } from 'decimal.js';
import type { Transaction } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';
import type { Actor } from '../../platform/access/actor.js';
import { nextDocumentNumber } from '../../domain/documents/numbers.js';
import { refuseClosedPeriod } from '../../domain/periods.js';
import { ApiError, type FieldError } from '../../platform/errors/api-error.js';
import { recordEvent } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';
import {
  NO_ACCOUNTING_CONNECTION,
  queuePostings,
  type InitialBlocks,
  type PostedDocumentRef,
} from '../postings/queue.js';
import { readConnection } from '../../connectors/connections.js';
import { lockLevels, postMovements, type Movement, type PostedMovement } from './ledger.js';
import { planStockEntry, sidesOf } from './posting.js';

export type StockUnit = 'case' | 'bottle' | 'piece';

export interface AdjustmentLine {
  productId: string;
  locationId: string;
  unit: StockUnit;
  /** Signed, not zero: what the line adds (positive) or removes (negative). */
  quantity?: number;
  /** Instead of quantity: what a count found; the line moves the difference from the level. */
  countedQuantity?: number;
  /** Cost of one unit of `unit` for stock the line adds; without it, added stock comes in at the moving average. */
  unitCost?: string;
}

/**
 * The business day a stock document moves stock on (`YYYY-MM-DD`) and the field that gives it: refused with 422
 * period_closed while the books are closed through it (server/domain/periods.ts), as every document that moves stock
 * or money is. REST documents are dated the day they are posted (the whole document, field ''), a DMS document by its
 * documentDate. Without it (a trip's own load, count and return, which the trip's settlement dates; the sandbox's
 * history) no period is checked here.
 */
export interface StockDocumentDate {
  day: string;
  field: string;
}

export interface AdjustmentCommand {
  reasonCode: string;
  date?: StockDocumentDate;
  note?: string | null;
  /** The trip the adjustment belongs to (a van's count at its return); the trips module checks it. */
  tripId?: string | null;
  /** The supplier whose invoice the goods came on (a DMS company invoice, reason SUPPLIER_RECEIPT): posted as its Bill. */
  supplierCode?: string | null;
  lines: AdjustmentLine[];
}

export interface TransferCommand {
  date?: StockDocumentDate;
  fromLocationId: string;
  toLocationId: string;
  note?: string | null;
  /** The trip the transfer belongs to (a van's load, or what goes back at its return); the trips module checks it. */
  tripId?: string | null;
  lines: { productId: string; unit: StockUnit; quantity: number }[];
}

export type StockDocumentType = 'adjustment' | 'transfer' | 'empties_receipt' | 'empties_return' | 'return';

export interface StockDocument {
  id: string;
  number: string;
  type: StockDocumentType;
  reasonCode: string | null;
  note: string | null;
  tripId: string | null;
  movements: PostedMovement[];
  /** Its posting block as it starts: pending when it changes the books and the organisation has an accounting connection. */
  postingStatus: string;
  createdAt: Date;
}

export const STOCK_DOCUMENT = 'stock_document';

/** One event per inventory document, whatever moved (its webhook object is the document with its movements). */
export const STOCK_MOVEMENT_CREATED = 'stock.movement.created';

/** Posts an adjustment: its movements add to or remove from each line's location (counted lines: the difference). */
export async function postStockAdjustment(
  tx: Transaction<DB>,
  actor: Actor,
  command: AdjustmentCommand,
): Promise<StockDocument> {
  const organizationId = actor.organization.id;
  if (command.date) await refuseClosedPeriod(tx, organizationId, command.date.day, command.date.field);
  const { products } = await resolveLines(
    tx,
    organizationId,
    command.lines.map((line) => ({ productId: line.productId, locationIds: [line.locationId] })),
  );
  const problems: FieldError[] = [];
  command.lines.forEach((line, i) => {
    if ((line.quantity === undefined) === (line.countedQuantity === undefined)) {
      problems.push({
        field: `/lines/${i}/quantity`,
        code: 'invalid_field',
        message: 'give either quantity (signed) or countedQuantity, not both',
      });
    } else if (line.quantity !== undefined && (!Number.isSafeInteger(line.quantity) || line.quantity === 0)) {
      problems.push({
        field: `/lines/${i}/quantity`,
        code: 'invalid_field',
        message: 'a whole number of units, not zero: positive adds stock, negative removes it',
      });
    } else if (
      line.countedQuantity !== undefined &&
      (!Number.isSafeInteger(line.countedQuantity) || line.countedQuantity < 0)
    ) {
      problems.push({
        field: `/lines/${i}/countedQuantity`,
        code: 'invalid_field',
        message: 'a whole number of units, 0 or more',
      });
    } else if (line.unitCost !== undefined && line.quantity !== undefined && line.quantity < 0) {
      problems.push({
        field: `/lines/${i}/unitCost`,
        code: 'invalid_field',
        message: 'a removal moves at the moving average cost; leave unitCost out',
      });
    }
  });
  throwIfAny(problems);

  // Counted lines need the level they correct, read under the lock the posting keeps (other lines need no read).
  const counted = command.lines.filter((line) => line.countedQuantity !== undefined);
  const levels =
    counted.length === 0
      ? new Map<string, number>()
      : await lockLevels(
          tx,
          organizationId,
          counted.map((line) => ({ locationId: line.locationId, productId: line.productId })),
        );
  const movements: Movement[] = [];
  command.lines.forEach((line, i) => {
    const perUnit = baseUnitsPer(products.get(line.productId)!, line.unit);
    const change =
      line.quantity !== undefined
        ? line.quantity * perUnit
        : line.countedQuantity! * perUnit - levels.get(`${line.locationId}|${line.productId}`)!;
    if (change === 0) return; // a count that found what the books say moves nothing
    movements.push(
      change > 0
        ? {
            line: i + 1,
            productId: line.productId,
            fromLocationId: null,
            toLocationId: line.locationId,
            quantity: change,
            ...(line.unitCost === undefined ? {} : { unitCost: perBaseUnit(line.unitCost, perUnit) }),
          }
        : {
            line: i + 1,
            productId: line.productId,
            fromLocationId: line.locationId,
            toLocationId: null,
            quantity: -change,
          },
    );
  });
  return postDocument(
    tx,
    organizationId,
    {
      type: 'adjustment',
      prefix: 'ADJ',
      reasonCode: command.reasonCode,
      note: command.note ?? null,
      tripId: command.tripId ?? null,
      businessDate: command.date?.day ?? null,
      supplierCode: command.supplierCode ?? null,
    },
    movements,
    (line) => adjustmentField(command.lines[line - 1]!, line),
  );
}

/** Posts a transfer: every line moves from one location to the other, both sides or neither. */
export async function postStockTransfer(
  tx: Transaction<DB>,
  actor: Actor,
  command: TransferCommand,
): Promise<StockDocument> {
  const organizationId = actor.organization.id;
  if (command.fromLocationId === command.toLocationId) {
    throw new ApiError('business_rule', 'A transfer moves stock between two different locations.', [
      { field: '/toLocationId', code: 'business_rule', message: 'the same location as fromLocationId' },
    ]);
  }
  if (command.date) await refuseClosedPeriod(tx, organizationId, command.date.day, command.date.field);
  const { products } = await resolveLines(
    tx,
    organizationId,
    command.lines.map((line) => ({
      productId: line.productId,
      locationIds: [command.fromLocationId, command.toLocationId],
    })),
    ['/fromLocationId', '/toLocationId'],
  );
  throwIfAny(
    command.lines.flatMap((line, i) =>
      Number.isSafeInteger(line.quantity) && line.quantity > 0
        ? []
        : [
            {
              field: `/lines/${i}/quantity`,
              code: 'invalid_field' as const,
              message: 'a whole number of units, more than 0',
            },
          ],
    ),
  );
  const movements = command.lines.map(
    (line, i): Movement => ({
      line: i + 1,
      productId: line.productId,
      fromLocationId: command.fromLocationId,
      toLocationId: command.toLocationId,
      quantity: line.quantity * baseUnitsPer(products.get(line.productId)!, line.unit),
    }),
  );
  return postDocument(
    tx,
    organizationId,
    {
      type: 'transfer',
      prefix: 'TRF',
      reasonCode: null,
      note: command.note ?? null,
      tripId: command.tripId ?? null,
      businessDate: command.date?.day ?? null,
    },
    movements,
    (line) => `/lines/${line - 1}/quantity`,
  );
}

export interface DocumentHeader {
  type: StockDocumentType;
  /** The number's prefix: ADJ, TRF, ERC, ERT. */
  prefix: string;
  reasonCode: string | null;
  note: string | null;
  tripId: string | null;
  /** The business day it moves stock on, when its caller gives one (the accounting posting's date; else the day it was made). */
  businessDate?: string | null;
  /** The supplier whose invoice the goods came on (an adjustment SUPPLIER_RECEIPT): its posting is that supplier's Bill. */
  supplierCode?: string | null;
}

/** The posting block of a stock document that changes nothing in the books (posting.ts). */
export const NOTHING_TO_BOOK =
  'Nothing to book: it changes no value the accounting system holds (stock moved between booked locations, empties, or at no cost).';

/**
 * Posts one stock document: its movements through the ledger, then `alsoPost` (what else the document moves in the
 * same transaction, such as its empties movements, which name the stock movements), then its number and row, its
 * accounting posting when it changes the books (posting.ts) and its `stock.movement.created` event. Every document
 * type of the module ends here.
 */
export async function postDocument(
  tx: Transaction<DB>,
  organizationId: string,
  header: DocumentHeader,
  movements: Movement[],
  fieldOf: (line: number) => string,
  alsoPost?: (document: { type: typeof STOCK_DOCUMENT; id: string }, posted: PostedMovement[]) => Promise<void>,
): Promise<StockDocument> {
  const id = newId('sdc');
  // The stock first, the number last: every posting takes its locks in the ledger's order (valuations, levels, then
  // customers' empties) and the number's sequence after them, so two documents never wait on each other in a circle.
  const posted =
    movements.length > 0
      ? await postMovements(tx, organizationId, { type: STOCK_DOCUMENT, id }, movements, fieldOf)
      : [];
  await alsoPost?.({ type: STOCK_DOCUMENT, id }, posted);
  const number = await nextDocumentNumber(tx, organizationId, `stock_${header.type}`, header.prefix);
  const blocks = await startPosting(tx, organizationId, header, { type: STOCK_DOCUMENT, id, number }, posted);
  const postingStatus = blocks.posting_status;
  const row = await tx
    .insertInto('stock_documents')
    .values({
      organization_id: organizationId,
      id,
      number,
      type: header.type,
      reason_code: header.reasonCode,
      note: header.note,
      trip_id: header.tripId,
      business_date: header.businessDate ?? null,
      supplier_code: header.supplierCode ?? null,
      posting_status: postingStatus,
      posting_reason: blocks.posting_reason,
    })
    .returning('created_at')
    .executeTakeFirstOrThrow();
  await recordEvent(tx, organizationId, STOCK_MOVEMENT_CREATED, STOCK_DOCUMENT, id);
  return {
    id,
    number,
    type: header.type,
    reasonCode: header.reasonCode,
    note: header.note,
    tripId: header.tripId,
    movements: posted,
    postingStatus,
    createdAt: row.created_at,
  };
}

/**
 * The document's accounting posting, queued when the organisation has an accounting connection and the document
 * changes a value the books hold (posting.ts's plan; empties documents never do: deposits); otherwise its block says
 * why not. An organisation with no connection reads nothing more.
 */
async function startPosting(
  tx: Transaction<DB>,
  organizationId: string,
  header: DocumentHeader,
  document: PostedDocumentRef,
  posted: readonly PostedMovement[],
): Promise<InitialBlocks> {
  const nothing: InitialBlocks = {
    posting_status: 'not_applicable',
    posting_reason: NOTHING_TO_BOOK,
    fiscal_status: null,
  };
  if (posted.length === 0 || header.type === 'empties_receipt' || header.type === 'empties_return') return nothing;
  const connection = await readConnection(tx, organizationId, 'accounting');
  if (!connection?.enabled)
    return { posting_status: 'not_applicable', posting_reason: NO_ACCOUNTING_CONNECTION, fiscal_status: null };
  const { movements, currency } = await sidesOf(tx, organizationId, posted);
  if (
    planStockEntry(
      { type: header.type, reasonCode: header.reasonCode, supplierCode: header.supplierCode ?? null },
      movements,
      currency,
    ) === null
  )
    return nothing;
  return queuePostings(tx, organizationId, document, { fiscal: false });
}

export interface ProductFacts {
  packSize: number;
  tracksStock: boolean;
  isEmpty: boolean;
}

/** The lines' products and locations, each refused by the field that names it when it is not the organisation's. */
export async function resolveLines(
  tx: Transaction<DB>,
  organizationId: string,
  lines: { productId: string; locationIds: string[] }[],
  headerLocationFields?: string[],
): Promise<{ products: Map<string, ProductFacts> }> {
  const facts = await readLineFacts(tx, organizationId, lines);
  checkLines(facts, lines, headerLocationFields);
  return { products: facts.products };
}

/** The products and locations lines name (of one document or of a set of documents), for checkLines. */
export interface LineFacts {
  products: Map<string, ProductFacts>;
  /** Location id -> whether it is active. */
  locations: Map<string, boolean>;
}

export async function readLineFacts(
  tx: Transaction<DB>,
  organizationId: string,
  lines: readonly { productId: string; locationIds: string[] }[],
): Promise<LineFacts> {
  const productIds = [...new Set(lines.map((line) => line.productId))];
  const locationIds = [...new Set(lines.flatMap((line) => line.locationIds))];
  const [productRows, locationRows] = await Promise.all([
    productIds.length === 0
      ? []
      : tx
          .selectFrom('products')
          .select(['id', 'pack_size', 'tracks_stock', 'is_empty'])
          .where('organization_id', '=', organizationId)
          .where('id', 'in', productIds)
          .execute(),
    locationIds.length === 0
      ? []
      : tx
          .selectFrom('locations')
          .select(['id', 'active'])
          .where('organization_id', '=', organizationId)
          .where('id', 'in', locationIds)
          .execute(),
  ]);
  return {
    products: new Map(
      productRows.map((row) => [
        row.id,
        { packSize: row.pack_size, tracksStock: row.tracks_stock, isEmpty: row.is_empty },
      ]),
    ),
    locations: new Map(locationRows.map((row) => [row.id, row.active])),
  };
}

/** Refuses one document's lines whose product or location is not the organisation's (or cannot hold stock). */
export function checkLines(
  facts: LineFacts,
  lines: readonly { productId: string; locationIds: string[] }[],
  headerLocationFields?: string[],
): void {
  const { products, locations } = facts;
  const missingProducts: FieldError[] = [];
  const other: FieldError[] = [];
  lines.forEach((line, i) => {
    const product = products.get(line.productId);
    if (!product)
      missingProducts.push({
        field: `/lines/${i}/productId`,
        code: 'product_not_found',
        message: `there is no product ${line.productId} in this organisation`,
      });
    else if (!product.tracksStock)
      other.push({
        field: `/lines/${i}/productId`,
        code: 'business_rule',
        message: 'the product does not track stock',
      });
  });
  // A transfer's locations are in its header (one field each), an adjustment's on its lines.
  const locationFields = new Map<string, string>(); // field -> location id, each field once
  lines.forEach((line, i) => {
    line.locationIds.forEach((id, j) => {
      locationFields.set(headerLocationFields?.[j] ?? `/lines/${i}/locationId`, id);
    });
  });
  for (const [field, id] of locationFields) {
    const active = locations.get(id);
    if (active === undefined)
      other.push({ field, code: 'location_not_found', message: `there is no location ${id} in this organisation` });
    else if (!active) other.push({ field, code: 'business_rule', message: `location ${id} is inactive` });
  }
  if (missingProducts.length > 0)
    throw new ApiError(
      'product_not_found',
      'A line names a product that is not in this organisation. errors[] names each.',
      [...missingProducts, ...other],
    );
  if (other.length > 0)
    throw new ApiError(
      'business_rule',
      'A line names a location or product that cannot hold stock. errors[] names each.',
      other,
    );
}

/** Base units in one unit: a case holds the product's pack size; a bottle or piece is itself. */
export function baseUnitsPer(product: ProductFacts, unit: StockUnit): number {
  return unit === 'case' ? product.packSize : 1;
}

/** The cost of one base unit from the cost of one `unit` (a case's cost over its pack size), to 6 decimals. */
export function perBaseUnit(unitCost: string, perUnit: number): string {
  return new Decimal(unitCost).dividedBy(perUnit).toDecimalPlaces(6, Decimal.ROUND_HALF_UP).toFixed(6);
}

function adjustmentField(line: AdjustmentLine, number: number): string {
  return `/lines/${number - 1}/${line.quantity === undefined ? 'countedQuantity' : 'quantity'}`;
}

export function throwIfAny(problems: FieldError[]): void {
  if (problems.length > 0)
    throw new ApiError(
      'invalid_field',
      problems.length === 1
        ? `${problems[0]!.field.slice(1)}: ${problems[0]!.message}.`
        : 'Several lines are invalid; errors[] names each.',
      problems,
    );
}
