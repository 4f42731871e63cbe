// Sales documents from the DMS: invoices (CS), returns (RT) and credit notes, each mapped onto the invoices,
// returns and credit-notes modules' own posting functions. A cancelled version voids the invoice or cancels the
// credit note through the same functions as the REST routes, after the same question to the accounting system.
import { Decimal } from 'decimal.js';
import { checkReversible } from '../../postings/reversal.js';
import { createInvoices, voidInvoice, type CreateInvoiceCommand } from '../../invoices/documents.js';
import { cancelCreditNote, issueCreditNote } from '../../credit-notes/documents.js';
import { processReturn } from '../../returns/documents.js';
import { checkTotals, type BodyOf } from '../canonical.js';
import { ApiError } from '../../../platform/errors/api-error.js';
import type { Tx } from '../../../platform/database/transaction.js';
import { DmsRejection, DmsWait, waitKeys } from '../reasons.js';
import { badStockOfVan, customerByCode, customersByCode, invoiceByNumber, productsByCode, readProductsByCode, requireCustomer, requireProducts, routeByCode, salespersonByCode, vanOfRoute } from './lookup.js';
import { requireAccounts, requireLinkedSalesman, requireStockProducts } from './setup.js';
import { asStockWait, vanDayOf } from './van-day.js';
import type { Applied, DmsContext, DmsRunner, DocumentHandler, LoadedDocument } from './types.js';

/** A version that changes a posted document's status: only a cancel is understood. */
function refuseOtherChange(document: LoadedDocument, what: string): void {
  if (document.status !== 'cancelled') {
    throw new DmsRejection('R09', `${what} ${document.number} was ${document.previous!.dmsStatus}; the only change of status the service takes is to cancelled. Send a new number.`);
  }
}

async function askAccountingSystem(runner: DmsRunner, context: DmsContext, document: LoadedDocument, what: string): Promise<void> {
  const previous = document.previous!;
  if (!previous.accounting) return;
  await checkReversible(runner.db, runner.settings, context.actor.organization.id, { type: previous.accounting.type as 'invoice', id: previous.accounting.id }, what);
}

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
async function postSaleInvoices(tx: Tx, context: DmsContext, documents: readonly LoadedDocument[]): Promise<(Applied | Error)[]> {
  const organizationId = context.actor.organization.id;
  const bodies = documents.map((document) => document.document.body as BodyOf<'DmsSaleInvoiceDocument'>);
  const customers = await customersByCode(tx, organizationId, bodies.map((body) => body.customerCode!));
  const products = await readProductsByCode(tx, organizationId, bodies.flatMap((body) => body.lines.map((line) => line.productCode)));
  const outcomes: (Applied | Error)[] = [];
  const commands: { index: number; vanCode: string; command: CreateInvoiceCommand }[] = [];
  for (const [i, document] of documents.entries()) {
    const body = bodies[i]!;
    try {
      const customer = requireCustomer(customers, body.customerCode!);
      requireProducts(products, body.lines.map((line) => line.productCode));
      // R04 with the service's tax: each line at its product's rate (a free issue carries no tax).
      checkTotals(body.lines.map((line) => ({ ...line, taxRate: line.free ? '0' : products.get(line.productCode)!.tax_rate })), body.totals, body.currency, true);
      requireStockProducts(document, products, body.lines.map((line) => line.productCode));
      // The sale lands on the sales account, what is paid at once on the cash account, a free issue or a discount on
      // the promotions expense account (setup.ts: only with an accounting connection).
      await requireAccounts(tx, context, document, {
        sales: true, cash: body.payment.method !== 'credit',
        promotions: body.lines.some((line) => line.free === true || (line.discount !== undefined && Number(line.discount) > 0)),
      });
      const { van, salespersonId } = await vanDayOf(tx, context, document, body.routeCode);
      commands.push({ index: i, vanCode: van.code, command: {
        customerId: customer.id, locationId: van.id, issueDate: document.date, currency: body.currency, salespersonId,
        externalCodes: { dms: document.number },
        lines: body.lines.map((line) => ({ kind: line.free ? 'free' as const : 'sale' as const, productId: products.get(line.productCode)!.id, unit: line.unit, quantity: line.quantity, unitPrice: line.unitPrice, ...(line.discount !== undefined ? { discount: line.discount } : {}) })),
        payment: body.payment.method === 'credit' ? null : { method: body.payment.method, reference: body.payment.reference ?? null },
        // While fiscalisation applies, what the fiscal system cannot record is refused up front (the spec's DMS rule).
        fiscalise: context.fiscalApplies, refuseUnfiscalisable: context.fiscalApplies,
      } });
    } catch (error) {
      if (!(error instanceof DmsRejection) && !(error instanceof DmsWait)) throw error;
      outcomes[i] = error;
    }
  }
  const posted = await createInvoices(tx, context.actor, commands.map((entry) => entry.command));
  posted.forEach((invoice, j) => {
    const { index, vanCode } = commands[j]!;
    outcomes[index] = invoice instanceof ApiError ? asStockWait(invoice, vanCode) as Error
      : { table: 'invoices', id: invoice.id, accounting: { type: 'invoice', id: invoice.id }, provides: [waitKeys.invoice(documents[index]!.number)] };
  });
  return outcomes;
}

