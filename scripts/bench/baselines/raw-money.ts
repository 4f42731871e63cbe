// Raw pg baselines of the money documents (issue 13's bench, money.ts; the HTTP routes of raw-pg.ts): what
// server/modules/invoices createInvoice (documents.ts) sends, statement for statement and in the same order, written
// by hand with plain pg:
//    1. the organisation's row FOR SHARE (refuseClosedPeriod: the books' closing date)
//    2. the customer (credit limit, payment terms)
//    3. the lines' products          4. the location             (stock's resolveLines)
//    5. the location's kind (a van sale would read its trip here; the bench sells from a warehouse)
//    6. the products' tax rates and empties     7. the empties' products      (readProducts, twice)
//    8-14. the goods and their empties off the location: valuations created at zero and locked, levels created at
//          zero and locked (byte order), the movements, the levels and valuations updated (raw-stock.ts
//          rawPostMovements, as createInvoice calls ledger.ts postMovements)
//   15. what the customer holds of each empty, created at zero   16. locked FOR UPDATE in (customer, product) order
//   17. the empties movements (issued_with_sale)                 18. the holdings updated   (empties.ts)
//   19. the customer's balance row created at zero               20. locked FOR UPDATE      (lockCustomerBalance)
//   21. the invoice number          22. the invoice             23. its lines
//   24. the account entry           25. the customer's balance  26. the invoice's balance  (postAccountEntries)
//   27. its invoice.created event
// The caller sends BEGIN and COMMIT around it; the HTTP route adds the Idempotency-Key's claim before, and the
// read-back (the invoice, its lines) and the stored result after, as the service's route does: 33 round trips in
// all, as in the service. The statements are hand-written equivalents, not Kysely's text: sets go as arrays or one
// JSON parameter (ANY, unnest, jsonb_to_recordset) where Kysely binds one parameter per value. Locks, rows written,
// their order and the checks are the same; money.ts checks once per run that both write the same rows. The
// arithmetic is the domain's own (server/domain/money.ts lineAmounts, documentTotals, formatAmount): the money
// rules are not what the ratio measures. Only what the bench posts is supported: sale lines from an active
// warehouse, no van sale, no order, no salesperson.
import { Decimal } from 'decimal.js';
import type pg from 'pg';
import { documentTotals, formatAmount, lineAmounts, type LineAmounts } from '../../../server/domain/money.js';
import { newId } from '../../../server/platform/ids.js';
import { RawRefusal, rawPostMovements } from './raw-stock.js';

type Client = pg.PoolClient | pg.Client;
type Unit = 'case' | 'bottle' | 'piece';

export interface RawInvoiceCommand {
  customerId: string;
  locationId: string;
  /** YYYY-MM-DD. */
  issueDate: string;
  currency: string;
  /** Sale lines; prices and discounts as decimal strings in the currency. */
  lines: { productId: string; unit: Unit; quantity: number; unitPrice: string; discount?: string }[];
}

interface ProductRow {
  id: string;
  pack_size: number;
  tax_rate: string;
  is_empty: boolean;
  tracks_stock: boolean;
  empties: { productId: string; quantity: number; per: 'case' | 'bottle' }[] | null;
}
interface Plan {
  lineNumber: number;
  kind: 'sale' | 'empties';
  productId: string;
  unit: Unit;
  quantity: number;
  unitPrice: string;
  taxRate: string;
  amounts: LineAmounts;
  baseQuantity: number;
}

