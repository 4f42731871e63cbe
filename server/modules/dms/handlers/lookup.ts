// The DMS names records by their codes (outlet code, product code, route code, location code, document numbers);
// the posting functions take the service's ids. Each lookup here turns a code into its record, or says why the
// document cannot post: not received yet (a wait, R08, woken when it arrives) or not set up (R03).
import type { Db, Tx } from '../../../platform/database/transaction.js';
import { findRecordIdByCode } from '../../../platform/external-codes/external-codes.js';
import { DmsRejection, DmsWait, waitKeys } from '../reasons.js';

export async function customerByCode(tx: Tx, organizationId: string, code: string) {
  return requireCustomer(await customersByCode(tx, organizationId, [code]), code);
}

export type CustomerFacts = { id: string; route_id: string | null; status: string };

/** The customers of the codes given, by code (a set of documents reads them once); requireCustomer names a missing one. */
export async function customersByCode(
  tx: Tx,
  organizationId: string,
  codes: readonly string[],
): Promise<Map<string, CustomerFacts>> {
  const unique = [...new Set(codes)];
  const rows =
    unique.length === 0
      ? []
      : await tx
          .selectFrom('customers')
          .select(['id', 'route_id', 'status', 'outlet_code'])
          .where('organization_id', '=', organizationId)
          .where('outlet_code', 'in', unique)
          .execute();
  return new Map(rows.map((row) => [row.outlet_code!, { id: row.id, route_id: row.route_id, status: row.status }]));
}

/** The customer of a code among those read; not received yet is a wait. */
export function requireCustomer(byCode: ReadonlyMap<string, CustomerFacts>, code: string): CustomerFacts {
  const row = byCode.get(code);
  if (!row) throw new DmsWait(`Customer ${code} has not been received.`, waitKeys.customer(code));
  return row;
}

export interface ProductFacts {
  id: string;
  product_code: string;
  pack_size: number;
  tracks_stock: boolean;
  is_empty: boolean;
  tax_rate: string;
  selling_units: string[];
}

/** The products of the codes given, by code; the first one missing is a wait. */
export async function productsByCode(
  tx: Tx,
  organizationId: string,
  codes: readonly string[],
): Promise<Map<string, ProductFacts>> {
  const byCode = await readProductsByCode(tx, organizationId, codes);
  requireProducts(byCode, codes);
  return byCode;
}

/** The products of the codes given, by code, those that exist (a set of documents reads them once). */
export async function readProductsByCode(
  tx: Tx,
  organizationId: string,
  codes: readonly string[],
): Promise<Map<string, ProductFacts>> {
  const unique = [...new Set(codes)];
  const rows =
    unique.length === 0
      ? []
      : await tx
          .selectFrom('products')
          .select(['id', 'product_code', 'pack_size', 'tracks_stock', 'is_empty', 'tax_rate', 'selling_units'])
          .where('organization_id', '=', organizationId)
          .where('product_code', 'in', unique)
          .execute();
  return new Map(rows.map((row) => [row.product_code, row]));
}

/** The first of the codes not among the products read is a wait. */
export function requireProducts(byCode: ReadonlyMap<string, ProductFacts>, codes: readonly string[]): void {
  const missing = codes.find((code) => !byCode.has(code));
  if (missing) throw new DmsWait(`Product ${missing} has not been received.`, waitKeys.product(missing));
}

export async function routeByCode(tx: Tx, organizationId: string, code: string) {
  const row = await tx
    .selectFrom('routes')
    .select(['id', 'route_code', 'salesperson_id', 'van_location_id'])
    .where('organization_id', '=', organizationId)
    .where('route_code', '=', code)
    .executeTakeFirst();
  if (!row)
    throw new DmsWait(`Route ${code} has not been received (send its salesman and route plan).`, waitKeys.route(code));
  return row;
}

export interface LocationFacts {
  id: string;
  code: string;
  kind: string;
  stock_condition: string | null;
  active: boolean;
}

async function findLocation(tx: Tx, organizationId: string, code: string): Promise<LocationFacts | undefined> {
  return tx
    .selectFrom('locations')
    .select(['id', 'code', 'kind', 'stock_condition', 'active'])
    .where('organization_id', '=', organizationId)
    .where('code', '=', code)
    .executeTakeFirst();
}

/** A location a document names: not linked yet is a wait (R08); linked and inactive is R03. */
export async function locationByCode(tx: Tx, organizationId: string, code: string): Promise<LocationFacts> {
  const row = await findLocation(tx, organizationId, code);
  if (!row) throw new DmsWait(`Location ${code} is not linked to a location of the service.`, waitKeys.location(code));
  if (!row.active)
    throw new DmsRejection('R03', `Location ${code} is linked to an inactive location; activate it, then re-process.`);
  return row;
}

