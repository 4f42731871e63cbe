// Sales orders' posting functions (tx, actor, command): take an order (createOrder), cancel it (cancelOrder) and
// mark it invoiced (markOrderInvoiced, for the invoices module). Each runs in the caller's transaction: the order,
// its lines, its number and its event, or nothing at all. REST routes, the operator CLI, the sandbox and the DMS
// handlers call these same functions.
import { Decimal } from 'decimal.js';
import { sql } from 'kysely';
import type { Actor } from '../../platform/access/actor.js';
import { nextDocumentNumber } from '../../domain/documents/numbers.js';
import {
  acceptAmount,
  documentTotals,
  lineAmounts,
  MAX_AMOUNT,
  type DocumentTotals,
  type LineAmounts,
  type Money,
} from '../../domain/money.js';
import { refuseClosedPeriod } from '../../domain/periods.js';
import { dateProblem } from '../../platform/dates.js';
import type { Tx } from '../../platform/database/transaction.js';
import { ApiError, type FieldError } from '../../platform/errors/api-error.js';
import { recordEvent } from '../../platform/events/outbox.js';
import {
  assignCodes,
  findRecordIdByCode,
  isCodeSystem,
  normaliseCode,
} from '../../platform/external-codes/external-codes.js';
import { newId } from '../../platform/ids.js';
import { ORDER_CREATED, orderLifecycle, type OrderStatus } from './lifecycle.js';
import { findOrder, ORDER_RESOURCE } from './repository.js';
import type { Order } from './representation.js';
import { readOrder as readOrderIfAny } from './service.js';

export type OrderUnit = 'case' | 'bottle' | 'piece';

/** A record named by its external code in a code system (`dms` or a registered partner system). */
export interface CodeRef {
  system: string;
  code: string;
}

export interface OrderLineCommand {
  /** The product by id, or by code (`product`): exactly one. */
  productId?: string;
  product?: CodeRef;
  unit: OrderUnit;
  quantity: number;
  /** Excluding tax; defaults to the price of the customer's price group for the product and unit on the order date. */
  unitPrice?: Money;
  /** An amount off the line. */
  discount?: Money;
}

export interface CreateOrderCommand {
  /** The customer by id, or by code (`customer`): exactly one. */
  customerId?: string;
  customer?: CodeRef;
  /** YYYY-MM-DD */
  orderDate: string;
  /** The organisation's base currency when absent. */
  currency?: string;
  salespersonId?: string | null;
  locationId?: string | null;
  note?: string | null;
  /** The caller's own codes of the order, by code system (`dms` or a registered one): read it back by code. */
  externalCodes?: Record<string, string>;
  lines: OrderLineCommand[];
}

export interface CancelOrderCommand {
  orderId: string;
  reason: string;
}

/** The amounts a line gives itself, accepted in the order's currency (undefined when absent). */
interface GivenAmounts {
  unitPrice: Decimal | undefined;
  discount: Decimal | undefined;
}

/** The order's lines priced: each line's unit price and discount, its amounts, and the order's totals. */
interface PricedOrder {
  priced: { unitPrice: Decimal; discount: Decimal }[];
  amounts: LineAmounts[];
  totals: DocumentTotals;
}

/**
 * Takes a sales order: checks it, prices its lines, and writes it `open` with its number and `order.created`. The
 * steps: check the shape and currency, load the customer, products and references, plan the prices, write.
 */