/** Creates and posts an invoice as createInvoice does (statements 1 to 27); answers its id and number. */
export async function rawCreateInvoice(
  client: Client,
  organizationId: string,
  command: RawInvoiceCommand,
): Promise<{ id: string; number: string }> {
  const { currency } = command;
  // 1. The books' closing date, the organisation's row shared-locked against a period close.
  const {
    rows: [organization],
  } = await client.query<{ through: string | null }>(
    `SELECT to_char(books_closed_through, 'YYYY-MM-DD') AS through FROM organizations WHERE id = $1 FOR SHARE`,
    [organizationId],
  );
  if (organization?.through && command.issueDate <= organization.through) throw new RawRefusal('business_rule');
  // 2. The customer.
  const {
    rows: [customer],
  } = await client.query<{ id: string; credit_limit_amount: string | null; payment_terms_days: number }>(
    'SELECT id, credit_limit_amount, payment_terms_days FROM customers WHERE organization_id = $1 AND id = $2',
    [organizationId, command.customerId],
  );
  if (!customer) throw new RawRefusal('not_found');
  if (command.lines.length === 0) throw new RawRefusal('business_rule');
  // 3, 4. The products and the location, refused as resolveLines refuses them.
  const productIds = [...new Set(command.lines.map((line) => line.productId))];
  const resolved = await client.query<{ id: string; pack_size: number; tracks_stock: boolean; is_empty: boolean }>(
    'SELECT id, pack_size, tracks_stock, is_empty FROM products WHERE organization_id = $1 AND id = ANY($2::text[])',
    [organizationId, productIds],
  );
  const locations = await client.query<{ id: string; active: boolean }>(
    'SELECT id, active FROM locations WHERE organization_id = $1 AND id = ANY($2::text[])',
    [organizationId, [command.locationId]],
  );
  if (resolved.rows.length !== productIds.length) throw new RawRefusal('not_found');
  if (resolved.rows.some((row) => !row.tracks_stock) || locations.rows[0]?.active !== true)
    throw new RawRefusal('business_rule');
  for (const line of command.lines) {
    if (!Number.isSafeInteger(line.quantity) || line.quantity <= 0) throw new RawRefusal('business_rule');
    if (
      line.discount !== undefined &&
      new Decimal(line.discount).greaterThan(new Decimal(line.unitPrice).times(line.quantity))
    )
      throw new RawRefusal('business_rule');
  }
  const dueDate = addDays(command.issueDate, customer.payment_terms_days);
  // 5. The location's kind: a van sale is not what the bench posts.
  const {
    rows: [location],
  } = await client.query<{ kind: string }>('SELECT kind FROM locations WHERE organization_id = $1 AND id = $2', [
    organizationId,
    command.locationId,
  ]);
  if (location!.kind === 'van') throw new RawRefusal('business_rule');

  // 6. The products' tax rates and the empties they carry; the goods lines, then one empties line per empty.
  const products = await readProducts(client, organizationId, productIds);
  const plans: Plan[] = command.lines.map((line, i) => {
    const product = products.get(line.productId)!;
    const taxRate = product.tax_rate;
    return {
      lineNumber: i + 1,
      kind: 'sale',
      productId: line.productId,
      unit: line.unit,
      quantity: line.quantity,
      unitPrice: line.unitPrice,
      taxRate,
      amounts: lineAmounts(
        { quantity: line.quantity, unitPrice: line.unitPrice, discount: line.discount ?? 0, taxRate },
        currency,
      ),
      baseQuantity: line.quantity * (line.unit === 'case' ? product.pack_size : 1),
    };
  });
  const carried = new Map<string, number>();
  plans.forEach((plan) => {
    const product = products.get(plan.productId)!;
    for (const empty of product.empties ?? []) {
      const pieces =
        empty.per === 'case'
          ? Math.floor(plan.baseQuantity / product.pack_size) * empty.quantity
          : plan.baseQuantity * empty.quantity;
      if (pieces > 0) carried.set(empty.productId, (carried.get(empty.productId) ?? 0) + pieces);
    }
  });
  if (carried.size > 0) {
    // 7. The empties' own products.
    const empties = await readProducts(client, organizationId, [...carried.keys()]);
    for (const [productId, row] of empties) products.set(productId, row);
    for (const [productId, quantity] of carried) {
      plans.push({
        lineNumber: plans.length + 1,
        kind: 'empties',
        productId,
        unit: 'piece',
        quantity,
        unitPrice: '0',
        taxRate: '0',
        amounts: lineAmounts({ quantity, unitPrice: 0, taxRate: 0 }, currency),
        baseQuantity: quantity,
      });
    }
  }
  const totals = documentTotals(
    plans.map((plan) => plan.amounts),
    currency,
  );

  const id = newId('inv');
  // 8-14. Stock: every line whose product tracks stock leaves the location.
  const moved = await rawPostMovements(
    client,
    organizationId,
    { type: 'invoice', id },
    plans
      .filter((plan) => products.get(plan.productId)!.tracks_stock)
      .map((plan) => ({
        line: plan.lineNumber,
        productId: plan.productId,
        from: command.locationId,
        to: null,
        quantity: plan.baseQuantity,
      })),
  );
  const movementOf = new Map(moved.map((movement) => [movement.line_number, movement.id]));

  // 15-18. The empties issued to the customer (postEmptiesMovements).
  const emptiesPlans = plans.filter((plan) => plan.kind === 'empties');
  const held = await lockCustomerEmpties(
    client,
    organizationId,
    command.customerId,
    emptiesPlans.map((plan) => plan.productId),
  );
  if (emptiesPlans.length > 0) {
    for (const plan of emptiesPlans) held.set(plan.productId, held.get(plan.productId)! + plan.quantity);
    await client.query(
      `INSERT INTO empties_movements (organization_id, id, type, direction, product_id, quantity, customer_id, trip_id, location_id, stock_movement_id, document_type, document_id, line_number)
      SELECT $1, x.id, 'issued_with_sale', 'out', x.product_id, x.quantity, $2, NULL, x.location_id, x.stock_movement_id, 'invoice', $3, x.line_number
        FROM jsonb_to_recordset($4::jsonb) AS x(id text, product_id text, quantity int, location_id text, stock_movement_id text, line_number int)
      RETURNING id`,
      [
        organizationId,
        command.customerId,
        id,
        JSON.stringify(
          emptiesPlans.map((plan) => ({
            id: newId('emv'),
            product_id: plan.productId,
            quantity: plan.quantity,
            line_number: plan.lineNumber,
            location_id: movementOf.has(plan.lineNumber) ? command.locationId : null,
            stock_movement_id: movementOf.get(plan.lineNumber) ?? null,
          })),
        ),
      ],
    );
    await client.query(
      `UPDATE customer_empties AS c SET quantity = x.quantity, updated_at = now()
        FROM jsonb_to_recordset($3::jsonb) AS x(product_id text, quantity int)
       WHERE c.organization_id = $1 AND c.customer_id = $2 AND c.product_id = x.product_id`,
      [
        organizationId,
        command.customerId,
        JSON.stringify([...held].map(([productId, quantity]) => ({ product_id: productId, quantity }))),
      ],
    );
  }

  // 19, 20. The customer's balance row, locked; the credit rule on it.
  await client.query(
    `INSERT INTO customer_balances (organization_id, customer_id, currency, open_balance) VALUES ($1, $2, $3, 0) ON CONFLICT DO NOTHING`,
    [organizationId, command.customerId, currency],
  );
  const {
    rows: [balance],
  } = await client.query<{ open_balance: string }>(
    'SELECT open_balance FROM customer_balances WHERE organization_id = $1 AND customer_id = $2 AND currency = $3 FOR UPDATE',
    [organizationId, command.customerId, currency],
  );
  if (
    customer.credit_limit_amount !== null &&
    new Decimal(totals.total).greaterThan(0) &&
    new Decimal(balance!.open_balance).plus(totals.total).greaterThan(customer.credit_limit_amount)
  ) {
    throw new RawRefusal('business_rule');
  }

  // 21-23. The number, the invoice (balance 0, raised by its entry below) and its lines.
  const {
    rows: [sequence],
  } = await client.query<{ last_number: number }>(
    `INSERT INTO document_sequences (organization_id, document_type, last_number) VALUES ($1, 'invoice', 1)
    ON CONFLICT (organization_id, document_type) DO UPDATE SET last_number = document_sequences.last_number + 1 RETURNING last_number`,
    [organizationId],
  );
  const number = `INV-${String(sequence!.last_number).padStart(6, '0')}`;
  await client.query(
    `INSERT INTO invoices (organization_id, id, number, customer_id, status, issue_date, due_date, currency, location_id, trip_id, salesperson_id, order_id,
      subtotal, discount, tax, total, balance)
    VALUES ($1, $2, $3, $4, 'open', $5, $6, $7, $8, NULL, NULL, NULL, $9, $10, $11, $12, 0)`,
    [
      organizationId,
      id,
      number,
      command.customerId,
      command.issueDate,
      dueDate,
      currency,
      command.locationId,
      totals.subtotal,
      totals.discount,
      totals.tax,
      totals.total,
    ],
  );
  await client.query(
    `INSERT INTO invoice_lines (organization_id, invoice_id, line_number, kind, product_id, unit, quantity, unit_price, discount, tax_rate, amount, tax)
    SELECT $1, $2, x.line_number, x.kind, x.product_id, x.unit, x.quantity, x.unit_price, x.discount, x.tax_rate, x.amount, x.tax
      FROM jsonb_to_recordset($3::jsonb) AS x(line_number int, kind text, product_id text, unit text, quantity int, unit_price numeric, discount numeric,
        tax_rate numeric, amount numeric, tax numeric)`,
    [
      organizationId,
      id,
      JSON.stringify(
        plans.map((plan) => ({
          line_number: plan.lineNumber,
          kind: plan.kind,
          product_id: plan.productId,
          unit: plan.unit,
          quantity: plan.quantity,
          unit_price: plan.unitPrice,
          discount: plan.amounts.discount,
          tax_rate: plan.taxRate,
          amount: plan.amounts.amount,
          tax: plan.amounts.tax,
        })),
      ),
    ],
  );

  // 24-26. The account entry and the two balances it moves.
  if (new Decimal(totals.total).greaterThan(0)) {
    await client.query(
      `INSERT INTO customer_account_entries (organization_id, id, customer_id, type, document_type, document_id, line_number, invoice_id, amount, currency)
      VALUES ($1, $2, $3, 'invoice', 'invoice', $4, NULL, $4, $5, $6)`,
      [organizationId, newId('cae'), command.customerId, id, totals.total, currency],
    );
    await client.query(
      `UPDATE customer_balances SET open_balance = open_balance + $4, updated_at = now()
      WHERE organization_id = $1 AND customer_id = $2 AND currency = $3`,
      [organizationId, command.customerId, currency, totals.total],
    );
    await client.query(
      'UPDATE invoices SET balance = balance + $3, updated_at = now() WHERE organization_id = $1 AND id = $2',
      [organizationId, id, totals.total],
    );
  }
  // 27. The event.
  await client.query(
    `INSERT INTO events (organization_id, id, type, resource, record_id) VALUES ($1, $2, 'invoice.created', 'invoice', $3)`,
    [organizationId, newId('evt'), id],
  );
  return { id, number };
}

