// A stock document as the accounting system takes it (its posting subject). The books hold the stock of every location
// except the damages stores at its moving average cost (QuickBooks' `Inventory Asset`), so a document is posted when
// it changes that value, and not otherwise (a van's load, a transfer between warehouses, empties at their deposit):
// - an adjustment: a JournalEntry at cost between Inventory Asset and the adjustment's account (`Opening Balance
//   Equity` for OPENING stock, `Inventory Shrinkage` for a count, a loss or a gain); lines at a damages store move
//   nothing there. QuickBooks' InventoryAdjustment moves quantities only and is US-only, so the value goes as a journal;
// - goods received on a supplier's invoice (a DMS company invoice: an adjustment SUPPLIER_RECEIPT naming its supplier):
//   a Bill to the supplier's vendor (`admin accounts set --vendor CODE=NAME`), item lines at the received cost, which
//   QuickBooks books to Inventory Asset and Accounts Payable;
// - a transfer into a damages store (bad stock given up) is written off: `Damaged stock written off` against Inventory
//   Asset; a transfer back out of damages books it again;
// - a customer's return into a damages store: the return's credit memo brought the goods back into Inventory Asset,
//   so they are written off the same way (a return into good stock changes nothing more).
// The plan is one pure function of the document's movements (planStockEntry): postDocument asks it whether to queue a
// posting at all, and the posting job builds the call from it.
import { Decimal } from 'decimal.js';
import { sql } from 'kysely';
import type { Tx } from '../../platform/database/transaction.js';
import { getAccounts } from '../../platform/access/accounts.js';
import { localTimeIn } from '../../platform/clock.js';
import { roundToCurrency } from '../../domain/money.js';
import type { AccountingBill, AccountingJournalEntry, AccountingLine } from '../../connectors/types.js';
import type { PostingBlock, PostingSubject } from '../../connectors/subjects.js';

/** The accounts a stock journal names (as QuickBooks spells its defaults). */
export const STOCK_ACCOUNTS = {
  inventory: 'Inventory Asset',
  shrinkage: 'Inventory Shrinkage',
  opening: 'Opening Balance Equity',
  damages: 'Damaged stock written off',
} as const;

/** documents.ts's STOCK_DOCUMENT (that file imports this one). */
export const STOCK_DOCUMENT_POSTED = 'stock_document';

/** Where a movement's end lies for the books: stock they hold, a damages store (written off), or outside (null). */
export type BookSide = 'booked' | 'damages' | null;

export interface ValuedMovement {
  productId: string;
  /** For the Bill's lines; any text for the decision alone. */
  productName: string;
  from: BookSide;
  to: BookSide;
  /** Base units. */
  quantity: number;
  /** Cost of one base unit as it moved. */
  unitCost: string;
}

export interface StockHeader {
  type: string;
  reasonCode: string | null;
  supplierCode: string | null;
}

export type StockEntryPlan =
  | { kind: 'bill'; supplierCode: string; lines: AccountingLine[]; total: string }
  | { kind: 'journal'; lines: AccountingJournalEntry['lines'] };

