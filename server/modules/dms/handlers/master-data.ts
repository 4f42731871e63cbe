// Master data from the DMS: customers (by outlet code), products (by code), prices per price group, salesmen with
// their routes and route plans, warehouses and vans (matched, never created: a DMS location record must match a
// location of the service), and the DMS's reason codes. Each goes through its module's own create and change (the
// same rules and events as the REST upserts); a new version of the same key updates the record.
import type { components } from '../../../../generated/api-types.js';
import type { Tx } from '../../../platform/database/transaction.js';
import { customers } from '../../customers/service.js';
import { setPrices } from '../../prices/service.js';
import { priceGroupsWithPrices } from '../../prices/repository.js';
import { products } from '../../products/service.js';
import { replaceJourneyPlan } from '../../journey-plans/service.js';
import { replaceRouteOutlets } from '../../routes/outlets.js';
import { routes } from '../../routes/service.js';
import { salespeople } from '../../salespeople/service.js';
import type { BodyOf } from '../canonical.js';
import { DmsRejection, DmsWait, waitKeys } from '../reasons.js';
import { customerByCode, productsByCode, routeByCode } from './lookup.js';
import type { DocumentHandler } from './types.js';

type CustomerFields = components['schemas']['CustomerFields'];
type ProductFields = components['schemas']['ProductFields'];

const activeOf = (status: string) => status !== 'inactive';

/** The id of the record in `table` whose code column holds `code`, or null. */
async function idByCode(tx: Tx, organizationId: string, table: 'customers' | 'products' | 'salespeople' | 'routes', column: 'outlet_code' | 'product_code' | 'salesman_code' | 'route_code', code: string): Promise<string | null> {
  // The table and its code column are fixed by the signature; the column is compared with the code as a parameter.
  const row = await tx.selectFrom(table as 'customers').select('id').where('organization_id', '=', organizationId).where(column as 'outlet_code', '=', code).executeTakeFirst();
  return row?.id ?? null;
}

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
      outletCode: document.number, name: body.name, status: activeOf(document.status) ? 'active' : 'inactive',
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

export const product: DocumentHandler = {
  async apply(tx, context, document) {
    const org = context.actor.organization.id;
    const body = document.document.body as BodyOf<'DmsProductDocument'>;
    const fields: ProductFields = {
      productCode: document.number, name: body.name, status: activeOf(document.status) ? 'active' : 'inactive', packSize: body.packSize, taxRate: Number(body.taxRate),
      sellingUnits: body.sellingUnits ?? ['case', 'bottle'],
      ...(body.brand !== undefined ? { brand: body.brand } : {}),
      ...(body.category !== undefined ? { category: body.category } : {}),
      ...(body.isEmpty !== undefined ? { isEmpty: body.isEmpty } : {}),
      ...(body.tracksStock !== undefined ? { tracksStock: body.tracksStock } : {}),
      ...(body.depositAmount !== undefined ? { depositPrice: { amount: body.depositAmount, currency: context.actor.organization.baseCurrency } } : {}),
      ...(body.empties !== undefined ? { empties: body.empties } : {}),
    };
    // The empties it carries must have been received (each is a product of its own).
    await productsByCode(tx, org, (body.empties ?? []).map((empty) => empty.productCode));
    const existing = await idByCode(tx, org, 'products', 'product_code', document.number);
    const saved = existing ? await products.change(tx, context.actor, existing, fields) : await products.create(tx, context.actor, fields, { dms: document.number });
    return { table: 'products', id: (saved as { id: string }).id, provides: [waitKeys.product(document.number)] };
  },
};

export const price: DocumentHandler = {
  async apply(tx, context, document) {
    const body = document.document.body as BodyOf<'DmsPriceDocument'>;
    await productsByCode(tx, context.actor.organization.id, body.prices.map((p) => p.productCode));
    const currency = context.actor.organization.baseCurrency;
    const saved = await setPrices(tx, context.actor, body.prices.map((p) => ({
      productCode: p.productCode, priceGroup: body.priceGroup, unit: p.unit, unitPrice: { amount: p.amount, currency }, validFrom: body.validFrom ?? document.date,
    })));
    return { table: 'prices', id: saved[0]!.id, provides: [`price_group:${body.priceGroup}`] };
  },
};

type DmsVisit = NonNullable<BodyOf<'DmsSalesmanDocument'>['visits']>[number];