export async function createOrder(tx: Tx, actor: Actor, command: CreateOrderCommand): Promise<Order> {
  const organizationId = actor.organization.id;
  checkOrderShape(command);
  const currency = orderCurrency(actor, command);
  const given = command.lines.map(
    (line, i): GivenAmounts => ({
      unitPrice:
        line.unitPrice === undefined ? undefined : acceptAmount(line.unitPrice, `/lines/${i}/unitPrice`, currency),
      discount: line.discount === undefined ? undefined : acceptAmount(line.discount, `/lines/${i}/discount`, currency),
    }),
  );
  await refuseClosedPeriod(tx, organizationId, command.orderDate, '/orderDate');
  const customer = await resolveCustomer(tx, organizationId, command);
  const products = await resolveProducts(tx, organizationId, command.lines);
  // The header's other references, then each line's unit, price and discount (422 business_rule naming each field).
  const problems = await checkOrderReferences(tx, organizationId, command);
  const listPrices = await priceList(tx, organizationId, customer.priceGroup, currency, command.orderDate, [
    ...new Set(products.map((product) => product.id)),
  ]);
  const priced = priceOrderLines(command, { customer, products, given, listPrices, currency }, problems);
  const id = newId('ord');
  await writeOrder(tx, organizationId, command, { id, customerId: customer.id, currency, products, priced });
  return readOrder(tx, actor, id);
}

/** The shape first (400): exactly one way to name each record, a storable date. */
function checkOrderShape(command: CreateOrderCommand): void {
  const shape: FieldError[] = [];
  exactlyOne(shape, command.customerId, command.customer, '/customerId', '/customer');
  command.lines.forEach((line, i) => {
    exactlyOne(shape, line.productId, line.product, `/lines/${i}/productId`, `/lines/${i}/product`);
  });
  const dateIssue = dateProblem(command.orderDate);
  if (dateIssue) shape.push({ field: '/orderDate', code: 'invalid_field', message: dateIssue });
  if (shape.length > 0) {
    throw new ApiError(
      shape.every((p) => p.code === 'required_field') ? 'required_field' : 'invalid_field',
      shape.length === 1
        ? `${shape[0]!.field.slice(1)}: ${shape[0]!.message}.`
        : 'Several fields are invalid; errors[] names each.',
      shape,
    );
  }
}

/** The order's currency: the base currency, given or not (422 currency_not_supported for another). */
function orderCurrency(actor: Actor, command: CreateOrderCommand): string {
  const currency = command.currency ?? actor.organization.baseCurrency;
  if (currency !== actor.organization.baseCurrency) {
    throw new ApiError(
      'currency_not_supported',
      `Orders are taken in the organisation's base currency ${actor.organization.baseCurrency}; got ${currency}.`,
      [{ field: '/currency', code: 'currency_not_supported', message: `must be ${actor.organization.baseCurrency}` }],
    );
  }
  return currency;
}

/** The salesperson and location the order names, each the organisation's: the problems found (thrown with the lines' own). */
async function checkOrderReferences(
  tx: Tx,
  organizationId: string,
  command: CreateOrderCommand,
): Promise<FieldError[]> {
  const problems: FieldError[] = [];
  if (command.salespersonId != null) {
    const found = await tx
      .selectFrom('salespeople')
      .select('id')
      .where('organization_id', '=', organizationId)
      .where('id', '=', command.salespersonId)
      .executeTakeFirst();
    if (!found)
      problems.push({
        field: '/salespersonId',
        code: 'business_rule',
        message: `there is no salesperson ${command.salespersonId} in this organisation`,
      });
  }
  if (command.locationId != null) {
    const found = await tx
      .selectFrom('locations')
      .select('id')
      .where('organization_id', '=', organizationId)
      .where('id', '=', command.locationId)
      .executeTakeFirst();
    if (!found)
      problems.push({
        field: '/locationId',
        code: 'location_not_found',
        message: `there is no location ${command.locationId} in this organisation`,
      });
  }
  return problems;
}

/**
 * Each line in a selling unit of its product, at its own price or its customer's price group's, its discount not
 * above its gross; 422 naming every problem (the references' first), and for a total too large.
 */
