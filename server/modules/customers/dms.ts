// Customers from the DMS (by outlet code), mapped onto this module's create and change (the same rules and events
// as the REST upsert; declared in its manifest's dmsHandlers, written with the DMS's kit). A new version updates it.
import type { components } from '../../../generated/api-types.js';
import { customers } from './service.js';
import { priceGroupsWithPrices } from '../prices/repository.js';
import type { BodyOf } from '../dms/canonical.js';
import { DmsWait, waitKeys } from '../dms/reasons.js';
import { routeByCode } from '../dms/handlers/lookup.js';
import type { DocumentHandler } from '../dms/handlers/types.js';
import { activeOf, idByCode } from '../dms/handlers/master-data.js';

type CustomerFields = components['schemas']['CustomerFields'];

export const customer: DocumentHandler = {
  async apply(tx, context, document) {
    const org = context.actor.organization.id;
    const body = document.document.body as BodyOf<'DmsCustomerDocument'>;
    if (body.priceGroup !== undefined && !(await priceGroupsWithPrices(tx, org)).includes(body.priceGroup)) {
      throw new DmsWait(`Price group ${body.priceGroup} has no prices yet.`, `price_group:${body.priceGroup}`);
    }
    const routeId = body.routeCode !== undefined ? (await routeByCode(tx, org, body.routeCode)).id : undefined;
    const base = context.actor.organization.baseCurrency;
    const fields: CustomerFields = {
      outletCode: document.number,
      name: body.name,
      status: activeOf(document.status) ? 'active' : 'inactive',
      ...(body.channel !== undefined ? { channel: body.channel } : {}),
      ...(body.priceGroup !== undefined ? { priceGroup: body.priceGroup } : {}),
      ...(routeId !== undefined ? { routeId } : {}),
      ...(body.phone !== undefined ? { phone: body.phone } : {}),
      ...(body.taxId !== undefined ? { taxId: body.taxId } : {}),
      ...(body.region !== undefined ? { region: body.region } : {}),
      ...(body.creditLimit !== undefined ? { creditLimit: { amount: body.creditLimit, currency: base } } : {}),
      ...(body.paymentTermsDays !== undefined ? { paymentTermsDays: body.paymentTermsDays } : {}),
    };
    const existing = await idByCode(tx, org, 'customers', 'outlet_code', document.number);
    const saved = existing
      ? await customers.change(tx, context.actor, existing, fields)
      : await customers.create(tx, context.actor, { channel: 'retail', ...fields }, { dms: document.number });
    return { table: 'customers', id: (saved as { id: string }).id, provides: [waitKeys.customer(document.number)] };
  },
};
