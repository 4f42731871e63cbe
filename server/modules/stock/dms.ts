// Stock documents from the DMS, mapped onto this module's posting functions (declared with the stock document type in
// its manifest; written with the DMS's kit): van replenishment (VR: main warehouse -> van), van stock out (VU: van ->
// main warehouse, or its bad stock -> damages), stock adjustment (IJ), company invoice (a supplier's goods received at
// their invoiced cost when received and invoiced quantities agree; otherwise R09). A flag follows the stock
// document's accounting posting when it has one, as an invoice's does. Each mapping is pure (…ToCommand, below the
// handlers): the handler looks the codes up, checks, and posts.
import { postStockAdjustment, postStockTransfer, type AdjustmentCommand, type TransferCommand } from './documents.js';
import type { BodyOf } from '../dms/canonical.js';
import { DmsRejection, waitKeys } from '../dms/reasons.js';
import {
  badStockOfVan,
  damagesLocation,
  locationByCode,
  mainWarehouse,
  productsByCode,
  reasonByCode,
  routeByCode,
  salespersonByCode,
  vanOfRoute,
} from '../dms/handlers/lookup.js';
import { requireLinkedSalesman, requireStockProducts, requireVendor } from '../dms/handlers/setup.js';
import type { Tx } from '../../platform/database/transaction.js';
import { openVanDayOf, stockWait } from '../dms/handlers/van-day.js';
import type { CanonicalDocument, DocumentHandler, LoadedDocument } from '../dms/handlers/types.js';

/** Stock documents are not withdrawn from the DMS: a later version is refused and a counter-document is the way. */
function refuseNewVersion(document: LoadedDocument, what: string): void {
  if (document.previous)
    throw new DmsRejection(
      'R09',
      `${what} ${document.number} is posted; stock documents cannot be cancelled or changed from the DMS. Post a counter-document (a stock adjustment or a transfer back).`,
    );
}

/** A van's stock document belongs to its salesman (the document's, else the route's), who must be a member. */
async function requireVanSalesman(
  tx: Tx,
  document: LoadedDocument,
  route: { salesperson_id: string | null },
): Promise<void> {
  await requireLinkedSalesman(
    tx,
    document,
    (await salespersonByCode(tx, document.organizationId, document.document.salesmanCode)) ?? route.salesperson_id,
  );
}

/**
 * The stock document whose accounting posting the flag follows (0032): a JournalEntry or a Bill when the document
 * changes the stock value in the books (server/modules/stock/posting.ts), held `received` while that posting is
 * pending; a document that books nothing (a van's load) has no posting and is posted at once.
 */
const stockPosting = (id: string) => ({ type: 'stock_document' as const, id });

/** A stock document moves stock on its documentDate: refused (R06, In the service) while the books are closed through it. */
const documentDate = (document: CanonicalDocument) =>
  document.date ? { day: document.date, field: '/documentDate' } : undefined;

export const vanReplenishment: DocumentHandler = {
  async apply(tx, context, document) {
    refuseNewVersion(document, 'Van replenishment');
    const org = context.actor.organization.id;
    const body = document.document.body as BodyOf<'DmsVanReplenishmentDocument'>;
    const route = await routeByCode(tx, org, body.routeCode);
    const van = await vanOfRoute(tx, org, route);
    const warehouse = await mainWarehouse(tx, org, body.fromLocationCode);
    const products = await productsByCode(
      tx,
      org,
      body.lines.map((line) => line.productCode),
    );
    await requireVanSalesman(tx, document, route);
    requireStockProducts(
      document,
      products,
      body.lines.map((line) => line.productCode),
    );
    // A load of the van's DMS day when one is open; else the day adopts it when it opens (trips' dmsDayTrip).
    const tripId = await openVanDayOf(tx, org, van.id);
    const moved = await postStockTransfer(
      tx,
      context.actor,
      vanReplenishmentToCommand(document, { warehouseId: warehouse.id, vanId: van.id, tripId, products }),
    ).catch((error: unknown) => stockWait(error, warehouse.code));
    return {
      table: 'stock_documents',
      id: moved.id,
      accounting: stockPosting(moved.id),
      provides: [waitKeys.stock(van.code)],
    };
  },
};