async function readProducts(client: Client, organizationId: string, ids: string[]): Promise<Map<string, ProductRow>> {
  const { rows } = await client.query<ProductRow>(
    'SELECT id, pack_size, tax_rate, is_empty, tracks_stock, empties FROM products WHERE organization_id = $1 AND id = ANY($2::text[])',
    [organizationId, ids],
  );
  return new Map(rows.map((row) => [row.id, row]));
}

/** Statements 15 and 16: what the customer holds of these empties, created at zero and locked in product order. */
async function lockCustomerEmpties(
  client: Client,
  organizationId: string,
  customerId: string,
  productIds: string[],
): Promise<Map<string, number>> {
  const unique = [...new Set(productIds)];
  if (unique.length === 0) return new Map();
  await client.query(
    `INSERT INTO customer_empties (organization_id, customer_id, product_id, quantity)
    SELECT $1, $2, p, 0 FROM unnest($3::text[]) AS p ON CONFLICT DO NOTHING`,
    [organizationId, customerId, unique],
  );
  const { rows } = await client.query<{ product_id: string; quantity: number }>(
    `SELECT product_id, quantity FROM customer_empties WHERE organization_id = $1 AND customer_id = $2 AND product_id = ANY($3::text[])
      ORDER BY customer_id COLLATE "C", product_id COLLATE "C" FOR UPDATE`,
    [organizationId, customerId, unique],
  );
  return new Map(rows.map((row) => [row.product_id, row.quantity]));
}

