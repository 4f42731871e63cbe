// CS invoices from the DMS, mapped onto this module's createInvoices (declared with the invoice document type in its
// manifest; written with the DMS's kit): a van day's first versions posted as one set; a cancelled version voids the
// invoice through the same function as the REST route, after the same question to the accounting system. The mapping
// itself is pure (saleInvoiceToCommand); the handler reads what it needs, checks, and posts.
import { createInvoices, voidInvoice, type CreateInvoiceCommand } from './documents.js';
import { checkTotals, type BodyOf } from '../dms/canonical.js';
import { ApiError } from '../../platform/errors/api-error.js';
import type { Tx } from '../../platform/database/transaction.js';
import { DmsRejection, DmsWait, waitKeys } from '../dms/reasons.js';
import { customersByCode, readProductsByCode, requireCustomer, requireProducts } from '../dms/handlers/lookup.js';
import { requireAccounts, requireStockProducts } from '../dms/handlers/setup.js';
import { asStockWait, vanDayOf } from '../dms/handlers/van-day.js';
import type { Applied, CanonicalDocument, DmsContext, DocumentHandler, LoadedDocument } from '../dms/handlers/types.js';
import { askAccountingSystem, refuseOtherChange } from '../dms/handlers/versions.js';

export const saleInvoice: DocumentHandler = {
  prepare: (runner, context, document) => askAccountingSystem(runner, context, document, 'Voided'),
  async apply(tx, context, document) {
    if (document.previous) {
      refuseOtherChange(document, 'Invoice');
      await voidInvoice(tx, context.actor, document.previous.mikonoId!, `Cancelled in the DMS (${document.number})`);
      return { table: 'invoices', id: document.previous.mikonoId! };
    }
    const [outcome] = await postSaleInvoices(tx, context, [document]);
    if (outcome instanceof Error) throw outcome;
    return outcome as Applied;
  },
  setKey: (document) => {
    const body = document.document.body as BodyOf<'DmsSaleInvoiceDocument'>;
    return `${document.connectionId}|${body.routeCode}|${document.date}|${document.document.salesmanCode ?? ''}`;
  },
  applyMany: (tx, context, documents) => postSaleInvoices(tx, context, documents),
};

/**
 * First versions of CS invoices of one van day, posted as one set by the invoices module's createInvoices (the
 * function REST's single invoice goes through too): the codes they name are read once, each is checked (R04 with the
 * service's tax; the fiscal rule is createInvoices', asked for with refuseUnfiscalisable) and refused alone, and the
 * accepted ones are written together. Each outcome is what posting the document alone gives: what it posted, or the
 * refusal or wait it would have thrown.
 */
async function postSaleInvoices(
  tx: Tx,
  context: DmsContext,
  documents: readonly LoadedDocument[],
): Promise<(Applied | Error)[]> {
  const organizationId = context.actor.organization.id;
  const bodies = documents.map((document) => document.document.body as BodyOf<'DmsSaleInvoiceDocument'>);
  const customers = await customersByCode(
    tx,
    organizationId,
    bodies.map((body) => body.customerCode!),
  );
  const products = await readProductsByCode(
    tx,
    organizationId,
    bodies.flatMap((body) => body.lines.map((line) => line.productCode)),
  );
  const outcomes: (Applied | Error)[] = [];
  const commands: { index: number; vanCode: string; command: CreateInvoiceCommand }[] = [];
  for (const [i, document] of documents.entries()) {
    const body = bodies[i]!;
    try {
      const customer = requireCustomer(customers, body.customerCode!);
      requireProducts(
        products,
        body.lines.map((line) => line.productCode),
      );
      // R04 with the service's tax: each line at its product's rate (a free issue carries no tax).
      checkTotals(
        body.lines.map((line) => ({ ...line, taxRate: line.free ? '0' : products.get(line.productCode)!.tax_rate })),
        body.totals,
        body.currency,
        true,
      );
      requireStockProducts(
        document,
        products,
        body.lines.map((line) => line.productCode),
      );
      // The sale lands on the sales account, what is paid at once on the cash account, a free issue or a discount on
      // the promotions expense account (setup.ts: only with an accounting connection).
      await requireAccounts(tx, context, document, {
        sales: true,
        cash: body.payment.method !== 'credit',
        promotions: body.lines.some(
          (line) => line.free === true || (line.discount !== undefined && Number(line.discount) > 0),
        ),
      });
      const { van, salespersonId } = await vanDayOf(tx, context, document, body.routeCode);
      commands.push({
        index: i,
        vanCode: van.code,
        command: saleInvoiceToCommand(document, {
          customerId: customer.id,
          products,
          vanId: van.id,
          salespersonId,
          fiscalApplies: context.fiscalApplies,
        }),
      });
    } catch (error) {
      if (!(error instanceof DmsRejection) && !(error instanceof DmsWait)) throw error;
      outcomes[i] = error;
    }
  }
  const posted = await createInvoices(
    tx,
    context.actor,
    commands.map((entry) => entry.command),
  );
  posted.forEach((invoice, j) => {
    const { index, vanCode } = commands[j]!;
    outcomes[index] =
      invoice instanceof ApiError
        ? (asStockWait(invoice, vanCode) as Error)
        : {
            table: 'invoices',
            id: invoice.id,
            accounting: { type: 'invoice', id: invoice.id },
            provides: [waitKeys.invoice(documents[index]!.number)],
          };
  });
  return outcomes;
}

/** What a CS invoice's mapping needs besides the document: the ids its handler looked up (codes, the van day). */
export interface SaleInvoiceLookups {
  customerId: string;
  /** Product code -> the product (every code the lines name). */
  products: ReadonlyMap<string, { id: string }>;
  /** The van of the route's day, which the goods leave, and the day's salesperson. */
  vanId: string;
  salespersonId: string;
  /** The organisation is connected to the fiscal system and the connection's fiscalise switch is on. */
  fiscalApplies: boolean;
}

/** A CS invoice as createInvoices' command (pure: the refusals were made by the handler while it looked the ids up). */
export function saleInvoiceToCommand(document: CanonicalDocument, lookups: SaleInvoiceLookups): CreateInvoiceCommand {
  const body = document.document.body as BodyOf<'DmsSaleInvoiceDocument'>;
  return {
    customerId: lookups.customerId,
    locationId: lookups.vanId,
    issueDate: document.date,
    currency: body.currency,
    salespersonId: lookups.salespersonId,
    externalCodes: { dms: document.number },
    lines: body.lines.map((line) => ({
      kind: line.free ? ('free' as const) : ('sale' as const),
      productId: lookups.products.get(line.productCode)!.id,
      unit: line.unit,
      quantity: line.quantity,
      unitPrice: line.unitPrice,
      ...(line.discount !== undefined ? { discount: line.discount } : {}),
    })),
    payment:
      body.payment.method === 'credit'
        ? null
        : { method: body.payment.method, reference: body.payment.reference ?? null },
    // While fiscalisation applies, what the fiscal system cannot record is refused up front (the spec's DMS rule).
    fiscalise: lookups.fiscalApplies,
    refuseUnfiscalisable: lookups.fiscalApplies,
  };
}
