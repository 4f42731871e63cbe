// Writes the sandbox distributor through the modules' own functions, acting as an operator, inside the bootstrap's
// transaction: the sandbox holds nothing the API could not have written, and every rule (references, price groups,
// empties, codes) and event applies to it as to a partner's writes. The synthetic data names records by its own
// local ids; each is mapped to the id the module gave the record it created.
import { addMemberIn } from '../../platform/access/members.js';
import { notify } from '../../platform/webhooks/notifications.js';
import { Decimal } from 'decimal.js';
import type { components } from '../../../generated/api-types.js';
import type { Actor } from '../../platform/access/actor.js';
import { roundToCurrency } from '../../domain/money.js';
import type { Tx } from '../../platform/database/transaction.js';
import { importCustomers } from '../customers/import.js';
import { replaceJourneyPlan } from '../journey-plans/service.js';
import { locations } from '../locations/service.js';
import { setPrices } from '../prices/service.js';
import { products } from '../products/service.js';
import { routes } from '../routes/service.js';
import { salespeople } from '../salespeople/service.js';
import { postStockAdjustment, type AdjustmentLine } from '../stock/documents.js';
import { createInvoice, voidInvoice } from '../invoices/documents.js';
import { issueCreditNote } from '../credit-notes/documents.js';
import { processReturn } from '../returns/documents.js';
import { recordPayment, reversePayment } from '../payments/documents.js';
import type { SandboxDistributor } from './synthetic-distributor.js';
import { writeStockHistory } from './synthetic-stock-history.js';
import { writeTrips } from './synthetic-trips.js';
import { writeFieldActivity } from './synthetic-field-activity.js';
import { writeOrders } from './synthetic-orders.js';

type Schemas = components['schemas'];

/**
 * Writes the synthetic distributor through the modules' own functions, in the order its records name each other:
 * master data (products and prices, routes with their vans and salespeople, outlets, journey plans), then the
 * documents (stock, trips, field activity, orders, invoices, credit notes and returns), then the owner's inbox.
 */
export async function writeDistributor(tx: Tx, actor: Actor, d: SandboxDistributor): Promise<void> {
  const idOf = new Map<string, string>(); // synthetic id -> the id the module gave the record
  await writeProductsAndPrices(tx, actor, d, idOf);
  await writeRoutesVansAndSalespeople(tx, actor, d, idOf);
  await writeOutlets(tx, actor, d, idOf);
  await writeJourneyPlans(tx, actor, d, idOf);
  await writeOpeningStock(tx, actor, d, idOf);
  await writeStockHistory(tx, actor, d, idOf);
  // Three weeks of trips, loaded from that stock (only where the organisation has the delivery module, as the
  // sandbox organisation has: the trips module refuses otherwise).
  if (actor.organization.deliveryModuleEnabled) await writeTrips(tx, actor, d, idOf);
  await writeFieldActivity(tx, actor, d, idOf);
  await writeOrders(tx, actor, d, idOf);
  const invoices = await writeInvoices(tx, actor, d, idOf);
  await writeCreditNotesAndReturns(tx, actor, invoices);
  await writeOwnerAndInbox(tx, actor);
}

const moneyIn = (currency: string) => (amount: string | null) => (amount === null ? null : { amount, currency });
const realIds = (idOf: ReadonlyMap<string, string>) => (id: string | null) =>
  id === null ? null : (idOf.get(id) ?? null);

/** Empties first (a returnable product names the empties it carries), then the price list. */
async function writeProductsAndPrices(
  tx: Tx,
  actor: Actor,
  d: SandboxDistributor,
  idOf: Map<string, string>,
): Promise<void> {
  const currency = actor.organization.baseCurrency;
  const money = moneyIn(currency);
  const codeOf = new Map(d.products.map((product) => [product.id, product.product_code]));
  for (const product of [...d.products].sort((a, b) => Number(b.is_empty) - Number(a.is_empty))) {
    const fields: Schemas['ProductFields'] = {
      productCode: product.product_code,
      name: product.name,
      brand: product.brand,
      category: product.category,
      status: product.status,
      packSize: product.pack_size,
      sellingUnits: product.selling_units,
      tracksStock: product.tracks_stock,
      taxRate: Number(product.tax_rate),
      isEmpty: product.is_empty,
      depositPrice: money(product.deposit_amount),
      empties: product.empties.map((empty) => ({
        productCode: codeOf.get(empty.productId)!,
        quantity: empty.quantity,
        per: empty.per as 'case' | 'bottle',
      })),
    };
    idOf.set(product.id, (await products.create(tx, actor, fields, { dms: product.product_code })).id);
  }
  await setPrices(
    tx,
    actor,
    d.prices.map((price) => ({
      productCode: price.product_code,
      priceGroup: price.price_group,
      unit: price.unit as 'case' | 'bottle' | 'piece',
      unitPrice: { amount: price.amount, currency },
      validFrom: price.valid_from,
    })),
  );
}