export const saleReturn: DocumentHandler = {
  async apply(tx, context, document) {
    if (document.previous) throw new DmsRejection('R09', `Return ${document.number} is posted; a return cannot be cancelled from the DMS. Sell the goods again on a new invoice.`);
    const organizationId = context.actor.organization.id;
    const body = document.document.body as BodyOf<'DmsSaleReturnDocument'>;
    const customer = await customerByCode(tx, organizationId, body.customerCode!);
    const invoiceId = await invoiceByNumber(tx, organizationId, body.invoiceNumber);
    const invoice = await tx.selectFrom('invoices').select(['customer_id']).where('organization_id', '=', organizationId).where('id', '=', invoiceId).executeTakeFirstOrThrow();
    if (invoice.customer_id !== customer.id) throw new DmsRejection('R09', `Invoice ${body.invoiceNumber} is not customer ${body.customerCode}'s.`);
    const products = await productsByCode(tx, organizationId, body.lines.map((line) => line.productCode));
    const route = await routeByCode(tx, organizationId, body.routeCode);
    const van = await vanOfRoute(tx, organizationId, route);
    const badStock = body.lines.some((line) => line.condition === 'damaged') ? await badStockOfVan(tx, organizationId, van) : null;
    await requireLinkedSalesman(tx, document, await salespersonByCode(tx, organizationId, document.document.salesmanCode) ?? route.salesperson_id);
    requireStockProducts(document, products, body.lines.map((line) => line.productCode));
    // Its credit note lands on the sales and cash accounts, as a credit note from the DMS does.
    await requireAccounts(tx, context, document, { sales: true, cash: true });
    const processed = await processReturn(tx, context.actor, {
      invoiceId, returnDate: document.date, reason: body.reason ?? `DMS return ${document.number}`, locationId: van.id, badStockLocationId: badStock?.id ?? null,
      lines: body.lines.map((line) => ({ productId: products.get(line.productCode)!.id, unit: line.unit, quantity: line.quantity, condition: line.condition })),
      fiscalise: context.fiscalApplies,
    });
    return { table: 'returns', id: processed.id, accounting: processed.creditNoteId ? { type: 'credit_note', id: processed.creditNoteId } : null, provides: [waitKeys.stock(van.code)] };
  },
};

export const creditNote: DocumentHandler = {
  prepare: (runner, context, document) => askAccountingSystem(runner, context, document, 'Cancelled'),
  async apply(tx, context, document) {
    if (document.previous) {
      refuseOtherChange(document, 'Credit note');
      await cancelCreditNote(tx, context.actor, document.previous.mikonoId!, `Cancelled in the DMS (${document.number})`);
      return { table: 'credit_notes', id: document.previous.mikonoId! };
    }
    const organizationId = context.actor.organization.id;
    const body = document.document.body as BodyOf<'DmsCreditNoteDocument'>;
    const customer = await customerByCode(tx, organizationId, body.customerCode!);
    const invoiceId = await invoiceByNumber(tx, organizationId, body.invoiceNumber);
    const lines = body.lines ?? [];
    const products = await productsByCode(tx, organizationId, lines.map((line) => line.productCode));
    await requireAccounts(tx, context, document, { sales: true, cash: true });
    if (body.totals) {
      checkTotals(lines.map((line) => ({ ...line, taxRate: products.get(line.productCode)!.tax_rate })), body.totals, context.actor.organization.baseCurrency, true);
    }
    const note = await issueCreditNote(tx, context.actor, {
      customer: { id: customer.id }, invoiceId, reason: body.reason, issueDate: document.date, externalCodes: { dms: document.number },
      lines: body.amount !== undefined
        ? [{ type: 'adjustment', description: body.reason, quantity: 1, unitPrice: new Decimal(body.amount).toFixed() }]
        : lines.map((line) => ({ type: 'product' as const, product: { id: products.get(line.productCode)!.id }, quantity: line.quantity, unitPrice: line.unitPrice })),
      // While fiscalisation applies, what the fiscal system cannot record is refused up front (the spec's DMS rule).
      fiscalise: context.fiscalApplies, refuseUnfiscalisable: context.fiscalApplies,
    });
    return { table: 'credit_notes', id: note.id, accounting: { type: 'credit_note', id: note.id } };
  },
};