/**
 * The journey plan's visits of a salesman document, as the journey-plans module takes them (PUT /journey-plans, one
 * posting path): customers by outlet code (not received yet: a wait), each weekday's sequence in the order listed.
 * What the module would refuse by its field names (a biweekly visit without its parity) is refused here naming the
 * DMS visit.
 */
async function journeyPlanVisits(tx: Tx, organizationId: string, visits: readonly DmsVisit[]) {
  const next = new Map<number, number>();
  const planned = [];
  for (const [i, visit] of visits.entries()) {
    const frequency = visit.frequency ?? 'weekly';
    if (frequency === 'biweekly' && visit.weekParity === undefined) throw new DmsRejection('R09', `Visit ${i + 1} (${visit.outletCode}) is biweekly without weekParity (0: even ISO weeks, 1: odd ones).`);
    const sequence = (next.get(visit.weekday) ?? 0) + 1;
    next.set(visit.weekday, sequence);
    planned.push({ customerId: (await customerByCode(tx, organizationId, visit.outletCode)).id, weekday: visit.weekday, sequence, frequency,
      weekParity: frequency === 'biweekly' ? visit.weekParity! : null });
  }
  return planned;
}

export const salesman: DocumentHandler = {
  async apply(tx, context, document) {
    const org = context.actor.organization.id;
    const body = document.document.body as BodyOf<'DmsSalesmanDocument'>;
    const outletIds: string[] = [];
    for (const code of body.outlets ?? []) outletIds.push((await customerByCode(tx, org, code)).id);
    const visits = body.visits === undefined ? undefined : await journeyPlanVisits(tx, org, body.visits);
    const active = activeOf(document.status);
    const salespersonFields = { salesmanCode: body.salesmanCode, name: body.salesmanName, active, ...(body.phone !== undefined ? { phone: body.phone } : {}) };
    const existingPerson = await idByCode(tx, org, 'salespeople', 'salesman_code', body.salesmanCode);
    const person = existingPerson
      ? await salespeople.change(tx, context.actor, existingPerson, salespersonFields)
      : await salespeople.create(tx, context.actor, salespersonFields, { dms: body.salesmanCode });
    const van = await tx.selectFrom('locations').select('id').where('organization_id', '=', org).where('code', '=', `V_${document.number}-G`).executeTakeFirst();
    const routeFields = { routeCode: document.number, name: body.routeName, salespersonId: (person as { id: string }).id, active, ...(van ? { vanLocationId: van.id } : {}) };
    const existingRoute = await idByCode(tx, org, 'routes', 'route_code', document.number);
    const route = existingRoute
      ? await routes.change(tx, context.actor, existingRoute, routeFields)
      : await routes.create(tx, context.actor, routeFields, { dms: document.number });
    const routeId = (route as { id: string }).id;
    if (body.outlets !== undefined) await replaceRouteOutlets(tx, context.actor, routeId, outletIds);
    if (visits !== undefined) await replaceJourneyPlan(tx, context.actor, { routeId, visits });
    return { table: 'routes', id: routeId, provides: [waitKeys.route(document.number)] };
  },
};

export const warehouse: DocumentHandler = {
  async apply(tx, context, document) {
    const org = context.actor.organization.id;
    const row = await tx.selectFrom('locations').select(['id', 'active']).where('organization_id', '=', org).where('code', '=', document.number).executeTakeFirst();
    if (!row) throw new DmsRejection('R03', `The DMS location ${document.number} matches no location of the service. Set up the location with this code, then re-process.`);
    if (!row.active && activeOf(document.status)) throw new DmsRejection('R03', `The DMS location ${document.number} is linked to an inactive location; activate it, then re-process.`);
    return { table: 'locations', id: row.id, provides: [waitKeys.location(document.number)] };
  },
};

export const reasonCode: DocumentHandler = {
  async apply(tx, context, document) {
    const org = context.actor.organization.id;
    const body = document.document.body as BodyOf<'DmsReasonCodeDocument'>;
    await tx.insertInto('dms_reason_codes').values({ organization_id: org, code: document.number, kind: body.kind, description: body.description })
      .onConflict((conflict) => conflict.columns(['organization_id', 'code']).doUpdateSet((eb) => ({ kind: eb.ref('excluded.kind'), description: eb.ref('excluded.description'), updated_at: eb.fn<Date>('now') })))
      .execute();
    return { table: 'dms_reason_codes', id: document.number, provides: [waitKeys.reason(document.number)] };
  },
};
