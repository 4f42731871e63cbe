// Credit notes from the DMS, mapped onto this module's issueCreditNote (declared in its manifest's dmsHandlers; written
// with the DMS's kit); a cancelled version cancels the credit note through the same function as the REST route, after
// the same question to the accounting system.
import { Decimal } from 'decimal.js';
import { cancelCreditNote, issueCreditNote } from './documents.js';
import { checkTotals, type BodyOf } from '../dms/canonical.js';
import { customerByCode, invoiceByNumber, productsByCode } from '../dms/handlers/lookup.js';
import { requireAccounts } from '../dms/handlers/setup.js';
import type { DocumentHandler } from '../dms/handlers/types.js';
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
    if (body.totals) {
      checkTotals(
        lines.map((line) => ({ ...line, taxRate: products.get(line.productCode)!.tax_rate })),
        body.totals,
        context.actor.organization.baseCurrency,
        true,
      );
    }
    const note = await issueCreditNote(tx, context.actor, {
      customer: { id: customer.id },
      invoiceId,
      reason: body.reason,
      issueDate: document.date,
      externalCodes: { dms: document.number },
      lines:
        body.amount !== undefined
          ? [
              {
                type: 'adjustment',
                description: body.reason,
                quantity: 1,
                unitPrice: new Decimal(body.amount).toFixed(),
              },
            ]
          : lines.map((line) => ({
              type: 'product' as const,
              product: { id: products.get(line.productCode)!.id },
              quantity: line.quantity,
              unitPrice: line.unitPrice,
            })),
      // While fiscalisation applies, what the fiscal system cannot record is refused up front (the spec's DMS rule).
      fiscalise: context.fiscalApplies,
      refuseUnfiscalisable: context.fiscalApplies,
    });
    return { table: 'credit_notes', id: note.id, accounting: { type: 'credit_note', id: note.id } };
  },
};