function priceOrderLines(
  command: CreateOrderCommand,
  facts: {
    customer: { priceGroup: string | null };
    products: readonly ProductFacts[];
    given: readonly GivenAmounts[];
    listPrices: ReadonlyMap<string, string>;
    currency: string;
  },
  problems: FieldError[],
): PricedOrder {
  const { customer, products, given, listPrices, currency } = facts;
  const amounts: LineAmounts[] = [];
  const priced: { unitPrice: Decimal; discount: Decimal }[] = [];
  command.lines.forEach((line, i) => {
    const product = products[i]!;
    if (!product.sellingUnits.includes(line.unit)) {
      problems.push({
        field: `/lines/${i}/unit`,
        code: 'business_rule',
        message: `product ${product.id} is sold in ${product.sellingUnits.join(', ') || 'no unit'}, not ${line.unit}`,
      });
      return;
    }
    const listPrice = customer.priceGroup === null ? undefined : listPrices.get(`${product.id}|${line.unit}`);
    const unitPrice = given[i]!.unitPrice ?? (listPrice === undefined ? undefined : new Decimal(listPrice));
    if (unitPrice === undefined) {
      problems.push({
        field: `/lines/${i}/unitPrice`,
        code: 'business_rule',
        message:
          customer.priceGroup === null
            ? 'the customer has no price group, so the line needs a unitPrice'
            : `no ${currency} price of price group ${customer.priceGroup} for product ${product.id} per ${line.unit} valid on ${command.orderDate}; give a unitPrice`,
      });
      return;
    }
    const discount = given[i]!.discount ?? new Decimal(0);
    const gross = unitPrice.times(line.quantity);
    if (gross.greaterThanOrEqualTo(MAX_AMOUNT.toString())) {
      problems.push({
        field: `/lines/${i}/quantity`,
        code: 'business_rule',
        message: `quantity x unitPrice must be less than ${MAX_AMOUNT.toFixed()}`,
      });
      return;
    }
    if (discount.greaterThan(gross)) {
      problems.push({
        field: `/lines/${i}/discount`,
        code: 'business_rule',
        message: `the discount is more than the line's quantity x unitPrice (${gross.toFixed()})`,
      });
      return;
    }
    priced[i] = { unitPrice, discount };
    amounts[i] = lineAmounts({ quantity: line.quantity, unitPrice, discount, taxRate: product.taxRate }, currency);
  });
  if (problems.length > 0) {
    throw new ApiError(
      'business_rule',
      problems.length === 1
        ? `${problems[0]!.field.slice(1)}: ${problems[0]!.message}.`
        : 'The order breaks several rules; errors[] names each.',
      problems,
    );
  }
  const totals = documentTotals(amounts, currency);
  if (new Decimal(totals.total).greaterThanOrEqualTo(MAX_AMOUNT.toString())) {
    throw new ApiError('business_rule', `The order's total must be less than ${MAX_AMOUNT.toFixed()}.`, [
      { field: '/lines', code: 'business_rule', message: `the total ${totals.total} is too large` },
    ]);
  }
  return { priced, amounts, totals };
}

/** Writes the order: its number, its row (open), its lines, its codes and `order.created`. */
async function writeOrder(
  tx: Tx,
  organizationId: string,
  command: CreateOrderCommand,
  plan: { id: string; customerId: string; currency: string; products: readonly ProductFacts[]; priced: PricedOrder },
): Promise<void> {
  const {
    id,
    products,
    priced: { priced, amounts, totals },
  } = plan;
  const number = await nextDocumentNumber(tx, organizationId, 'sales_order', 'ORD');
  await tx
    .insertInto('sales_orders')
    .values({
      organization_id: organizationId,
      id,
      number,
      customer_id: plan.customerId,
      status: orderLifecycle.initial,
      order_date: command.orderDate,
      currency: plan.currency,
      salesperson_id: command.salespersonId ?? null,
      location_id: command.locationId ?? null,
      subtotal: totals.subtotal,
      discount: totals.discount,
      tax: totals.tax,
      total: totals.total,
      note: command.note ?? null,
    })
    .execute();
  await tx
    .insertInto('sales_order_lines')
    .values(
      command.lines.map((line, i) => ({
        organization_id: organizationId,
        order_id: id,
        line_number: i + 1,
        product_id: products[i]!.id,
        unit: line.unit,
        quantity: line.quantity,
        unit_price: priced[i]!.unitPrice.toFixed(),
        discount: amounts[i]!.discount,
        tax_rate: products[i]!.taxRate,
        amount: amounts[i]!.amount,
        tax: amounts[i]!.tax,
      })),
    )
    .execute();
  if (command.externalCodes && Object.keys(command.externalCodes).length > 0)
    await assignCodes(tx, organizationId, ORDER_RESOURCE, id, command.externalCodes);
  await recordEvent(tx, organizationId, ORDER_CREATED, ORDER_RESOURCE, id);
}