/** The van (good stock) of a route: the route's van, else the location V_<route>-G; none is R03. */
export async function vanOfRoute(
  tx: Tx,
  organizationId: string,
  route: { route_code: string; van_location_id: string | null },
): Promise<LocationFacts> {
  const row = route.van_location_id
    ? await tx
        .selectFrom('locations')
        .select(['id', 'code', 'kind', 'stock_condition', 'active'])
        .where('organization_id', '=', organizationId)
        .where('id', '=', route.van_location_id)
        .executeTakeFirst()
    : await findLocation(tx, organizationId, `V_${route.route_code}-G`);
  if (!row)
    throw new DmsRejection(
      'R03',
      `Route ${route.route_code} has no van location (V_${route.route_code}-G): a van document with no location cannot post. Set up the van, then re-process.`,
    );
  if (!row.active)
    throw new DmsRejection(
      'R03',
      `The van ${row.code} of route ${route.route_code} is inactive; activate it, then re-process.`,
    );
  return row;
}

/** The van's bad-stock location (V_<route>-B); none is R03. */
export async function badStockOfVan(tx: Tx, organizationId: string, van: LocationFacts): Promise<LocationFacts> {
  const code = van.code.replace(/-G$/, '-B');
  const row = await findLocation(tx, organizationId, code);
  if (!row?.active)
    throw new DmsRejection(
      'R03',
      `No active bad-stock location ${code} for the van ${van.code}; set it up, then re-process.`,
    );
  return row;
}

/** The main warehouse a van loads from: the one named, else the first active main warehouse by code; none is R03. */
export const mainWarehouse = (tx: Tx, organizationId: string, code?: string) =>
  namedOrFirst(tx, organizationId, 'main', code, 'no active main warehouse');

/** The damages store for bad stock: the one named, else the first active one by code; none is R03. */
export const damagesLocation = (tx: Tx, organizationId: string, code?: string) =>
  namedOrFirst(tx, organizationId, 'damages', code, 'no active damages location for bad stock');

async function namedOrFirst(
  tx: Tx,
  organizationId: string,
  kind: 'main' | 'damages',
  code: string | undefined,
  missing: string,
): Promise<LocationFacts> {
  if (code) return locationByCode(tx, organizationId, code);
  const row = await tx
    .selectFrom('locations')
    .select(['id', 'code', 'kind', 'stock_condition', 'active'])
    .where('organization_id', '=', organizationId)
    .where('kind', '=', kind)
    .where('active', '=', true)
    .orderBy('code')
    .executeTakeFirst();
  if (!row) throw new DmsRejection('R03', `The organisation has ${missing}; set one up, then re-process.`);
  return row;
}

/** A `CS` invoice by its number (its dms code); not received yet is a wait. */
export async function invoiceByNumber(tx: Tx, organizationId: string, number: string): Promise<string> {
  const id = await findRecordIdByCode(tx, organizationId, 'invoice', 'dms', number);
  if (!id) throw new DmsWait(`Invoice ${number} has not been received.`, waitKeys.invoice(number));
  return id;
}

/** A reason code received before, of the kind given; not received yet is a wait. */
export async function reasonByCode(tx: Tx, organizationId: string, code: string, kind: 'stock' | 'cheque') {
  const row = await tx
    .selectFrom('dms_reason_codes')
    .select(['code', 'kind', 'description'])
    .where('organization_id', '=', organizationId)
    .where('code', '=', code)
    .executeTakeFirst();
  if (!row) throw new DmsWait(`Reason code ${code} has not been received.`, waitKeys.reason(code));
  if (row.kind !== kind)
    throw new DmsRejection('R09', `Reason code ${code} is a ${row.kind} reason, not a ${kind} reason.`);
  return row;
}

/** The salesperson of a code, or null when the document names none. */
export async function salespersonByCode(
  tx: Tx,
  organizationId: string,
  code: string | undefined,
): Promise<string | null> {
  if (!code) return null;
  const row = await tx
    .selectFrom('salespeople')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('salesman_code', '=', code)
    .executeTakeFirst();
  return row?.id ?? null;
}

/**
 * The receipts a posted collection (PY) made: its applied version's receipt group (a read: in a transaction or before
 * one). Applied is enough (a flag held for its accounting posting, or rejected when that failed): the receipts are in
 * the service; a bounce waits for a pending posting by its own rule (waitForPostings).
 */
export async function collectionReceipts(
  tx: Db,
  organizationId: string,
  distributorCode: string,
  number: string,
): Promise<{ ids: string[]; documentId: string }> {
  const posted = await tx
    .selectFrom('dms_documents')
    .select(['id', 'mikono_id'])
    .where('organization_id', '=', organizationId)
    .where('natural_key', '=', `${distributorCode}|customer_collection|${number}`)
    .where('state', 'in', ['posted', 'received', 'rejected'])
    .where('mikono_table', '=', 'payments')
    .orderBy('version', 'desc')
    .executeTakeFirst();
  if (!posted) throw new DmsWait(`Collection ${number} has not been posted.`, waitKeys.collection(number));
  const first = await tx
    .selectFrom('payments')
    .select('receipt_group_id')
    .where('organization_id', '=', organizationId)
    .where('id', '=', posted.mikono_id!)
    .executeTakeFirstOrThrow();
  const receipts = await tx
    .selectFrom('payments')
    .select(['id', 'status'])
    .where('organization_id', '=', organizationId)
    .where('receipt_group_id', '=', first.receipt_group_id)
    .orderBy('id')
    .execute();
  return { ids: receipts.filter((r) => r.status === 'posted').map((r) => r.id), documentId: posted.id };
}
