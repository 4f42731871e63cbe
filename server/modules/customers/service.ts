// The rules of customers: personal fields need customers:pii, money is in the base currency, outlet codes and
// external codes are unique, and every change writes its event in the same transaction.
import type pg from 'pg';
import type { components } from '../../../generated/api-types.js';
import { PII_SCOPE } from '../../platform/access/scopes.js';
import type { CallerContext } from '../../platform/access/context.js';
import type { Tx } from '../../platform/database/transaction.js';
import { ApiError, type FieldError } from '../../platform/errors/api-error.js';
import { recordEvent } from '../../platform/events/outbox.js';
import { assignCodes, codesOf, findRecordIdByCode, isCodeSystem, normaliseCode } from '../../platform/external-codes/external-codes.js';
import { newId } from '../../platform/ids.js';
import type { ListRequest, Page } from '../../platform/lists/page.js';
import { acceptAmount } from '../../platform/money.js';
import { toCustomer, type Customer } from './representation.js';
import { findCustomer, insertCustomer, listCustomers, updateCustomer, type CustomerColumns, type CustomerFilters, type CustomerRow } from './repository.js';

type CustomerFields = components['schemas']['CustomerFields'];
type CustomerCreate = components['schemas']['CustomerCreate'];

export const CUSTOMER_RESOURCE = 'customer';
const PERSONAL_FIELDS = ['phone', 'taxId', 'location', 'contact'] as const;

export async function createCustomer(tx: Tx, caller: CallerContext, input: CustomerCreate): Promise<Customer> {
  const { externalCodes, ...fields } = input;
  const columns = { ...DEFAULTS, ...toColumns(caller, fields) } as CustomerColumns;
  const row = await insertCustomer(tx, caller.organizationId, newId('cus'), columns).catch(duplicateOutletCode(columns.outlet_code));
  const codes = await assignCodes(tx, caller.organizationId, CUSTOMER_RESOURCE, row.id, externalCodes ?? {});
  await recordEvent(tx, caller.organizationId, 'customer.created', CUSTOMER_RESOURCE, row.id);
  return toCustomer(row, codes, caller.scopes.has(PII_SCOPE)); // a new record has exactly the codes just assigned
}

export async function changeCustomer(tx: Tx, caller: CallerContext, id: string, fields: CustomerFields): Promise<Customer> {
  const existing = await findCustomer(tx, caller.organizationId, id, true);
  if (!existing) throw notFound(id);
  return applyChanges(tx, caller, existing, fields);
}

/** PUT by code: creates the customer under the code the first time, updates it afterwards. */
export async function upsertCustomerByCode(tx: Tx, caller: CallerContext, system: string, rawCode: string, fields: CustomerFields): Promise<{ created: boolean; customer: Customer }> {
  const code = await resolveCode(tx, caller, system, rawCode);
  // Two concurrent first PUTs of one code must make one customer: serialise them on the code.
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`${caller.organizationId}:${CUSTOMER_RESOURCE}:${system}:${code}`]);
  const existingId = await findRecordIdByCode(tx, caller.organizationId, CUSTOMER_RESOURCE, system, code);
  if (existingId) {
    const existing = await findCustomer(tx, caller.organizationId, existingId, true);
    return { created: false, customer: await applyChanges(tx, caller, existing!, fields) };
  }
  const missing = (['outletCode', 'name', 'channel'] as const).filter((field) => fields[field] === undefined);
  if (missing.length > 0) {
    throw new ApiError('required_field', `No customer has the ${system} code ${code} yet, so this PUT creates one and needs ${missing.join(', ')}.`,
      missing.map((field) => ({ field: `/${field}`, code: 'required_field', message: 'required when the PUT creates the customer' })));
  }
  const customer = await createCustomer(tx, caller, { ...(fields as CustomerCreate), externalCodes: { [system]: code } });
  return { created: true, customer };
}

export async function getCustomer(db: pg.Pool, caller: CallerContext, id: string): Promise<Customer> {
  const row = await findCustomer(db, caller.organizationId, id);
  if (!row) throw notFound(id);
  return represent(db, caller, row);
}

export async function getCustomerByCode(db: pg.Pool, caller: CallerContext, system: string, rawCode: string): Promise<Customer> {
  const code = await resolveCode(db, caller, system, rawCode);
  const id = await findRecordIdByCode(db, caller.organizationId, CUSTOMER_RESOURCE, system, code);
  const row = id ? await findCustomer(db, caller.organizationId, id) : null;
  if (!row) throw new ApiError('not_found', `No customer has the ${system} code ${code}.`);
  return represent(db, caller, row);
}

