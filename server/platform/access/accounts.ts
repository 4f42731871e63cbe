// An organisation's chart-of-accounts mapping: the accounting system's names of its cash account, its default sales
// (income) and promotions expense accounts, and the vendor of each supplier. Set by the operator (`admin accounts
// set`); read by the QuickBooks postings (settlements/posting.ts, payments/posting.ts, invoices/posting.ts,
// credit-notes/posting.ts) and by the DMS, whose documents are R03 while a mapping they need is missing.
import { inTransaction, type Db, type Tx } from '../database/transaction.js';

export interface AccountMapping {
  cashAccount: string | null;
  salesAccount: string | null;
  promotionsExpenseAccount: string | null;
  /** Supplier code (as the DMS sends it on a company invoice) -> the accounting system's vendor name. */
  vendors: Record<string, string>;
}

export interface AccountChange {
  cashAccount?: string | null;
  salesAccount?: string | null;
  promotionsExpenseAccount?: string | null;
  /** Vendors to set; a null name removes the supplier's vendor. */
  vendors?: Record<string, string | null>;
}

/** QuickBooks' Account.Name is at most 100 characters, without a colon (its sub-account separator). */
function checkAccount(option: string, name: string | null | undefined): string | null | undefined {
  if (name === undefined || name === null) return name;
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > 100 || trimmed.includes(':'))
    throw new Error(
      `${option} must be an account name of 1 to 100 characters without ':', not ${JSON.stringify(name)}`,
    );
  return trimmed;
}

export async function setAccounts(db: Db, organizationId: string, change: AccountChange): Promise<AccountMapping> {
  // Refused before the organisation is looked up, as before: a wrong option is the first thing said.
  checkChange(change);
  const organization = await db
    .selectFrom('organizations')
    .select('id')
    .where('id', '=', organizationId)
    .executeTakeFirst();
  if (!organization) throw new Error(`no organisation ${organizationId} (org list shows them)`);
  await inTransaction(db, (tx) => writeAccounts(tx, organizationId, change));
  return getAccounts(db, organizationId);
}

/** setAccounts in the caller's transaction (the sandbox bootstrap maps its distributor's accounts in its own). */
export async function setAccountsIn(tx: Tx, organizationId: string, change: AccountChange): Promise<void> {
  await writeAccounts(tx, organizationId, change);
}

function checkChange(change: AccountChange): {
  cash: string | null | undefined;
  sales: string | null | undefined;
  promotions: string | null | undefined;
} {
  const cash = checkAccount('--cash', change.cashAccount);
  const sales = checkAccount('--sales', change.salesAccount);
  const promotions = checkAccount('--promotions', change.promotionsExpenseAccount);
  for (const [code, name] of Object.entries(change.vendors ?? {})) {
    if (!/^[A-Za-z0-9_-]{1,20}$/.test(code))
      throw new Error(`--vendor: ${code} is not a supplier code (1 to 20 letters, digits, _ or -)`);
    if (name !== null && (name.trim() === '' || name.length > 100))
      throw new Error(`--vendor: the vendor of ${code} must be 1 to 100 characters`);
  }
  return { cash, sales, promotions };
}

async function writeAccounts(tx: Tx, organizationId: string, change: AccountChange): Promise<void> {
  const { cash, sales, promotions } = checkChange(change);
  const columns = {
    ...(cash === undefined ? {} : { cash_account: cash }),
    ...(sales === undefined ? {} : { sales_account: sales }),
    ...(promotions === undefined ? {} : { promotions_expense_account: promotions }),
  };
  if (Object.keys(columns).length > 0)
    await tx
      .updateTable('organizations')
      .set((eb) => ({ ...columns, updated_at: eb.fn('now') }))
      .where('id', '=', organizationId)
      .execute();
  for (const [code, name] of Object.entries(change.vendors ?? {})) {
    if (name === null) {
      await tx
        .deleteFrom('supplier_vendors')
        .where('organization_id', '=', organizationId)
        .where('supplier_code', '=', code)
        .execute();
    } else {
      await tx
        .insertInto('supplier_vendors')
        .values({ organization_id: organizationId, supplier_code: code, vendor_name: name.trim() })
        .onConflict((conflict) =>
          conflict
            .columns(['organization_id', 'supplier_code'])
            .doUpdateSet((eb) => ({ vendor_name: eb.ref('excluded.vendor_name'), updated_at: eb.fn('now') })),
        )
        .execute();
    }
  }
}

export async function getAccounts(db: Db, organizationId: string): Promise<AccountMapping> {
  const row = await db
    .selectFrom('organizations')
    .select(['cash_account', 'sales_account', 'promotions_expense_account'])
    .where('id', '=', organizationId)
    .executeTakeFirst();
  if (!row) throw new Error(`no organisation ${organizationId} (org list shows them)`);
  const vendors = await db
    .selectFrom('supplier_vendors')
    .select(['supplier_code', 'vendor_name'])
    .where('organization_id', '=', organizationId)
    .orderBy('supplier_code')
    .execute();
  return {
    cashAccount: row.cash_account,
    salesAccount: row.sales_account,
    promotionsExpenseAccount: row.promotions_expense_account,
    vendors: Object.fromEntries(vendors.map((vendor) => [vendor.supplier_code, vendor.vendor_name])),
  };
}

/** The vendor mapped to a supplier code, or null. */
export async function vendorOf(db: Db, organizationId: string, supplierCode: string): Promise<string | null> {
  const row = await db
    .selectFrom('supplier_vendors')
    .select('vendor_name')
    .where('organization_id', '=', organizationId)
    .where('supplier_code', '=', supplierCode)
    .executeTakeFirst();
  return row?.vendor_name ?? null;
}
