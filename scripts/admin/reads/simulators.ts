// What the simulators hold for an organisation: the QuickBooks company (realm) its accounting connection names and
// the EFRIS taxpayer (TIN) its fiscal connection names, read from their own schema `simulators` (they stand in for
// other companies' systems; their tables are typed here as the simulators type them, not by the Prisma schema).
import { sql } from 'kysely';
import type { Db } from '../../../server/platform/database/transaction.js';
import { simulatorDb } from '../../../server/connectors/simulators/database.js';
import { listFailures } from '../../../server/connectors/simulators/failures.js';

interface SimulatorTables {
  qbo_realms: { realm_id: string; book_close_date: string | Date | null };
  qbo_entities: {
    realm_id: string;
    id: string;
    entity: string;
    doc_number: string | null;
    txn_date: string | Date;
    status: string;
    total: string;
    balance: string;
    updated_at: Date;
  };
  efris_documents: {
    tin: string;
    invoice_id: string;
    fdn: string;
    kind: string;
    reference_no: string;
    currency: string;
    buyer_name: string;
    gross_amount: string;
    tax_amount: string;
    original_fdn: string | null;
    issued_at: Date;
  };
  efris_applications: {
    tin: string;
    reference_no: string;
    seller_reference: string;
    ori_fdn: string;
    currency: string;
    gross_amount: string;
    approve_status: string;
    credit_fdn: string | null;
    submitted_at: Date;
  };
}

/** One record a simulator holds, in the shape every system shares (the list's rows). */
export interface HeldRecord {
  system: 'accounting' | 'fiscal';
  account: string;
  /** QuickBooks entity (Invoice, Payment, CreditMemo, RefundReceipt, JournalEntry, ...) or EFRIS invoice, credit_note, credit_note_application. */
  kind: string;
  /** The simulator's own id: QuickBooks Id, EFRIS invoice id or application reference. */
  id: string;
  /** Our document number as the system keeps it (DocNumber, referenceNo, seller reference). */
  number: string | null;
  date: string;
  status: string;
  currency: string | null;
  total: string;
  /** What else identifies it there: a QuickBooks balance, an FDN, the original FDN of a credit note. */
  detail: string;
}

export interface SimulatorState {
  records: HeldRecord[];
  failures: {
    system: 'accounting' | 'fiscal';
    account: string;
    mode: string;
    remaining: number | null;
    delayMs: number;
  }[];
  bookCloseDate: string | null;
}

const day = (value: string | Date): string =>
  value instanceof Date ? value.toISOString().slice(0, 10) : String(value).slice(0, 10); // a timestamptz's UTC day
// EFRIS's approveStatus codes for a credit note application.
const APPROVAL: Record<string, string> = { '101': 'approved', '102': 'submitted', '103': 'rejected', '104': 'voided' };

export async function simulatorState(
  db: Db,
  accounting: string | null,
  fiscal: string | null,
): Promise<SimulatorState> {
  const sim = simulatorDb<SimulatorTables>(db);
  const records: HeldRecord[] = [];
  const failures: SimulatorState['failures'] = [];
  let bookCloseDate: string | null = null;
  if (accounting !== null) {
    // DATE columns as their text: pg would make a Date at local midnight of them.
    const realm = await sim
      .selectFrom('qbo_realms')
      .select(sql<string | null>`book_close_date::text`.as('book_close_date'))
      .where('realm_id', '=', accounting)
      .executeTakeFirst();
    bookCloseDate = realm?.book_close_date ?? null;
    const entities = await sim
      .selectFrom('qbo_entities')
      .select(['id', 'entity', 'doc_number', 'status', 'total', 'balance', sql<string>`txn_date::text`.as('txn_date')])
      .where('realm_id', '=', accounting)
      .orderBy('updated_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    for (const e of entities) {
      records.push({
        system: 'accounting',
        account: accounting,
        kind: e.entity,
        id: String(e.id),
        number: e.doc_number,
        date: day(e.txn_date),
        status: e.status,
        currency: null,
        total: String(e.total),
        detail: `balance ${e.balance}`,
      });
    }
    for (const f of await listFailures(db, 'accounting', accounting))
      failures.push({ system: 'accounting', account: accounting, ...f });
  }
  if (fiscal !== null) {
    const documents = await sim
      .selectFrom('efris_documents')
      .selectAll()
      .where('tin', '=', fiscal)
      .orderBy('issued_at', 'desc')
      .execute();
    for (const d of documents) {
      records.push({
        system: 'fiscal',
        account: fiscal,
        kind: d.kind,
        id: d.invoice_id,
        number: d.reference_no,
        date: day(d.issued_at),
        status: 'fiscalised',
        currency: d.currency,
        total: String(d.gross_amount),
        detail: `FDN ${d.fdn}, tax ${d.tax_amount}${d.original_fdn ? `, original FDN ${d.original_fdn}` : ''}, buyer ${d.buyer_name}`,
      });
    }
    const applications = await sim
      .selectFrom('efris_applications')
      .selectAll()
      .where('tin', '=', fiscal)
      .orderBy('submitted_at', 'desc')
      .execute();
    for (const a of applications) {
      records.push({
        system: 'fiscal',
        account: fiscal,
        kind: 'credit_note_application',
        id: a.reference_no,
        number: a.seller_reference,
        date: day(a.submitted_at),
        status: APPROVAL[a.approve_status] ?? a.approve_status,
        currency: a.currency,
        total: String(a.gross_amount),
        detail: `original FDN ${a.ori_fdn}${a.credit_fdn ? `, credit FDN ${a.credit_fdn}` : ''}`,
      });
    }
    for (const f of await listFailures(db, 'fiscal', fiscal))
      failures.push({ system: 'fiscal', account: fiscal, ...f });
  }
  return { records, failures, bookCloseDate };
}
