// The exact JSON of a customer (spec: components/schemas/Customer). Personal fields only with customers:pii.
import type { components } from '../../../generated/api-types.js';
import { formatAmount } from '../../domain/money.js';
import type { CustomerRow } from './repository.js';

export type Customer = components['schemas']['Customer'];
type Address = components['schemas']['Address'];
type Contact = components['schemas']['CustomerContact'];

export function toCustomer(row: CustomerRow, externalCodes: Record<string, string>, includePii: boolean): Customer {
  const customer: Customer = {
    id: row.id,
    outletCode: row.outlet_code,
    name: row.name,
    status: row.status as Customer['status'],
    channel: row.channel as Customer['channel'],
    priceGroup: row.price_group,
    routeId: row.route_id,
    creditLimit:
      row.credit_limit_amount === null
        ? null
        : {
            amount: formatAmount(row.credit_limit_amount, row.credit_limit_currency!),
            currency: row.credit_limit_currency!,
          },
    paymentTermsDays: row.payment_terms_days,
    address: row.address === null ? null : { line2: null, district: null, ...(row.address as Address) },
    region: row.region,
    externalCodes,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
  if (includePii) {
    customer.phone = row.phone;
    customer.taxId = row.tax_id;
    customer.location = {
      gps:
        row.gps_latitude === null ? null : { latitude: Number(row.gps_latitude), longitude: Number(row.gps_longitude) },
    };
    customer.contact = row.contact === null ? null : { phone: null, email: null, ...(row.contact as Contact) };
  }
  return customer;
}