/** What the document changes in the books, or null when nothing (amounts in the currency's minor units). */
export function planStockEntry(
  header: StockHeader,
  movements: readonly ValuedMovement[],
  currency: string,
): StockEntryPlan | null {
  const round = (value: Decimal.Value) => roundToCurrency(value, currency);
  if (header.type === 'adjustment' && header.reasonCode === 'SUPPLIER_RECEIPT' && header.supplierCode) {
    const lines = movements
      .filter((m) => m.from === null && m.to !== null)
      .map(
        (m): AccountingLine => ({
          itemId: m.productId,
          description: m.productName,
          quantity: String(m.quantity),
          unitPrice: m.unitCost,
          amount: round(new Decimal(m.unitCost).times(m.quantity)),
          taxAmount: round(0),
        }),
      );
    const total = lines.reduce((sum, line) => sum.plus(line.amount), new Decimal(0));
    return lines.length === 0 || total.isZero()
      ? null
      : { kind: 'bill', supplierCode: header.supplierCode, lines, total: round(total) };
  }
  // Value moved from one account to another: debit <- credit, summed exactly, rounded once per pair (so debits and
  // credits agree to the unit).
  const pairs = new Map<string, { debit: string; credit: string; amount: Decimal; what: string }>();
  const move = (debit: string, credit: string, value: Decimal, what: string) => {
    const key = `${debit}|${credit}`;
    const pair = pairs.get(key) ?? { debit, credit, amount: new Decimal(0), what };
    pair.amount = pair.amount.plus(value);
    pairs.set(key, pair);
  };
  const counter = header.reasonCode === 'OPENING' ? STOCK_ACCOUNTS.opening : STOCK_ACCOUNTS.shrinkage;
  for (const m of movements) {
    const value = new Decimal(m.unitCost).times(m.quantity);
    if (header.type === 'adjustment') {
      if (m.to === 'booked' && m.from === null) move(STOCK_ACCOUNTS.inventory, counter, value, 'stock added');
      if (m.from === 'booked' && m.to === null) move(counter, STOCK_ACCOUNTS.inventory, value, 'stock removed');
    } else if (header.type === 'transfer') {
      if (m.from === 'booked' && m.to === 'damages')
        move(STOCK_ACCOUNTS.damages, STOCK_ACCOUNTS.inventory, value, 'moved to damages');
      if (m.from === 'damages' && m.to === 'booked')
        move(STOCK_ACCOUNTS.inventory, STOCK_ACCOUNTS.damages, value, 'taken back from damages');
    } else if (header.type === 'return') {
      if (m.from === null && m.to === 'damages')
        move(STOCK_ACCOUNTS.damages, STOCK_ACCOUNTS.inventory, value, 'returned into damages');
    }
  }
  const lines: AccountingJournalEntry['lines'] = [];
  for (const pair of pairs.values()) {
    const amount = round(pair.amount);
    if (new Decimal(amount).isZero()) continue;
    lines.push(
      { account: pair.debit, side: 'debit', amount, description: pair.what },
      { account: pair.credit, side: 'credit', amount, description: pair.what },
    );
  }
  return lines.length === 0 ? null : { kind: 'journal', lines };
}

const sideOf = (kind: string | null, id: string | null): BookSide =>
  id === null ? null : kind === 'damages' ? 'damages' : 'booked';

/** A document's movements as the plan takes them (with their locations' kinds and products' names). */
export async function valuedMovements(
  tx: Tx,
  organizationId: string,
  documentType: string,
  documentId: string,
): Promise<ValuedMovement[]> {
  const rows = await tx
    .selectFrom('stock_movements as m')
    .innerJoin('products as p', (join) =>
      join.onRef('p.organization_id', '=', 'm.organization_id').onRef('p.id', '=', 'm.product_id'),
    )
    .leftJoin('locations as f', (join) =>
      join.onRef('f.organization_id', '=', 'm.organization_id').onRef('f.id', '=', 'm.from_location_id'),
    )
    .leftJoin('locations as t', (join) =>
      join.onRef('t.organization_id', '=', 'm.organization_id').onRef('t.id', '=', 'm.to_location_id'),
    )
    .select([
      'm.product_id',
      'p.name',
      'm.from_location_id',
      'm.to_location_id',
      'f.kind as from_kind',
      't.kind as to_kind',
      'm.quantity',
      'm.unit_cost',
    ])
    .where('m.organization_id', '=', organizationId)
    .where('m.document_type', '=', documentType)
    .where('m.document_id', '=', documentId)
    .orderBy('m.line_number')
    .orderBy('m.id')
    .execute();
  return rows.map((row) => ({
    productId: row.product_id,
    productName: row.name,
    from: sideOf(row.from_kind, row.from_location_id),
    to: sideOf(row.to_kind, row.to_location_id),
    quantity: row.quantity,
    unitCost: String(row.unit_cost),
  }));
}

/**
 * Movements just posted as the plan takes them, with the organisation's currency, in one read (the kinds of the
 * locations they name): what postDocument needs to decide whether to queue a posting.
 */
