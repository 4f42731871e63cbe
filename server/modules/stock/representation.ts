// The exact JSON of the stock module's records (spec: components/schemas/StockDocument, StockMovement, StockLevel,
// EmptiesMovement). Quantities are in the product's base unit; `unitCost` only for actors with payments:read.
import type { components } from '../../../generated/api-types.js';
import type { Actor } from '../../platform/access/actor.js';
import { toPostingBlock } from '../postings/blocks.js';

export type StockDocumentBody = components['schemas']['StockDocument'];
export type StockMovementBody = components['schemas']['StockMovement'];
export type StockLevelBody = components['schemas']['StockLevel'];
export type EmptiesMovementBody = components['schemas']['EmptiesMovement'];

/** The scope that unlocks costs (the spec: unitCost on stock movements only with payments:read). */
export const COST_SCOPE = 'payments:read';

/** Empties count in pieces, everything else in bottles. */
export function baseUnitOf(isEmpty: boolean): 'bottle' | 'piece' {
  return isEmpty ? 'piece' : 'bottle';
}

export interface MovementRow {
  id: string;
  document_type: string;
  document_id: string;
  line_number: number;
  product_id: string;
  from_location_id: string | null;
  to_location_id: string | null;
  quantity: number;
  unit_cost: string;
  is_empty: boolean;
  created_at: Date;
  updated_at: Date;
}

export function toStockMovement(row: MovementRow, actor: Actor): StockMovementBody {
  return {
    id: row.id,
    documentType: row.document_type,
    documentId: row.document_id,
    lineNumber: row.line_number,
    productId: row.product_id,
    fromLocationId: row.from_location_id,
    toLocationId: row.to_location_id,
    quantity: row.quantity,
    unit: baseUnitOf(row.is_empty),
    ...(actor.scopes.has(COST_SCOPE)
      ? { unitCost: { amount: row.unit_cost, currency: actor.organization.baseCurrency } }
      : {}),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export interface DocumentRow {
  id: string;
  number: string;
  type: string;
  reason_code: string | null;
  note: string | null;
  trip_id: string | null;
  posting_status: string;
  accounting_ref: string | null;
  accounting_type: string | null;
  posting_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export function toStockDocument(row: DocumentRow, movements: MovementRow[], actor: Actor): StockDocumentBody {
  return {
    id: row.id,
    number: row.number,
    type: row.type as StockDocumentBody['type'],
    reasonCode: row.reason_code,
    note: row.note,
    tripId: row.trip_id,
    movements: movements.map((m) => toStockMovement(m, actor)),
    posting: toPostingBlock(row),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export interface LevelRow {
  location_id: string;
  product_id: string;
  quantity: number;
  is_empty: boolean;
  updated_at: Date;
}

export function toStockLevel(row: LevelRow): StockLevelBody {
  return {
    locationId: row.location_id,
    productId: row.product_id,
    quantity: row.quantity,
    unit: baseUnitOf(row.is_empty),
    updatedAt: row.updated_at.toISOString(),
  };
}

export interface EmptiesRow {
  id: string;
  type: string;
  direction: string;
  product_id: string;
  quantity: number;
  customer_id: string | null;
  trip_id: string | null;
  location_id: string | null;
  stock_movement_id: string | null;
  document_type: string;
  document_id: string;
  line_number: number;
  created_at: Date;
  updated_at: Date;
}

export function toEmptiesMovement(row: EmptiesRow): EmptiesMovementBody {
  return {
    id: row.id,
    type: row.type as EmptiesMovementBody['type'],
    direction: row.direction as EmptiesMovementBody['direction'],
    productId: row.product_id,
    quantity: row.quantity,
    unit: 'piece',
    customerId: row.customer_id,
    tripId: row.trip_id,
    locationId: row.location_id,
    stockMovementId: row.stock_movement_id,
    documentType: row.document_type,
    documentId: row.document_id,
    lineNumber: row.line_number,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
