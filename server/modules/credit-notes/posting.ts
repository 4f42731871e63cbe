// A credit note as the external systems take it (its posting subject): a QuickBooks CreditMemo, and an EFRIS credit
// note application (T110) against its fiscalised invoice, whose lines mirror the invoice's by product. The
// application is approved later: the job asks again until it is. A credit note of an invoice still waiting for its
// fiscal number waits for it; one of an invoice that was never fiscalised cannot be fiscalised. Writes
// `credit_note.updated`.
import { getAccounts } from '../../platform/access/accounts.js';
import { Decimal } from 'decimal.js';
import { sql } from 'kysely';
import type { Tx } from '../../platform/database/transaction.js';
import { recordEvent } from '../../platform/events/outbox.js';
import type { AccountingCreditMemo, FiscalCreditNote } from '../../connectors/types.js';
import { answerOfApplication, type FiscalBlock, type PostingBlock, type PostingSubject } from '../postings/subject.js';
import { fiscalRate } from '../invoices/posting.js';
import { CREDIT_NOTE } from './documents.js';

export const CREDIT_NOTE_UPDATED = 'credit_note.updated';

async function readCreditNote(tx: Tx, organizationId: string, id: string) {
  const note = await tx
    .selectFrom('credit_notes as n')
    .innerJoin('customers as c', (join) =>
      join.onRef('c.organization_id', '=', 'n.organization_id').onRef('c.id', '=', 'n.customer_id'),
    )
    .leftJoin('invoices as i', (join) =>
      join.onRef('i.organization_id', '=', 'n.organization_id').onRef('i.id', '=', 'n.invoice_id'),
    )
    .select([
      'n.number',
      'n.type',
      'n.reason',
      'n.currency',
      'n.tax',
      'n.total',
      'n.cash_refund_amount',
      'n.customer_id',
      'n.invoice_id',
      'c.name as customer_name',
      'i.number as invoice_number',
      'i.posting_status as invoice_posting',
      'i.accounting_ref as invoice_ref',
      'i.fiscal_status as invoice_fiscal',
      'i.fiscal_fdn as invoice_fdn',
      'i.fiscal_id as invoice_fiscal_id',
    ])
    // The issue date as its calendar string: pg would make a DATE a Date at local midnight, which can shift the day.
    .select(sql<string>`to_char(n.issue_date, 'YYYY-MM-DD')`.as('issue_day'))
    .where('n.organization_id', '=', organizationId)
    .where('n.id', '=', id)
    .executeTakeFirstOrThrow();
  const lines = await tx
    .selectFrom('credit_note_lines as l')
    .leftJoin('products as p', (join) =>
      join.onRef('p.organization_id', '=', 'l.organization_id').onRef('p.id', '=', 'l.product_id'),
    )
    .select([
      'l.line_number',
      'l.type',
      'l.product_id',
      'l.description',
      'l.quantity',
      'l.unit_price',
      'l.tax_rate',
      'l.amount',
      'l.tax',
      'p.product_code',
    ])
    .where('l.organization_id', '=', organizationId)
    .where('l.credit_note_id', '=', id)
    .orderBy('l.line_number')
    .execute();
  return { note, lines };
}