/** Routes and their vans and salespeople name each other: routes first, then the others, then the routes' links. */
async function writeRoutesVansAndSalespeople(
  tx: Tx,
  actor: Actor,
  d: SandboxDistributor,
  idOf: Map<string, string>,
): Promise<void> {
  const real = realIds(idOf);
  for (const route of d.routes) {
    idOf.set(
      route.id,
      (await routes.create(tx, actor, { routeCode: route.route_code, name: route.name }, { dms: route.route_code })).id,
    );
  }
  for (const location of d.locations) {
    idOf.set(
      location.id,
      (
        await locations.create(
          tx,
          actor,
          { code: location.code, name: location.name, routeId: real(location.route_id) },
          { dms: location.code },
        )
      ).id,
    );
  }
  for (const person of d.salespeople) {
    // Each salesman is a member of the organisation (no role): the DMS refuses a van document of a salesman who is not
    // (R03), and the sandbox's DMS connection takes the spec's examples (salesman SM01) as they are.
    const member = await addMemberIn(tx, actor.organization.id, {
      name: person.name,
      email: `${person.salesman_code.toLowerCase()}@sandbox.example.com`,
      role: 'none',
    });
    const fields = {
      salesmanCode: person.salesman_code,
      name: person.name,
      phone: person.phone,
      routeId: real(person.route_id),
      memberId: member.id,
    };
    idOf.set(person.id, (await salespeople.create(tx, actor, fields, { dms: person.salesman_code })).id);
  }
  for (const route of d.routes) {
    await routes.change(tx, actor, idOf.get(route.id)!, {
      salespersonId: real(route.salesperson_id),
      vanLocationId: real(route.van_location_id),
    });
  }
}

/** 300 outlets: the customers module's set-based import (the same rules as a create, a few statements in all). */
async function writeOutlets(tx: Tx, actor: Actor, d: SandboxDistributor, idOf: Map<string, string>): Promise<void> {
  const money = moneyIn(actor.organization.baseCurrency);
  const real = realIds(idOf);
  const outletIds = await importCustomers(
    tx,
    actor,
    d.outlets.map((outlet) => ({
      fields: {
        outletCode: outlet.outlet_code,
        name: outlet.name,
        status: outlet.status as Schemas['CustomerFields']['status'],
        channel: outlet.channel as NonNullable<Schemas['CustomerFields']['channel']>,
        priceGroup: outlet.price_group ?? null,
        routeId: real(outlet.route_id ?? null),
        creditLimit: money(outlet.credit_limit_amount ?? null),
        paymentTermsDays: outlet.payment_terms_days ?? 0,
        address: (outlet.address ?? null) as Schemas['CustomerFields']['address'],
        region: outlet.region ?? null,
        phone: outlet.phone ?? null,
        taxId: outlet.tax_id ?? null,
        contact: (outlet.contact ?? null) as Schemas['CustomerFields']['contact'],
        location: {
          gps:
            outlet.gps_latitude == null
              ? null
              : { latitude: Number(outlet.gps_latitude), longitude: Number(outlet.gps_longitude) },
        },
      },
      externalCodes: { dms: outlet.outlet_code },
    })),
  );
  d.outlets.forEach((outlet, index) => {
    idOf.set(outlet.id, outletIds[index]!);
  });
}