/** Cancels an open order with a reason (409 invalid_state otherwise; 422 period_closed when its date is closed). */
export async function cancelOrder(tx: Tx, actor: Actor, command: CancelOrderCommand): Promise<Order> {
  const organizationId = actor.organization.id;
  const order = await requireOrder(tx, organizationId, command.orderId);
  orderLifecycle.next(order.status as OrderStatus, 'cancel', order.id); // 409 before anything else
  await refuseClosedPeriod(tx, organizationId, order.order_date, '/orderDate');
  const reason = command.reason.trim();
  if (reason.length === 0)
    throw new ApiError('invalid_field', 'reason: must not be blank.', [
      { field: '/reason', code: 'invalid_field', message: 'must not be blank' },
    ]);
  // The reason and time first, while still open (the guarded move below then holds the CHECK that a cancelled order has both).
  await tx
    .updateTable('sales_orders')
    .set((eb) => ({ cancel_reason: reason, cancelled_at: eb.fn<Date>('now') }))
    .where('organization_id', '=', organizationId)
    .where('id', '=', order.id)
    .where('status', '=', 'open')
    .execute();
  const { event } = await orderLifecycle.move(
    tx,
    { table: 'sales_orders', organizationId, id: order.id, from: order.status as OrderStatus },
    'cancel',
  );
  await recordEvent(tx, organizationId, event, ORDER_RESOURCE, order.id);
  return readOrder(tx, actor, order.id);
}

/** Marks an open order invoiced: the invoices module calls it when an invoice names the order. */
export async function markOrderInvoiced(tx: Tx, actor: Actor, orderId: string): Promise<Order> {
  const organizationId = actor.organization.id;
  const order = await requireOrder(tx, organizationId, orderId);
  const { event } = await orderLifecycle.move(
    tx,
    { table: 'sales_orders', organizationId, id: order.id, from: order.status as OrderStatus },
    'invoice',
  );
  await recordEvent(tx, organizationId, event, ORDER_RESOURCE, order.id);
  return readOrder(tx, actor, order.id);
}

async function requireOrder(tx: Tx, organizationId: string, id: string) {
  const order = await findOrder(tx, organizationId, id);
  if (!order) throw new ApiError('not_found', `No order ${id} in this organisation.`);
  return order;
}

async function readOrder(tx: Tx, actor: Actor, id: string): Promise<Order> {
  return (await readOrderIfAny(tx, actor, id))!;
}

function exactlyOne(problems: FieldError[], id: unknown, ref: unknown, idField: string, refField: string): void {
  if (id === undefined && ref === undefined)
    problems.push({
      field: idField,
      code: 'required_field',
      message: `give ${idField.split('/').pop()} or ${refField.split('/').pop()}`,
    });
  else if (id !== undefined && ref !== undefined) {
    problems.push({
      field: idField,
      code: 'invalid_field',
      message: `give ${idField.split('/').pop()} or ${refField.split('/').pop()}, not both`,
    });
  }
}

/** The record a code names, or the 422 of `notFound` (an unknown code system is 422 business_rule). */
async function recordIdByCode(
  tx: Tx,
  organizationId: string,
  resource: string,
  ref: CodeRef,
  field: string,
): Promise<string | null> {
  const code = normaliseCode(ref.code, `${field}/code`);
  if (!(await isCodeSystem(tx, organizationId, ref.system))) {
    throw new ApiError('business_rule', `${ref.system} is not a code system of this organisation.`, [
      {
        field: `${field}/system`,
        code: 'unknown_code_system',
        message: `${ref.system} is neither dms nor a registered partner system`,
      },
    ]);
  }
  return findRecordIdByCode(tx, organizationId, resource, ref.system, code);
}