export async function sidesOf(
  tx: Tx,
  organizationId: string,
  movements: readonly {
    productId: string;
    fromLocationId: string | null;
    toLocationId: string | null;
    quantity: number;
    unitCost: string;
  }[],
): Promise<{ movements: ValuedMovement[]; currency: string }> {
  const ids = [
    ...new Set(movements.flatMap((m) => [m.fromLocationId, m.toLocationId]).filter((id): id is string => id !== null)),
  ];
  const rows = await tx
    .selectFrom('organizations as o')
    .leftJoin('locations as l', (join) =>
      join.onRef('l.organization_id', '=', 'o.id').on('l.id', 'in', ids.length === 0 ? [''] : ids),
    )
    .select(['o.base_currency', 'l.id', 'l.kind'])
    .where('o.id', '=', organizationId)
    .execute();
  const kinds = new Map(rows.flatMap((row) => (row.id === null ? [] : [[row.id, row.kind] as const])));
  return {
    currency: rows[0]!.base_currency,
    movements: movements.map((m) => ({
      productId: m.productId,
      productName: '',
      from: sideOf(kinds.get(m.fromLocationId ?? '') ?? null, m.fromLocationId),
      to: sideOf(kinds.get(m.toLocationId ?? '') ?? null, m.toLocationId),
      quantity: m.quantity,
      unitCost: m.unitCost,
    })),
  };
}

export const stockDocumentPosting: PostingSubject = {
  async accounting(tx, organizationId, id) {
    const row = await tx
      .selectFrom('stock_documents as d')
      .innerJoin('organizations as o', 'o.id', 'd.organization_id')
      .select([
        'd.number',
        'd.type',
        'd.reason_code',
        'd.supplier_code',
        'd.note',
        'd.created_at',
        'o.base_currency',
        'o.time_zone',
      ])
      // The business date as its calendar string: pg would make a DATE a Date at local midnight.
      .select(sql<string | null>`to_char(d.business_date, 'YYYY-MM-DD')`.as('business_day'))
      .where('d.organization_id', '=', organizationId)
      .where('d.id', '=', id)
      .executeTakeFirstOrThrow();
    const plan = planStockEntry(
      { type: row.type, reasonCode: row.reason_code, supplierCode: row.supplier_code },
      await valuedMovements(tx, organizationId, STOCK_DOCUMENT_POSTED, id),
      row.base_currency,
    );
    if (!plan) return { kind: 'skip', reason: 'Nothing to book: it changes no value the accounting system holds.' };
    const txnDate = row.business_day ?? localTimeIn(row.created_at, row.time_zone).date;
    if (plan.kind === 'bill') {
      const vendor = (await getAccounts(tx, organizationId)).vendors[plan.supplierCode];
      if (!vendor) {
        const message = `Supplier ${plan.supplierCode} has no vendor mapped in the accounting system: map it with \`admin accounts set --vendor "${plan.supplierCode}=VENDOR NAME"\`, then retry the posting.`;
        return { kind: 'fail', reason: message };
      }
      const bill: AccountingBill = {
        docNumber: row.number,
        txnDate,
        currency: row.base_currency,
        supplier: { id: vendor, name: vendor },
        lines: plan.lines,
        total: plan.total,
      };
      return { kind: 'call', call: (connector, requestId) => connector.postBill(requestId, bill) };
    }
    const entry: AccountingJournalEntry = {
      docNumber: row.number,
      txnDate,
      currency: row.base_currency,
      description:
        `Stock ${row.type} ${row.number}${row.reason_code ? ` (${row.reason_code})` : ''}${row.note ? `: ${row.note}` : ''}`.slice(
          0,
          4000,
        ),
      lines: plan.lines.map((line) => ({ ...line, description: `${row.number}: ${line.description}` })),
    };
    return { kind: 'call', call: (connector, requestId) => connector.postJournalEntry(requestId, entry) };
  },

  async setPosting(tx, organizationId, id, block: PostingBlock) {
    // No event of its own: stock.movement.created is the document's one event; its updatedAt moves with the block.
    await tx
      .updateTable('stock_documents')
      .set((eb) => ({
        posting_status: block.status,
        accounting_ref: block.accountingRef,
        accounting_type: block.accountingType,
        posting_reason: block.reason,
        updated_at: eb.fn<Date>('now'),
      }))
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .execute();
  },
};
