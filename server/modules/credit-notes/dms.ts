// Credit notes from the DMS, mapped onto this module's issueCreditNote (declared with the credit note document type in
// its manifest; written with the DMS's kit); a cancelled version cancels the credit note through the same function as
// the REST route, after the same question to the accounting system. The mapping is pure (creditNoteToCommand).
import { Decimal } from 'decimal.js';
import { cancelCreditNote, issueCreditNote, type IssueCreditNoteCommand } from './documents.js';
import { checkTotals, type BodyOf } from '../dms/canonical.js';
import { customerByCode, invoiceByNumber, productsByCode } from '../dms/handlers/lookup.js';
import { requireAccounts } from '../dms/handlers/setup.js';
import type { CanonicalDocument, DocumentHandler } from '../dms/handlers/types.js';
import { askAccountingSystem, refuseOtherChange } from '../dms/handlers/versions.js';

export const creditNote: DocumentHandler = {
  prepare: (runner, context, document) => askAccountingSystem(runner, context, document, 'Cancelled'),
  async apply(tx, context, document) {
    if (document.previous) {
      refuseOtherChange(document, 'Credit note');
      await cancelCreditNote(
        tx,
        context.actor,
        document.previous.mikonoId!,
        `Cancelled in the DMS (${document.number})`,
      );
      return { table: 'credit_notes', id: document.previous.mikonoId! };
    }
    const organizationId = context.actor.organization.id;
    const body = document.document.body as BodyOf<'DmsCreditNoteDocument'>;
    const customer = await customerByCode(tx, organizationId, body.customerCode!);
    const invoiceId = await invoiceByNumber(tx, organizationId, body.invoiceNumber);
    const lines = body.lines ?? [];
    const products = await productsByCode(
      tx,
      organizationId,
      lines.map((line) => line.productCode),
    );
    await requireAccounts(tx, context, document, { sales: true, cash: true });
    const command = creditNoteToCommand(document, {
      customerId: customer.id,
      invoiceId,
      products,
      currency: context.actor.organization.baseCurrency,
      fiscalApplies: context.fiscalApplies,
    });
    const note = await issueCreditNote(tx, context.actor, command);
    return { table: 'credit_notes', id: note.id, accounting: { type: 'credit_note', id: note.id } };
  },
};

/** What a credit note's mapping needs besides the document: the ids its handler looked up. */
export interface CreditNoteLookups {
  customerId: string;
  /** The invoice it credits. */
  invoiceId: string;
  /** Product code -> the product with its tax rate (every code the lines name). */
  products: ReadonlyMap<string, { id: string; tax_rate: string }>;
  /** The organisation's base currency, in which its totals are checked. */
  currency: string;
  fiscalApplies: boolean;
}

/**
 * A DMS credit note as issueCreditNote's command: an amount is one adjustment line, else its product lines. Pure; the
 * one refusal it makes is R04, totals that do not add up at the service's tax.
 */
export function creditNoteToCommand(document: CanonicalDocument, lookups: CreditNoteLookups): IssueCreditNoteCommand {
  const body = document.document.body as BodyOf<'DmsCreditNoteDocument'>;
  const lines = body.lines ?? [];
  if (body.totals) {
    checkTotals(
      lines.map((line) => ({ ...line, taxRate: lookups.products.get(line.productCode)!.tax_rate })),
      body.totals,
      lookups.currency,
      true,
    );
  }
  return {
    customer: { id: lookups.customerId },
    invoiceId: lookups.invoiceId,
    reason: body.reason,
    issueDate: document.date,
    externalCodes: { dms: document.number },
    lines:
      body.amount !== undefined
        ? [{ type: 'adjustment', description: body.reason, quantity: 1, unitPrice: new Decimal(body.amount).toFixed() }]
        : lines.map((line) => ({
            type: 'product' as const,
            product: { id: lookups.products.get(line.productCode)!.id },
            quantity: line.quantity,
            unitPrice: line.unitPrice,
          })),
    // While fiscalisation applies, what the fiscal system cannot record is refused up front (the spec's DMS rule).
    fiscalise: lookups.fiscalApplies,
    refuseUnfiscalisable: lookups.fiscalApplies,
  };
}