export const creditNotePosting: PostingSubject = {
  async accounting(tx, organizationId, id) {
    const { note, lines } = await readCreditNote(tx, organizationId, id);
    if (note.invoice_posting === 'pending')
      return {
        kind: 'wait',
        reason: `Waiting for invoice ${note.invoice_number} to be posted to the accounting system first.`,
      };
    const document: AccountingCreditMemo = {
      docNumber: note.number,
      txnDate: note.issue_day,
      currency: note.currency,
      customer: { id: note.customer_id, name: note.customer_name },
      lines: lines.map((line) => ({
        itemId: line.product_id ?? 'adjustment',
        description: line.description,
        quantity: String(line.quantity),
        unitPrice: String(line.unit_price),
        amount: String(line.amount),
        taxAmount: String(line.tax),
      })),
      taxTotal: String(note.tax),
      total: String(note.total),
      invoice:
        note.invoice_posting === 'posted' && note.invoice_ref !== null
          ? { type: 'Invoice', id: note.invoice_ref }
          : null,
      incomeAccount: (await getAccounts(tx, organizationId)).salesAccount,
    };
    const refund = note.cash_refund_amount === null ? null : new Decimal(note.cash_refund_amount);
    return {
      kind: 'call',
      // The memo, then the cash paid out of it (a RefundReceipt `CN-…-R`): a retry after a failed refund sends the
      // memo's request id again, which QuickBooks answers with the memo it already made.
      call: async (connector, requestId) => {
        const memo = await connector.postCreditMemo(requestId, document);
        if (!memo.ok || refund === null || refund.isZero()) return memo;
        const paid = await connector.postRefund(`${requestId}.refund`, {
          docNumber: `${note.number}-R`,
          txnDate: note.issue_day,
          currency: note.currency,
          customer: document.customer,
          method: 'cash',
          amount: refund.toFixed(),
          description: `Cash refund of credit note ${note.number}`,
        });
        return paid.ok ? { ok: true, value: { ...memo.value, related: [paid.value] } } : paid;
      },
    };
  },

  async fiscal(tx, organizationId, id, application) {
    const { note, lines } = await readCreditNote(tx, organizationId, id);
    if (application !== null) {
      return {
        kind: 'call',
        call: async (connector) => {
          const result = await connector.queryCreditNote(note.number);
          return result.ok ? { ok: true, value: answerOfApplication(result.value) } : result;
        },
      };
    }
    if (note.invoice_fiscal === 'pending')
      return { kind: 'wait', reason: `Waiting for invoice ${note.invoice_number} to be fiscalised first.` };
    if (note.invoice_fiscal !== 'fiscalised' || note.invoice_fdn === null || note.invoice_fiscal_id === null) {
      return {
        kind: 'skip',
        reason: `Invoice ${note.invoice_number} is not fiscalised, so a fiscal credit note cannot name it.`,
      };
    }
    // EFRIS credits a line of the original at that line's own price (with tax, after its discount): a credited product
    // that is on exactly one valued line of the invoice is sent at that line's price for the quantity credited. Any
    // other line (an amount only, a product on no line or on several) is sent as the credit note has it, and the
    // fiscal system decides (it refuses those: 1480).
    const sold = await tx
      .selectFrom('invoice_lines')
      .select(['product_id', 'quantity', 'amount', 'tax'])
      .where('organization_id', '=', organizationId)
      .where('invoice_id', '=', note.invoice_id!)
      .where('amount', '>', '0')
      .execute();
    const fiscalLines = lines.map((line) => {
      const same = sold.filter((s) => line.product_id !== null && s.product_id === line.product_id);
      const base = {
        itemCode: line.product_code ?? line.description,
        itemName: line.description,
        quantity: String(line.quantity),
        taxRate: fiscalRate(String(line.tax_rate)),
      };
      if (same.length !== 1) {
        return {
          ...base,
          unitPrice: String(line.unit_price),
          total: new Decimal(line.amount).plus(line.tax).toFixed(),
          tax: String(line.tax),
        };
      }
      const original = same[0]!;
      const share = new Decimal(line.quantity).dividedBy(original.quantity);
      const total = new Decimal(original.amount).plus(original.tax).times(share).toDecimalPlaces(2);
      return {
        ...base,
        unitPrice: String(line.unit_price),
        total: total.toFixed(),
        tax: new Decimal(original.tax).times(share).toDecimalPlaces(2).toFixed(),
      };
    });
    const gross = fiscalLines.reduce((sum, line) => sum.plus(line.total), new Decimal(0));
    const tax = fiscalLines.reduce((sum, line) => sum.plus(line.tax), new Decimal(0));
    const document: FiscalCreditNote = {
      referenceNo: note.number,
      original: { fiscalId: note.invoice_fiscal_id, fdn: note.invoice_fdn },
      reasonCode: note.type === 'return' ? '101' : '105',
      reason: note.reason ?? (note.type === 'return' ? 'Goods returned' : 'Credit'),
      currency: note.currency,
      lines: fiscalLines,
      netAmount: gross.minus(tax).toFixed(),
      taxAmount: tax.toFixed(),
      grossAmount: gross.toFixed(),
    };
    return {
      kind: 'call',
      call: async (connector) => {
        const result = await connector.submitCreditNote(document);
        return result.ok ? { ok: true, value: answerOfApplication(result.value) } : result;
      },
    };
  },

  async setPosting(tx, organizationId, id, block: PostingBlock) {
    await tx
      .updateTable('credit_notes')
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
    await recordEvent(tx, organizationId, CREDIT_NOTE_UPDATED, CREDIT_NOTE, id);
  },

  async setFiscal(tx, organizationId, id, block: FiscalBlock) {
    await tx
      .updateTable('credit_notes')
      .set((eb) => ({
        fiscal_status: block.status,
        fiscal_fdn: block.receipt?.fdn ?? null,
        fiscal_verification_code: block.receipt?.verificationCode ?? null,
        fiscal_qr_code: block.receipt?.qrCode ?? null,
        fiscalised_at: block.receipt ? new Date(block.receipt.fiscalisedAt) : null,
        updated_at: eb.fn<Date>('now'),
      }))
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .execute();
    await recordEvent(tx, organizationId, CREDIT_NOTE_UPDATED, CREDIT_NOTE, id);
  },
};
