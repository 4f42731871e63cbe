// The rules of customers: personal fields need customers:pii, money is in the base currency, the route and the
// price group exist, outlet codes and external codes are unique (see repository.ts), and every change writes its
// event in the same transaction.
import type { components } from '../../../generated/api-types.js';
import { PII_SCOPE } from '../../platform/access/scopes.js';
import { personalFieldsOf } from '../../platform/personal-fields.js';
import { apiDocument } from '../../platform/spec.js';
import type { Actor } from '../../platform/access/actor.js';
import { ApiError, type FieldError } from '../../platform/errors/api-error.js';
import { acceptAmount } from '../../domain/money.js';
import type { Tx } from '../../platform/database/transaction.js';
import { ROUTES, requireReference } from '../../platform/resources/references.js';
import type { ColumnsOf } from '../../platform/resources/table.js';
import { resourceService } from '../../platform/resources/service.js';
import { priceGroupsWithPrices } from '../prices/repository.js';
import { toCustomer } from './representation.js';
import { customerTable } from './repository.js';

type CustomerFields = components['schemas']['CustomerFields'];

/** The writable fields the spec marks `x-personal` (phone, taxId, location, contact): one list, the spec's. */
const PERSONAL_FIELDS = [...personalFieldsOf(apiDocument).topLevel('CustomerFields')];

type CustomerColumns = ColumnsOf<'customers'>;

/** The columns of a new customer for the fields a create leaves out. */
export const CUSTOMER_DEFAULTS = {
  status: 'active',
  price_group: null,
  route_id: null,
  credit_limit_amount: null,
  credit_limit_currency: null,
  payment_terms_days: 0,
  address: null,
  region: null,
  phone: null,
  tax_id: null,
  gps_latitude: null,
  gps_longitude: null,
  contact: null,
} satisfies Partial<CustomerColumns>;

export const customers = resourceService({
  table: customerTable,
  idPrefix: 'cus',
  events: { created: 'customer.created', updated: 'customer.updated' },
  defaults: CUSTOMER_DEFAULTS,
  requiredOnCreate: ['outletCode', 'name', 'channel'],
  toColumns,
  represent: (row, codes, actor) => toCustomer(row, codes, actor.scopes.has(PII_SCOPE)),
});

/** A customer's price group must be one that has prices, else nothing could be priced for it (issue found by partners: typos were stored silently). */
export async function refuseUnknownPriceGroup(
  tx: Tx,
  organizationId: string,
  priceGroup: string,
  field = '/priceGroup',
  known?: readonly string[],
): Promise<void> {
  const groups = known ?? (await priceGroupsWithPrices(tx, organizationId));
  if (groups.includes(priceGroup)) return;
  const message =
    groups.length > 0
      ? `must be one of the price groups with prices: ${groups.join(', ')}`
      : 'must be a price group with prices, and this organisation has none yet (PUT /prices creates them)';
  throw new ApiError('business_rule', `\`priceGroup\` ${message}; "${priceGroup}" has no prices.`, [
    { field, code: 'business_rule', message },
  ]);
}

/** The columns a set of fields writes, after the checks that read the database (price group, route). */
async function toColumns(tx: Tx, actor: Actor, fields: CustomerFields): Promise<Partial<CustomerColumns>> {
  const columns = customerColumns(actor, fields);
  if (fields.priceGroup !== undefined && fields.priceGroup !== null)
    await refuseUnknownPriceGroup(tx, actor.organization.id, fields.priceGroup);
  if (fields.routeId !== undefined)
    await requireReference(tx, actor.organization.id, ROUTES, fields.routeId, '/routeId');
  return columns;
}

/**
 * The columns a set of fields writes, checked without the database: personal fields need customers:pii, money is in
 * the base currency. The references (price group, route) are the caller's to check (toColumns, importCustomers).
 */
export function customerColumns(actor: Actor, fields: CustomerFields): Partial<CustomerColumns> {
  const personal = PERSONAL_FIELDS.filter((field) => field in fields);
  if (personal.length > 0 && !actor.scopes.has(PII_SCOPE)) {
    throw new ApiError(
      'insufficient_scope',
      `Setting ${personal.join(', ')} needs the scope ${PII_SCOPE}, which the key does not have.`,
      personal.map(
        (field): FieldError => ({ field: `/${field}`, code: 'insufficient_scope', message: `needs ${PII_SCOPE}` }),
      ),
    );
  }
  const columns: Partial<CustomerColumns> = {};
  if (fields.outletCode !== undefined) columns.outlet_code = fields.outletCode;
  if (fields.name !== undefined) columns.name = fields.name;
  if (fields.status !== undefined) columns.status = fields.status;
  if (fields.channel !== undefined) columns.channel = fields.channel;
  if (fields.priceGroup !== undefined) columns.price_group = fields.priceGroup;
  if (fields.routeId !== undefined) columns.route_id = fields.routeId;
  if (fields.creditLimit !== undefined) {
    columns.credit_limit_amount =
      fields.creditLimit === null
        ? null
        : acceptAmount(fields.creditLimit, '/creditLimit', actor.organization.baseCurrency).toString();
    columns.credit_limit_currency = fields.creditLimit === null ? null : fields.creditLimit.currency;
  }
  if (fields.paymentTermsDays !== undefined) columns.payment_terms_days = fields.paymentTermsDays;
  if (fields.address !== undefined) columns.address = fields.address;
  if (fields.region !== undefined) columns.region = fields.region;
  if (fields.phone !== undefined) columns.phone = fields.phone;
  if (fields.taxId !== undefined) columns.tax_id = fields.taxId;
  if (fields.location?.gps !== undefined) {
    columns.gps_latitude = fields.location.gps === null ? null : String(fields.location.gps.latitude);
    columns.gps_longitude = fields.location.gps === null ? null : String(fields.location.gps.longitude);
  }
  if (fields.contact !== undefined) columns.contact = fields.contact;
  return columns;
}