export const vanStockOut: DocumentHandler = {
  async apply(tx, context, document) {
    refuseNewVersion(document, 'Van stock out');
    const org = context.actor.organization.id;
    const body = document.document.body as BodyOf<'DmsVanStockOutDocument'>;
    if (body.reasonCode) await reasonByCode(tx, org, body.reasonCode, 'stock');
    const route = await routeByCode(tx, org, body.routeCode);
    const van = await vanOfRoute(tx, org, route);
    const from = body.destination === 'damages' ? await badStockOfVan(tx, org, van) : van;
    const to =
      body.destination === 'damages'
        ? await damagesLocation(tx, org, body.locationCode)
        : await mainWarehouse(tx, org, body.locationCode);
    const products = await productsByCode(
      tx,
      org,
      body.lines.map((line) => line.productCode),
    );
    await requireVanSalesman(tx, document, route);
    requireStockProducts(
      document,
      products,
      body.lines.map((line) => line.productCode),
    );
    const moved = await postStockTransfer(
      tx,
      context.actor,
      vanStockOutToCommand(document, { fromId: from.id, toId: to.id, products }),
    ).catch((error: unknown) => stockWait(error, from.code));
    return {
      table: 'stock_documents',
      id: moved.id,
      accounting: stockPosting(moved.id),
      provides: [waitKeys.stock(to.code)],
    };
  },
};

export const stockAdjustment: DocumentHandler = {
  async apply(tx, context, document) {
    refuseNewVersion(document, 'Stock adjustment');
    const org = context.actor.organization.id;
    const body = document.document.body as BodyOf<'DmsStockAdjustmentDocument'>;
    const reason = await reasonByCode(tx, org, body.reasonCode, 'stock');
    const location = await locationByCode(tx, org, body.locationCode);
    const products = await productsByCode(
      tx,
      org,
      body.lines.map((line) => line.productCode),
    );
    requireStockProducts(
      document,
      products,
      body.lines.map((line) => line.productCode),
    );
    const posted = await postStockAdjustment(
      tx,
      context.actor,
      stockAdjustmentToCommand(document, { reason, locationId: location.id, products }),
    ).catch((error: unknown) => stockWait(error, location.code));
    return {
      table: 'stock_documents',
      id: posted.id,
      accounting: stockPosting(posted.id),
      provides: body.lines.some((line) => line.quantity > 0) ? [waitKeys.stock(location.code)] : [],
    };
  },
};

export const companyInvoice: DocumentHandler = {
  async apply(tx, context, document) {
    refuseNewVersion(document, 'Company invoice');
    const org = context.actor.organization.id;
    const body = document.document.body as BodyOf<'DmsCompanyInvoiceDocument'>;
    if (body.currency !== context.actor.organization.baseCurrency) {
      throw new DmsRejection(
        'R09',
        `Company invoices are in the organisation's base currency ${context.actor.organization.baseCurrency}; this one is in ${body.currency}.`,
      );
    }
    const disagree = body.lines.flatMap((line, i) =>
      line.receivedQuantity === line.invoicedQuantity
        ? []
        : [`line ${i + 1} (${line.productCode}): invoiced ${line.invoicedQuantity}, received ${line.receivedQuantity}`],
    );
    if (disagree.length > 0) {
      throw new DmsRejection(
        'R09',
        `Received and invoiced quantities do not agree, so neither the bill nor the goods are posted: ${disagree.join('; ')}. Settle the difference with the supplier and send the invoice again with a new number.`,
      );
    }
    const location = await locationByCode(tx, org, body.locationCode);
    const products = await productsByCode(
      tx,
      org,
      body.lines.map((line) => line.productCode),
    );
    requireStockProducts(
      document,
      products,
      body.lines.map((line) => line.productCode),
    );
    await requireVendor(tx, context, document, body.supplierCode);
    const received = await postStockAdjustment(
      tx,
      context.actor,
      companyInvoiceToCommand(document, { locationId: location.id, products }),
    );
    return {
      table: 'stock_documents',
      id: received.id,
      accounting: stockPosting(received.id),
      provides: [waitKeys.stock(location.code)],
    };
  },
};

