// Returns (RT) from the DMS, mapped onto this module's processReturn (declared in its manifest's dmsHandlers; written
// with the DMS's kit). A return is never cancelled from the DMS.
import { processReturn } from './documents.js';
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
import type { DocumentHandler } from '../dms/handlers/types.js';

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
    const processed = await processReturn(tx, context.actor, {
      invoiceId,
      returnDate: document.date,
      reason: body.reason ?? `DMS return ${document.number}`,
      locationId: van.id,
      badStockLocationId: badStock?.id ?? null,
      lines: body.lines.map((line) => ({
        productId: products.get(line.productCode)!.id,
        unit: line.unit,
        quantity: line.quantity,
        condition: line.condition,
      })),
      fiscalise: context.fiscalApplies,
    });
    return {
      table: 'returns',
      id: processed.id,
      accounting: processed.creditNoteId ? { type: 'credit_note', id: processed.creditNoteId } : null,
      provides: [waitKeys.stock(van.code)],
    };
  },
};
