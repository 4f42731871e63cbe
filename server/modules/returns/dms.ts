// Returns (RT) from the DMS, mapped onto this module's processReturn (declared with the return document type in its
// manifest; written with the DMS's kit). A return is never cancelled from the DMS. The mapping is pure
// (returnToCommand).
import { processReturn, type ProcessReturnCommand } from './documents.js';
import type { BodyOf } from '../dms/canonical.js';
import { DmsRejection, waitKeys } from '../dms/reasons.js';
import {
  badStockOfVan,
  customerByCode,
  invoiceByNumber,
  productsByCode,
  routeByCode,
  salespersonByCode,
  vanOfRoute,
} from '../dms/handlers/lookup.js';
import { requireAccounts, requireLinkedSalesman, requireStockProducts } from '../dms/handlers/setup.js';
import type { CanonicalDocument, DocumentHandler } from '../dms/handlers/types.js';

export const saleReturn: DocumentHandler = {
  async apply(tx, context, document) {
    if (document.previous)
      throw new DmsRejection(
        'R09',
        `Return ${document.number} is posted; a return cannot be cancelled from the DMS. Sell the goods again on a new invoice.`,
      );
    const organizationId = context.actor.organization.id;
    const body = document.document.body as BodyOf<'DmsSaleReturnDocument'>;
    const customer = await customerByCode(tx, organizationId, body.customerCode!);
    const invoiceId = await invoiceByNumber(tx, organizationId, body.invoiceNumber);
    const invoice = await tx
      .selectFrom('invoices')
      .select(['customer_id'])
      .where('organization_id', '=', organizationId)
      .where('id', '=', invoiceId)
      .executeTakeFirstOrThrow();
    if (invoice.customer_id !== customer.id)
      throw new DmsRejection('R09', `Invoice ${body.invoiceNumber} is not customer ${body.customerCode}'s.`);
    const products = await productsByCode(
      tx,
      organizationId,
      body.lines.map((line) => line.productCode),
    );
    const route = await routeByCode(tx, organizationId, body.routeCode);
    const van = await vanOfRoute(tx, organizationId, route);
    const badStock = body.lines.some((line) => line.condition === 'damaged')
      ? await badStockOfVan(tx, organizationId, van)
      : null;
    await requireLinkedSalesman(
      tx,
      document,
      (await salespersonByCode(tx, organizationId, document.document.salesmanCode)) ?? route.salesperson_id,
    );
    requireStockProducts(
      document,
      products,
      body.lines.map((line) => line.productCode),
    );
    // Its credit note lands on the sales and cash accounts, as a credit note from the DMS does.
    await requireAccounts(tx, context, document, { sales: true, cash: true });
    const processed = await processReturn(
      tx,
      context.actor,
      returnToCommand(document, {
        invoiceId,
        products,
        vanId: van.id,
        badStockId: badStock?.id ?? null,
        fiscalApplies: context.fiscalApplies,
      }),
    );
    return {
      table: 'returns',
      id: processed.id,
      accounting: processed.creditNoteId ? { type: 'credit_note', id: processed.creditNoteId } : null,
      provides: [waitKeys.stock(van.code)],
    };
  },
};

/** What a return's mapping needs besides the document: the ids its handler looked up. */
export interface ReturnLookups {
  /** The invoice the goods were sold on (the customer's: the handler checked). */
  invoiceId: string;
  /** Product code -> the product (every code the lines name). */
  products: ReadonlyMap<string, { id: string }>;
  /** The route's van, which takes the goods back, and its bad stock location (null: no line is damaged). */
  vanId: string;
  badStockId: string | null;
  fiscalApplies: boolean;
}

/** A DMS return as processReturn's command (pure). */
export function returnToCommand(document: CanonicalDocument, lookups: ReturnLookups): ProcessReturnCommand {
  const body = document.document.body as BodyOf<'DmsSaleReturnDocument'>;
  return {
    invoiceId: lookups.invoiceId,
    returnDate: document.date,
    reason: body.reason ?? `DMS return ${document.number}`,
    locationId: lookups.vanId,
    badStockLocationId: lookups.badStockId,
    lines: body.lines.map((line) => ({
      productId: lookups.products.get(line.productCode)!.id,
      unit: line.unit,
      quantity: line.quantity,
      condition: line.condition,
    })),
    fiscalise: lookups.fiscalApplies,
  };
}