async function resolveCustomer(
  tx: Tx,
  organizationId: string,
  command: CreateOrderCommand,
): Promise<{ id: string; priceGroup: string | null }> {
  const field = command.customerId !== undefined ? '/customerId' : '/customer';
  const id =
    command.customerId ?? (await recordIdByCode(tx, organizationId, 'customer', command.customer!, '/customer'));
  const row =
    id === null
      ? undefined
      : await tx
          .selectFrom('customers')
          .select(['id', 'price_group'])
          .where('organization_id', '=', organizationId)
          .where('id', '=', id)
          .executeTakeFirst();
  if (!row) {
    const what =
      command.customerId !== undefined
        ? `id ${command.customerId}`
        : `code ${command.customer!.code} in code system ${command.customer!.system}`;
    throw new ApiError('customer_not_found', `No customer with ${what} in this organisation.`, [
      {
        field: command.customerId !== undefined ? field : '/customer/code',
        code: 'customer_not_found',
        message: `no customer with ${what}`,
      },
    ]);
  }
  return { id: row.id, priceGroup: row.price_group };
}

interface ProductFacts {
  id: string;
  sellingUnits: string[];
  taxRate: string;
}

/** Each line's product, in line order; 422 product_not_found naming every line whose product is not the organisation's. */
async function resolveProducts(tx: Tx, organizationId: string, lines: OrderLineCommand[]): Promise<ProductFacts[]> {
  const ids: (string | null)[] = [];
  for (const [i, line] of lines.entries()) {
    ids.push(
      line.productId ?? (await recordIdByCode(tx, organizationId, 'product', line.product!, `/lines/${i}/product`)),
    );
  }
  const known = ids.filter((id): id is string => id !== null);
  const rows =
    known.length === 0
      ? []
      : await tx
          .selectFrom('products')
          .select(['id', 'selling_units', 'tax_rate'])
          .where('organization_id', '=', organizationId)
          .where('id', 'in', [...new Set(known)])
          .execute();
  const byId = new Map(
    rows.map((row) => [row.id, { id: row.id, sellingUnits: row.selling_units, taxRate: row.tax_rate }]),
  );
  const missing: FieldError[] = [];
  lines.forEach((line, i) => {
    if (ids[i] !== null && byId.has(ids[i]!)) return;
    const what =
      line.productId !== undefined
        ? `id ${line.productId}`
        : `code ${line.product!.code} in code system ${line.product!.system}`;
    missing.push({
      field: line.productId !== undefined ? `/lines/${i}/productId` : `/lines/${i}/product/code`,
      code: 'product_not_found',
      message: `no product with ${what} in this organisation`,
    });
  });
  if (missing.length > 0)
    throw new ApiError(
      'product_not_found',
      missing.length === 1
        ? `${missing[0]!.field.slice(1)}: ${missing[0]!.message}.`
        : 'Lines name products that are not in this organisation; errors[] names each.',
      missing,
    );
  return ids.map((id) => byId.get(id!)!);
}

/**
 * The price group's prices for the products, by `productId|unit`: the price with the latest validFrom on or before
 * the order date, in the order's currency. Empty when the customer has no price group.
 */
async function priceList(
  tx: Tx,
  organizationId: string,
  priceGroup: string | null,
  currency: string,
  orderDate: string,
  productIds: string[],
): Promise<Map<string, string>> {
  if (priceGroup === null || productIds.length === 0) return new Map();
  const rows = await tx
    .selectFrom('prices')
    .select(['product_id', 'unit', 'amount'])
    .where('organization_id', '=', organizationId)
    .where('product_id', 'in', productIds)
    .where('price_group', '=', priceGroup)
    // The order date as a DATE parameter: a JS Date would be a timestamp in the session's time zone.
    .where('currency', '=', currency)
    .where('valid_from', '<=', sql<Date>`cast(${orderDate} as date)`)
    .orderBy('valid_from')
    .execute();
  return new Map(rows.map((row) => [`${row.product_id}|${row.unit}`, row.amount])); // later validFrom overwrites earlier
}