/** YYYY-MM-DD plus whole days, in UTC. */
function addDays(date: string, days: number): string {
  const at = new Date(`${date}T00:00:00Z`);
  at.setUTCDate(at.getUTCDate() + days);
  return at.toISOString().slice(0, 10);
}

/** The invoice's columns as the service reads them (repository.ts invoiceSelection: the dates as YYYY-MM-DD). */
const INVOICE_COLUMNS = `t.id, t.number, t.customer_id, t.status, t.currency, t.location_id, t.trip_id, t.salesperson_id, t.order_id, t.subtotal, t.discount,
  t.tax, t.total, t.balance, t.void_reason, t.voided_at, t.created_at, t.updated_at, to_char(t.issue_date, 'YYYY-MM-DD') AS issue_date,
  to_char(t.due_date, 'YYYY-MM-DD') AS due_date`;
const LINE_COLUMNS =
  'invoice_id, line_number, kind, product_id, unit, quantity, unit_price, discount, tax_rate, amount, tax';
/** At most this many lines in one invoice's JSON (repository.ts MAX_LINES). */
const MAX_LINES = 500;

export interface RawInvoiceRow {
  id: string;
  number: string;
  customer_id: string;
  status: string;
  currency: string;
  location_id: string;
  trip_id: string | null;
  salesperson_id: string | null;
  order_id: string | null;
  subtotal: string;
  discount: string;
  tax: string;
  total: string;
  balance: string;
  void_reason: string | null;
  voided_at: Date | null;
  created_at: Date;
  updated_at: Date;
  issue_date: string;
  due_date: string;
}
export interface RawLineRow {
  invoice_id: string;
  line_number: number;
  kind: string;
  product_id: string;
  unit: string;
  quantity: number;
  unit_price: string;
  discount: string;
  tax_rate: string;
  amount: string;
  tax: string;
}