export async function listCustomerPage(db: pg.Pool, caller: CallerContext, request: ListRequest, filters: CustomerFilters): Promise<Page<Customer>> {
  const page = await listCustomers(db, caller.organizationId, request, { ...filters, externalCode: filters.externalCode?.trim() });
  const codes = await codesOf(db, caller.organizationId, CUSTOMER_RESOURCE, page.rows.map((row) => row.id));
  const includePii = caller.scopes.has(PII_SCOPE);
  return { ...page, rows: page.rows.map((row) => toCustomer(row, codes.get(row.id)!, includePii)) as never };
}

async function applyChanges(tx: Tx, caller: CallerContext, existing: CustomerRow, fields: CustomerFields): Promise<Customer> {
  const columns = toColumns(caller, fields);
  const row = Object.keys(columns).length === 0 ? existing : await updateCustomer(tx, caller.organizationId, existing.id, columns).catch(duplicateOutletCode(columns.outlet_code));
  await recordEvent(tx, caller.organizationId, 'customer.updated', CUSTOMER_RESOURCE, row.id);
  return represent(tx, caller, row);
}

async function represent(db: pg.Pool | Tx, caller: CallerContext, row: CustomerRow): Promise<Customer> {
  const codes = await codesOf(db, caller.organizationId, CUSTOMER_RESOURCE, [row.id]);
  return toCustomer(row, codes.get(row.id)!, caller.scopes.has(PII_SCOPE));
}

async function resolveCode(db: pg.Pool | Tx, caller: CallerContext, system: string, rawCode: string): Promise<string> {
  if (!(await isCodeSystem(db, caller.organizationId, system))) {
    throw new ApiError('not_found', `There is no code system ${system} for this organisation; dms always exists, partner systems are registered by an administrator.`);
  }
  return normaliseCode(rawCode, '/path/code');
}

const DEFAULTS: Partial<CustomerColumns> = {
  status: 'active', price_group: null, route_id: null, credit_limit_amount: null, credit_limit_currency: null, payment_terms_days: 0,
  address: null, region: null, phone: null, tax_id: null, gps_latitude: null, gps_longitude: null, contact: null,
};

/** The columns a set of fields writes; refuses personal fields without customers:pii. */
function toColumns(caller: CallerContext, fields: CustomerFields): Partial<CustomerColumns> {
  const personal = PERSONAL_FIELDS.filter((field) => field in fields);
  if (personal.length > 0 && !caller.scopes.has(PII_SCOPE)) {
    throw new ApiError('insufficient_scope', `Setting ${personal.join(', ')} needs the scope ${PII_SCOPE}, which the key does not have.`,
      personal.map((field): FieldError => ({ field: `/${field}`, code: 'insufficient_scope', message: `needs ${PII_SCOPE}` })));
  }
  const columns: Partial<CustomerColumns> = {};
  if (fields.outletCode !== undefined) columns.outlet_code = fields.outletCode;
  if (fields.name !== undefined) columns.name = fields.name;
  if (fields.status !== undefined) columns.status = fields.status;
  if (fields.channel !== undefined) columns.channel = fields.channel;
  if (fields.priceGroup !== undefined) columns.price_group = fields.priceGroup;
  if (fields.routeId !== undefined) columns.route_id = fields.routeId;
  if (fields.creditLimit !== undefined) {
    columns.credit_limit_amount = fields.creditLimit === null ? null : acceptAmount(fields.creditLimit, '/creditLimit', caller.baseCurrency).toString();
    columns.credit_limit_currency = fields.creditLimit === null ? null : fields.creditLimit.currency;
  }
  if (fields.paymentTermsDays !== undefined) columns.payment_terms_days = fields.paymentTermsDays;
  if (fields.address !== undefined) columns.address = fields.address as Record<string, unknown> | null;
  if (fields.region !== undefined) columns.region = fields.region;
  if (fields.phone !== undefined) columns.phone = fields.phone;
  if (fields.taxId !== undefined) columns.tax_id = fields.taxId;
  if (fields.location?.gps !== undefined) {
    columns.gps_latitude = fields.location.gps === null ? null : String(fields.location.gps.latitude);
    columns.gps_longitude = fields.location.gps === null ? null : String(fields.location.gps.longitude);
  }
  if (fields.contact !== undefined) columns.contact = fields.contact as Record<string, unknown> | null;
  return columns;
}

function duplicateOutletCode(outletCode: string | undefined) {
  return (error: { code?: string; constraint?: string }): never => {
    if (error.code === '23505' && error.constraint === 'customers_organization_id_outlet_code_key') {
      throw new ApiError('business_rule', `Another customer already has the outlet code ${outletCode}.`, [
        { field: '/outletCode', code: 'duplicate_code', message: `${outletCode} is already used by another customer` },
      ]);
    }
    throw error;
  };
}

function notFound(id: string): ApiError {
  return new ApiError('not_found', `No customer ${id} in this organisation.`);
}
