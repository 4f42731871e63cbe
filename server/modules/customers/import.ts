// Many new customers at once, set-based (the sandbox's 300 outlets; later a DMS master-data import): the same rules
// as a create, checked for the whole batch in a few statements, then one multi-row insert of the customers, one of
// their external codes and one of their customer.created events. All or nothing, in the caller's transaction.
import type { components } from '../../../generated/api-types.js';
import type { Actor } from '../../platform/access/actor.js';
import type { Tx } from '../../platform/database/transaction.js';
import { uniqueViolation } from '../../platform/database/unique-violation.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { recordEvents } from '../../platform/events/outbox.js';
import { isCodeSystem, normaliseCode } from '../../platform/external-codes/external-codes.js';
import { newId } from '../../platform/ids.js';
import { referenceProblem } from '../../platform/resources/references.js';
import { priceGroupsWithPrices } from '../prices/repository.js';
import { CUSTOMER_RESOURCE } from './repository.js';
import { CUSTOMER_DEFAULTS, customerColumns, refuseUnknownPriceGroup } from './service.js';

type CustomerFields = components['schemas']['CustomerFields'];

export interface CustomerToImport {
  fields: CustomerFields & Required<Pick<CustomerFields, 'outletCode' | 'name' | 'channel'>>;
  externalCodes: Record<string, string>;
}

/** Creates the customers; answers their ids in the order given. Problems name the item (`/3/routeId`). */
export async function importCustomers(tx: Tx, actor: Actor, items: readonly CustomerToImport[]): Promise<string[]> {
  if (items.length === 0) return [];
  const organizationId = actor.organization.id;
  const groups = await priceGroupsWithPrices(tx, organizationId);
  const routeIds = [
    ...new Set(items.map((item) => item.fields.routeId).filter((id): id is string => typeof id === 'string')),
  ];
  const routes = new Set(
    routeIds.length === 0
      ? []
      : (
          await tx
            .selectFrom('routes')
            .select('id')
            .where('organization_id', '=', organizationId)
            .where('id', 'in', routeIds)
            .forShare()
            .execute()
        ).map((row) => row.id),
  );
  for (const system of new Set(items.flatMap((item) => Object.keys(item.externalCodes)))) {
    if (!(await isCodeSystem(tx, organizationId, system)))
      throw new ApiError(
        'business_rule',
        `The code system ${system} is not registered for this organisation (dms always is).`,
      );
  }

  const rows = [];
  for (const [index, { fields }] of items.entries()) {
    if (fields.priceGroup)
      await refuseUnknownPriceGroup(tx, organizationId, fields.priceGroup, `/${index}/priceGroup`, groups);
    if (fields.routeId && !routes.has(fields.routeId))
      throw referenceProblem(`/${index}/routeId`, `There is no route ${fields.routeId} in this organisation.`);
    rows.push({
      ...CUSTOMER_DEFAULTS,
      ...customerColumns(actor, fields),
      organization_id: organizationId,
      id: newId('cus'),
    });
  }
  const ids = rows.map((row) => row.id);
  await tx
    .insertInto('customers')
    .values(rows.map((row) => ({ ...row, outlet_code: row.outlet_code!, name: row.name!, channel: row.channel! })))
    .execute()
    .catch(
      uniqueViolation({
        customers_organization_id_outlet_code_key: () =>
          new ApiError(
            'business_rule',
            'An outlet code of the batch is already used by another customer, or twice in it.',
          ),
      }),
    );
  const codes = items.flatMap((item, index) =>
    Object.entries(item.externalCodes).map(([system, code]) => ({
      organization_id: organizationId,
      resource: CUSTOMER_RESOURCE,
      code_system: system,
      code: normaliseCode(code, `/${index}/externalCodes/${system}`),
      record_id: ids[index]!,
    })),
  );
  if (codes.length > 0) {
    await tx
      .insertInto('external_codes')
      .values(codes)
      .execute()
      .catch(
        uniqueViolation({
          external_codes_pkey: () =>
            new ApiError(
              'business_rule',
              'An external code of the batch already belongs to another customer, or is given twice in it.',
            ),
        }),
      );
  }
  await recordEvents(tx, organizationId, 'customer.created', CUSTOMER_RESOURCE, ids);
  return ids;
}