/** Each route's journey plan: its outlets' visits. */
async function writeJourneyPlans(
  tx: Tx,
  actor: Actor,
  d: SandboxDistributor,
  idOf: ReadonlyMap<string, string>,
): Promise<void> {
  for (const plan of d.journeyPlans) {
    const visits = d.visits
      .filter((visit) => visit.journey_plan_id === plan.id)
      .map((visit) => ({
        customerId: idOf.get(visit.customer_id)!,
        weekday: visit.weekday,
        sequence: visit.sequence,
        frequency: visit.frequency,
        ...(visit.week_parity === null ? {} : { weekParity: visit.week_parity }),
      }));
    await replaceJourneyPlan(tx, actor, { routeId: idOf.get(plan.route_id)!, visits } as Schemas['JourneyPlanReplace']);
  }
}

/**
 * The organisation's owner, and one notification in the inbox, so that the notifications operations have something to
 * read and mark read on a fresh sandbox (the reconciliation writes the real ones).
 */
async function writeOwnerAndInbox(tx: Tx, actor: Actor): Promise<void> {
  await addMemberIn(tx, actor.organization.id, {
    name: 'Sandbox Owner',
    email: 'owner@sandbox.example',
    role: 'owner',
  });
  await notify(
    tx,
    actor.organization.id,
    'sandbox_ready',
    'The sandbox is ready: 300 outlets, 40 products, two weeks of trips and a DMS connection (canonical, DIST001). Members who manage settings and the owner receive notifications such as DMS reconciliations with differences.',
  );
}

/**
 * A few invoices from the first main warehouse, through the invoices module's posting function: one case of three
 * beverages to each of the first outlets without a credit limit, at the wholesale case price (one of them voided),
 * so that partners see invoices, their empties lines and a void.
 */
async function writeInvoices(
  tx: Tx,
  actor: Actor,
  d: SandboxDistributor,
  idOf: Map<string, string>,
): Promise<{ id: string; customerId: string }[]> {
  const warehouse = d.locations.find((location) => location.kind === 'main');
  const wholesaleCase = new Map(
    d.prices
      .filter((price) => price.price_group === 'WHOLESALE' && price.unit === 'case')
      .map((price) => [price.product_code, price.amount]),
  );
  const sold = d.products
    .filter((product) => product.tracks_stock && !product.is_empty && wholesaleCase.has(product.product_code))
    .slice(0, 3);
  if (!warehouse || sold.length === 0) return [];
  const outlets = d.outlets
    .filter((outlet) => outlet.credit_limit_amount == null && outlet.status === 'active')
    .slice(0, 5);
  const open: { id: string; customerId: string }[] = [];
  const issueDate = new Date().toISOString().slice(0, 10);
  const paid: { customerId: string; invoiceId: string }[] = [];
  for (const [i, outlet] of outlets.entries()) {
    const posted = await createInvoice(tx, actor, {
      customerId: idOf.get(outlet.id)!,
      locationId: idOf.get(warehouse.id)!,
      issueDate,
      currency: actor.organization.baseCurrency,
      externalCodes: { dms: `CS-M01-${String(i + 1).padStart(6, '0')}` },
      lines: sold.map((product) => ({
        productId: idOf.get(product.id)!,
        unit: 'case' as const,
        quantity: 1,
        unitPrice: wholesaleCase.get(product.product_code)!,
      })),
    });
    if (i === outlets.length - 1) await voidInvoice(tx, actor, posted.id, 'Sandbox: entered twice');
    else {
      open.push({ id: posted.id, customerId: idOf.get(outlet.id)! });
      paid.push({ customerId: idOf.get(outlet.id)!, invoiceId: posted.id });
    }
  }
  await writePayments(tx, actor, paid, issueDate);
  return open;
}

/**
 * Collections on the first invoices, through the payments module's posting functions: one paid in full in cash,
 * one paid half by a cheque that bounced (reversed), one paid by mobile money with a rest left on the account, so
 * that partners see paid and open invoices, a receipt group of two and a reversal.
 */
