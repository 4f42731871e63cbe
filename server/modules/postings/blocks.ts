// The `posting` and `fiscal` blocks of a document's JSON (the spec's PostingBlock and FiscalBlock), from the columns
// every posted document carries.
import type { components } from '../../../generated/api-types.js';

export type PostingBlockJson = components['schemas']['PostingBlock'];
export type FiscalBlockJson = components['schemas']['FiscalBlock'];

export function toPostingBlock(row: {
  posting_status: string;
  accounting_ref: string | null;
  accounting_type: string | null;
  posting_reason: string | null;
}): PostingBlockJson {
  return {
    status: row.posting_status as PostingBlockJson['status'],
    accountingRef: row.accounting_ref,
    accountingType: row.accounting_type,
    reason: row.posting_reason,
  };
}

export function toFiscalBlock(row: {
  fiscal_status: string | null;
  fiscal_fdn: string | null;
  fiscal_verification_code: string | null;
  fiscal_qr_code: string | null;
  fiscalised_at: Date | null;
}): FiscalBlockJson {
  return {
    status: row.fiscal_status as FiscalBlockJson['status'],
    fdn: row.fiscal_fdn,
    verificationCode: row.fiscal_verification_code,
    qrCode: row.fiscal_qr_code,
    fiscalisedAt: row.fiscalised_at === null ? null : row.fiscalised_at.toISOString(),
  };
}