/** The invoice as POST and GET answer it (repository.ts findInvoice: the invoice, then its first 500 lines). */
export async function rawReadInvoice(client: Client, organizationId: string, id: string) {
  const {
    rows: [invoice],
  } = await client.query<RawInvoiceRow>(
    `SELECT ${INVOICE_COLUMNS} FROM invoices t WHERE t.organization_id = $1 AND t.id = $2`,
    [organizationId, id],
  );
  const { rows: lines } = await client.query<RawLineRow>(
    `SELECT ${LINE_COLUMNS} FROM invoice_lines WHERE organization_id = $1 AND invoice_id = $2 ORDER BY line_number LIMIT $3`,
    [organizationId, id, MAX_LINES + 1],
  );
  const codes = await rawCodesOf(client, organizationId, [id]);
  return invoiceJson(invoice!, lines.slice(0, MAX_LINES), lines.length > MAX_LINES, codes.get(id) ?? {});
}

/** The invoices' external codes in one statement (platform/external-codes codesOf). */
async function rawCodesOf(
  db: pg.Pool | Client,
  organizationId: string,
  ids: string[],
): Promise<Map<string, Record<string, string>>> {
  const codes = new Map<string, Record<string, string>>();
  if (ids.length === 0) return codes;
  const { rows } = await db.query<{ record_id: string; code_system: string; code: string }>(
    `SELECT record_id, code_system, code FROM external_codes
    WHERE organization_id = $1 AND resource = 'invoice' AND record_id = ANY($2::text[])`,
    [organizationId, ids],
  );
  for (const row of rows) codes.set(row.record_id, { ...codes.get(row.record_id), [row.code_system]: row.code });
  return codes;
}

/**
 * The first page of GET /invoices as the service reads it (platform/lists/page.ts readPage, no filter: newest
 * first by id, `limit + 1` rows to know whether there is more), then the page's lines in one statement
 * (repository.ts linesOf), each invoice's cut at 500.
 */
export async function rawInvoicesPage(db: pg.Pool | Client, organizationId: string, limit: number) {
  const { rows } = await db.query<RawInvoiceRow>(
    `SELECT ${INVOICE_COLUMNS} FROM invoices t WHERE t.organization_id = $1 ORDER BY t.id DESC LIMIT $2`,
    [organizationId, limit + 1],
  );
  const page = rows.slice(0, limit);
  const lines = new Map<string, RawLineRow[]>(page.map((row) => [row.id, []]));
  if (page.length > 0) {
    const { rows: lineRows } = await db.query<RawLineRow>(
      `SELECT ${LINE_COLUMNS} FROM invoice_lines WHERE organization_id = $1 AND invoice_id = ANY($2::text[])
      ORDER BY invoice_id, line_number`,
      [organizationId, page.map((row) => row.id)],
    );
    for (const line of lineRows) lines.get(line.invoice_id)!.push(line);
  }
  const codes = await rawCodesOf(
    db,
    organizationId,
    page.map((row) => row.id),
  );
  return {
    data: page.map((row) =>
      invoiceJson(
        row,
        lines.get(row.id)!.slice(0, MAX_LINES),
        lines.get(row.id)!.length > MAX_LINES,
        codes.get(row.id) ?? {},
      ),
    ),
    hasMore: rows.length > limit,
    last: page[page.length - 1]?.id ?? null,
  };
}

/** The JSON of an invoice as the service answers it (representation.ts toInvoice). */
export function invoiceJson(
  row: RawInvoiceRow,
  lines: RawLineRow[],
  linesTruncated: boolean,
  externalCodes: Record<string, string>,
) {
  const currency = row.currency;
  const money = (amount: string) => ({ amount: formatAmount(amount, currency), currency });
  return {
    id: row.id,
    number: row.number,
    customerId: row.customer_id,
    status: row.status,
    issueDate: row.issue_date,
    dueDate: row.due_date,
    currency,
    locationId: row.location_id,
    tripId: row.trip_id,
    salespersonId: row.salesperson_id,
    orderId: row.order_id,
    subtotal: money(row.subtotal),
    discount: money(row.discount),
    tax: money(row.tax),
    total: money(row.total),
    balance: money(row.balance),
    voidReason: row.void_reason,
    voidedAt: row.voided_at === null ? null : row.voided_at.toISOString(),
    lines: lines.map((line) => ({
      lineNumber: line.line_number,
      kind: line.kind,
      productId: line.product_id,
      unit: line.unit,
      quantity: line.quantity,
      unitPrice: money(line.unit_price),
      discount: money(line.discount),
      taxRate: new Decimal(line.tax_rate).toString(),
      amount: money(line.amount),
      tax: money(line.tax),
    })),
    linesTruncated,
    externalCodes,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