async function writePayments(
  tx: Tx,
  actor: Actor,
  invoices: { customerId: string; invoiceId: string }[],
  paymentDate: string,
): Promise<void> {
  const currency = actor.organization.baseCurrency;
  const inCurrency = (amount: Decimal.Value) => ({ amount: roundToCurrency(amount, currency), currency });
  const [cash, cheque, mobile] = invoices;
  const balanceOf = async (id: string) =>
    new Decimal(
      (
        await tx
          .selectFrom('invoices')
          .select('balance')
          .where('organization_id', '=', actor.organization.id)
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).balance,
    );
  if (cash) {
    const balance = await balanceOf(cash.invoiceId);
    await recordPayment(tx, actor, {
      customerId: cash.customerId,
      method: 'cash',
      amount: inCurrency(balance),
      paymentDate,
      allocations: [{ invoiceId: cash.invoiceId, amount: inCurrency(balance) }],
    });
  }
  if (cheque) {
    const half = roundToCurrency((await balanceOf(cheque.invoiceId)).dividedBy(2), currency);
    const recorded = await recordPayment(tx, actor, {
      customerId: cheque.customerId,
      method: 'cheque',
      reference: '004512',
      amount: inCurrency(half),
      paymentDate,
      allocations: [{ invoiceId: cheque.invoiceId, amount: inCurrency(half) }],
    });
    await reversePayment(tx, actor, recorded.ids[0]!, 'Sandbox: cheque 004512 returned unpaid');
  }
  if (mobile) {
    const balance = await balanceOf(mobile.invoiceId);
    await recordPayment(tx, actor, {
      customerId: mobile.customerId,
      method: 'mobile_money',
      reference: 'MP-SANDBOX-0001',
      amount: inCurrency(balance.plus(10000)),
      paymentDate,
      allocations: [{ invoiceId: mobile.invoiceId, amount: inCurrency(balance) }],
      unallocated: inCurrency(10000),
    });
  }
}

/**
 * Through the returns and credit notes modules' posting functions: a return of one case of the first invoice's first
 * line (its credit note of type return), then an adjustment credit note against the second invoice carrying a DMS
 * code, so that partners see both kinds and can read one by code.
 */
async function writeCreditNotesAndReturns(
  tx: Tx,
  actor: Actor,
  invoices: { id: string; customerId: string }[],
): Promise<void> {
  if (invoices.length < 2) return;
  await processReturn(tx, actor, {
    invoiceId: invoices[0]!.id,
    reason: 'Sandbox: damaged in transport, resold',
    lines: [{ invoiceLineNumber: 1, unit: 'case', quantity: 1, condition: 'good' }],
  });
  await issueCreditNote(tx, actor, {
    customer: { id: invoices[1]!.customerId },
    invoiceId: invoices[1]!.id,
    reason: 'Sandbox: promotion price difference',
    externalCodes: { dms: 'CN0000001' },
    lines: [{ type: 'adjustment', description: 'Promotion rebate', quantity: 1, unitPrice: '5000' }],
  });
}

/**
 * Opening stock in every main warehouse: one adjustment each (reason OPENING) through the stock module's posting
 * function, so the ledger, the levels and the moving average cost start as a partner's own postings would leave them.
 * Beverages in cases at three quarters of their wholesale case price; empties in pieces at their deposit. The
 * quantities follow from each product's place in the catalogue (the seeded random streams of the other data are
 * left as they were).
 */
async function writeOpeningStock(
  tx: Tx,
  actor: Actor,
  d: SandboxDistributor,
  idOf: Map<string, string>,
): Promise<void> {
  const wholesaleCase = new Map(
    d.prices
      .filter((price) => price.price_group === 'WHOLESALE' && price.unit === 'case')
      .map((price) => [price.product_code, price.amount]),
  );
  for (const [w, warehouse] of d.locations.filter((location) => location.kind === 'main').entries()) {
    const lines = d.products.flatMap((product, i): AdjustmentLine[] => {
      if (!product.tracks_stock) return [];
      const cost = product.is_empty ? product.deposit_amount : wholesaleCase.get(product.product_code);
      if (!cost) return [];
      return [
        {
          productId: idOf.get(product.id)!,
          locationId: idOf.get(warehouse.id)!,
          unit: product.is_empty ? product.selling_units[0]! : 'case',
          quantity: product.is_empty ? 2_000 + ((i * 131 + w * 17) % 3_000) : 60 + ((i * 37 + w * 53) % 240),
          unitCost: product.is_empty
            ? cost
            : new Decimal(cost).times('0.75').toDecimalPlaces(0, Decimal.ROUND_HALF_UP).toFixed(0),
        },
      ];
    });
    if (lines.length > 0)
      await postStockAdjustment(tx, actor, { reasonCode: 'OPENING', note: 'Sandbox opening stock', lines });
  }
}
