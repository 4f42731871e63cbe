// The organisation's configuration a DMS document needs before it posts (issue 36 item 10). Missing, the document is
// R03: a rejection the operator fixes, then re-processes (`admin dms reprocess --date ... --reason R03`); it does not
// wait (R08), since nothing the DMS sends will fix it. Each text says what to configure and with which command.
//
// What is checked, and when:
// - A van document (CS, VR, VU, RT, PY, route settlement) of a salesman not linked to a member: always (a salesman is
//   a member of the organisation, 0033).
// - A product that does not track stock on a line of a document that moves stock (CS, RT, VR, VU, IJ, company
//   invoice): always. Empties are left out: they move on the empties ledger, not the stock one. (Every product has a
//   pack size: the column is NOT NULL, at least 1, and required on create, so "no pack size" cannot happen.)
// - The account mapping (0034) only when the organisation has an accounting connection: the accounts are names in
//   QuickBooks, and a distributor without one has nothing to map, so its documents are not held for it. With one, an
//   accountant expects every amount to land in the account the organisation chose, not in QuickBooks' defaults: a
//   sale invoice, a return (its credit note) and a credit note need the sales account and the cash account; a
//   collection the cash account; an invoice with a free issue or a discount the promotions expense account; a
//   company invoice the vendor of its supplier.
import type { Tx } from '../../../platform/database/transaction.js';
import { DmsRejection } from '../reasons.js';
import type { ProductFacts } from './lookup.js';
import type { DmsContext, LoadedDocument } from './types.js';

const reprocess = (document: LoadedDocument) =>
  `then re-process: admin dms reprocess --org ${document.organizationId} --date ${document.date} --reason R03`;

/** A van document's salesman must be linked to a member of the organisation. */
export async function requireLinkedSalesman(
  tx: Tx,
  document: LoadedDocument,
  salespersonId: string | null,
): Promise<void> {
  if (!salespersonId) return;
  const row = await tx
    .selectFrom('salespeople')
    .select(['salesman_code', 'member_id'])
    .where('organization_id', '=', document.organizationId)
    .where('id', '=', salespersonId)
    .executeTakeFirstOrThrow();
  if (row.member_id !== null) return;
  const org = document.organizationId;
  throw new DmsRejection(
    'R03',
    `Salesman ${row.salesman_code} is not linked to a member of the organisation, so his van documents cannot post. ` +
      `Link him: admin member add --org ${org} --name NAME --email EMAIL --salesman ${row.salesman_code} (or admin member update MEMBER_ID --org ${org} --salesman ${row.salesman_code}), ${reprocess(document)}.`,
  );
}

/**
 * The lines' products must track stock on a document that moves stock (empties move on their own ledger). The fix
 * named is the DMS's own product document: the API has no PATCH of a product, and a PUT by code would create a second
 * product when this one carries no code of that system.
 */
export function requireStockProducts(
  document: LoadedDocument,
  products: ReadonlyMap<string, ProductFacts>,
  codes: readonly string[],
): void {
  const untracked = [...new Set(codes)].find((code) => {
    const product = products.get(code);
    return product !== undefined && !product.tracks_stock && !product.is_empty;
  });
  if (untracked === undefined) return;
  throw new DmsRejection(
    'R03',
    `Product ${untracked} does not track stock, so this document cannot move it. ` +
      `Set it to track stock: send its product document with "tracksStock": true, ${reprocess(document)}.`,
  );
}

export interface AccountNeeds {
  cash?: boolean;
  sales?: boolean;
  promotions?: boolean;
}

type Accounts = {
  cash_account: string | null;
  sales_account: string | null;
  promotions_expense_account: string | null;
};

/** The mapped accounts, read once per transaction (a van day's set of invoices asks once; they do not change in it). */
const accountsOf = new WeakMap<Tx, Map<string, Promise<Accounts>>>();

function readAccounts(tx: Tx, organizationId: string): Promise<Accounts> {
  let known = accountsOf.get(tx);
  if (!known) accountsOf.set(tx, (known = new Map()));
  let read = known.get(organizationId);
  if (!read) {
    read = tx
      .selectFrom('organizations')
      .select(['cash_account', 'sales_account', 'promotions_expense_account'])
      .where('id', '=', organizationId)
      .executeTakeFirstOrThrow();
    known.set(organizationId, read);
  }
  return read;
}

/** With an accounting connection, the accounts the document's posting lands in must be mapped. */
export async function requireAccounts(
  tx: Tx,
  context: DmsContext,
  document: LoadedDocument,
  needs: AccountNeeds,
): Promise<void> {
  if (!context.accountingConnected) return;
  const accounts = await readAccounts(tx, document.organizationId);
  const missing: [string, string][] = [];
  if (needs.cash && accounts.cash_account === null) missing.push(['cash account', '--cash "ACCOUNT"']);
  if (needs.sales && accounts.sales_account === null) missing.push(['default sales account', '--sales "ACCOUNT"']);
  if (needs.promotions && accounts.promotions_expense_account === null)
    missing.push(['promotions expense account', '--promotions "ACCOUNT"']);
  if (missing.length === 0) return;
  throw new DmsRejection(
    'R03',
    `The organisation has no ${missing.map(([what]) => what).join(' and no ')} mapped in the accounting system (QuickBooks), where this document is posted. ` +
      `Map ${missing.length === 1 ? 'it' : 'them'}: admin accounts set --org ${document.organizationId} ${missing.map(([, option]) => option).join(' ')}, ${reprocess(document)}.`,
  );
}

/** With an accounting connection, a company invoice's supplier must have its vendor mapped. */
export async function requireVendor(
  tx: Tx,
  context: DmsContext,
  document: LoadedDocument,
  supplierCode: string,
): Promise<void> {
  if (!context.accountingConnected) return;
  const row = await tx
    .selectFrom('supplier_vendors')
    .select('vendor_name')
    .where('organization_id', '=', document.organizationId)
    .where('supplier_code', '=', supplierCode)
    .executeTakeFirst();
  if (row) return;
  throw new DmsRejection(
    'R03',
    `Supplier ${supplierCode} has no vendor mapped in the accounting system (QuickBooks). ` +
      `Map it: admin accounts set --org ${document.organizationId} --vendor "${supplierCode}=VENDOR NAME", ${reprocess(document)}.`,
  );
}