/** Product code -> the product (every code a document's lines name), as each stock mapping reads it. */
type ProductsByCode = ReadonlyMap<string, { id: string }>;

/** A van replenishment (VR) as postStockTransfer's command: the warehouse to the van, a load of its open day (pure). */
export function vanReplenishmentToCommand(
  document: CanonicalDocument,
  lookups: { warehouseId: string; vanId: string; tripId: string | null; products: ProductsByCode },
): TransferCommand {
  const body = document.document.body as BodyOf<'DmsVanReplenishmentDocument'>;
  return {
    date: documentDate(document),
    fromLocationId: lookups.warehouseId,
    toLocationId: lookups.vanId,
    tripId: lookups.tripId,
    note: `DMS van replenishment ${document.number}`,
    lines: body.lines.map((line) => ({
      productId: lookups.products.get(line.productCode)!.id,
      unit: line.unit,
      quantity: line.quantity,
    })),
  };
}

/** A van stock out (VU) as postStockTransfer's command: from the van (or its bad stock) to where it goes (pure). */
export function vanStockOutToCommand(
  document: CanonicalDocument,
  lookups: { fromId: string; toId: string; products: ProductsByCode },
): TransferCommand {
  const body = document.document.body as BodyOf<'DmsVanStockOutDocument'>;
  return {
    date: documentDate(document),
    fromLocationId: lookups.fromId,
    toLocationId: lookups.toId,
    note: `DMS van stock out ${document.number}${body.reasonCode ? ` (${body.reasonCode})` : ''}`,
    lines: body.lines.map((line) => ({
      productId: lookups.products.get(line.productCode)!.id,
      unit: line.unit,
      quantity: line.quantity,
    })),
  };
}

/** A stock adjustment (IJ) as postStockAdjustment's command; a unit cost counts only on a line that adds (pure). */
export function stockAdjustmentToCommand(
  document: CanonicalDocument,
  lookups: { reason: { code: string; description: string }; locationId: string; products: ProductsByCode },
): AdjustmentCommand {
  const body = document.document.body as BodyOf<'DmsStockAdjustmentDocument'>;
  return {
    date: documentDate(document),
    reasonCode: lookups.reason.code,
    note: `DMS stock adjustment ${document.number}: ${lookups.reason.description}`,
    lines: body.lines.map((line) => ({
      productId: lookups.products.get(line.productCode)!.id,
      locationId: lookups.locationId,
      unit: line.unit,
      quantity: line.quantity,
      ...(line.unitCost !== undefined && line.quantity > 0 ? { unitCost: line.unitCost } : {}),
    })),
  };
}

/** A company invoice as postStockAdjustment's command: the supplier's goods received at their invoiced cost (pure). */
export function companyInvoiceToCommand(
  document: CanonicalDocument,
  lookups: { locationId: string; products: ProductsByCode },
): AdjustmentCommand {
  const body = document.document.body as BodyOf<'DmsCompanyInvoiceDocument'>;
  return {
    date: documentDate(document),
    reasonCode: 'SUPPLIER_RECEIPT',
    supplierCode: body.supplierCode,
    note: `DMS company invoice ${document.number} from supplier ${body.supplierCode}`,
    lines: body.lines.map((line) => ({
      productId: lookups.products.get(line.productCode)!.id,
      locationId: lookups.locationId,
      unit: line.unit,
      quantity: line.receivedQuantity,
      unitCost: line.unitCost,
    })),
  };
}
