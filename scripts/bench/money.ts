// The money part of `npm run bench` (issue 13; `--only money`): three figures, as the median of a few short rounds
// in which the targets take turns (turns.ts), each with p50 and p99 over every operation of the rounds:
//   1. POST /invoices with 10 lines (10 distinct products, each priced and discounted; 5 of them returnable, which
//      adds 2 empties lines: crates and bottles): documents/s over HTTP (a fresh Idempotency-Key each), against the
//      raw pg baseline's route doing the same statements (raw-pg.ts, raw-money.ts); and without HTTP, createInvoice
//      in inTransaction against the raw statements on a pool. Before the rounds, one invoice of each is posted with
//      the same command and every row both wrote is compared (the "same rows" line), so the ratio compares equals;
//   2. "a 100-row page of invoices with lines": GET /invoices?limit=100 answers each invoice with its lines (the
//      list reads them in one more statement), so the figure is that page as it is: 100 invoices, each with its
//      12 lines (1200 lines a page), newest first; pages/s over HTTP and without it (listInvoices + linesOf +
//      toInvoice), each against raw pg reading and shaping the same;
//   3. POST /payments with 2 allocations (one receipt per allocation): payments/s over HTTP, once the payments
//      module is there. The body is built from the running service's own description (GET /openapi.json: money
//      as { amount, currency } or as a decimal string, which optional fields it requires); when the service answers
//      404 for the path, the part prints "not run (no POST /payments)". No raw pg baseline yet: its statements are
//      the payments module's to define (they will be copied from it as raw-money.ts copies createInvoice's).
// Seeding, all through the service's own functions (no hand-written SQL): products, a warehouse and customers by
// the master-data services, the opening stock by postStockAdjustment (10^9 base units a product: the bench never
// runs out), and the invoices the page and the payments read by createInvoice. Customers have a credit limit far
// above what the bench posts, so the credit rule is evaluated on every invoice and never refuses. Invoices rotate
// over 20 customers. After the part, the ledger checkers (stock's and the customer account's) run over the
// organisation: the raw baseline's rows must agree with the ledgers as the service's do.
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { createApiKey } from '../../server/platform/access/api-keys.js';
import { actingOrganization, createOrganization } from '../../server/platform/access/organizations.js';
import { scopeCatalogue } from '../../server/platform/access/scopes.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { inTransaction, type Db } from '../../server/platform/database/transaction.js';
import { jobActor, operatorActor, type Actor } from '../../server/platform/access/actor.js';
import { customers } from '../../server/modules/customers/service.js';
import { locations } from '../../server/modules/locations/service.js';
import { products } from '../../server/modules/products/service.js';
import { postStockAdjustment } from '../../server/modules/stock/documents.js';
import { auditStock } from '../../server/modules/stock/audit.js';
import { createInvoice, type CreateInvoiceCommand } from '../../server/modules/invoices/documents.js';
import { auditCustomerAccount } from '../../server/modules/customer-account/audit.js';
// The registries the posting functions read (the customer account reads the invoice's lifecycle there).
import '../../server/composition/modules.js';
import {
  findInvoice,
  INVOICE_RESOURCE,
  linesOf,
  listInvoices,
  requireInvoiceFilters,
} from '../../server/modules/invoices/repository.js';
import { codesOf } from '../../server/platform/external-codes/external-codes.js';
import { toInvoice } from '../../server/modules/invoices/representation.js';
import { rawCreateInvoice, rawInvoicesPage, rawReadInvoice } from './baselines/raw-money.js';
import {
  figure,
  median,
  noise,
  percent,
  quantile,
  ratio,
  rawInTransaction,
  takeTurns,
  type RoundOptions,
  type Rounds,
} from './turns.js';

export interface MoneyOptions extends RoundOptions {
  databaseUrl: string;
  /** Concurrent requests / workers posting invoices. */
  invoiceWorkers: number;
  /** Concurrent requests / workers reading the page. */
  pageWorkers: number;
  /** Concurrent requests posting payments. */
  paymentWorkers: number;
  startService: () => Promise<Started>;
  startRawPg: (keys: string[]) => Promise<Started>;
}
export interface Started {
  port: number;
  stop: () => Promise<void>;
}

type InvoiceTarget = 'HTTP: service' | 'HTTP: raw pg' | 'no HTTP: createInvoice' | 'no HTTP: raw pg';
type PageTarget = 'HTTP: service' | 'HTTP: raw pg' | 'no HTTP: listInvoices' | 'no HTTP: raw pg';
export type PaymentFigures = { state: 'run'; rounds: Rounds } | { state: 'not run' | 'failed'; why: string };
export interface MoneyFigures {
  options: Pick<
    MoneyOptions,
    'roundSeconds' | 'warmup' | 'rounds' | 'invoiceWorkers' | 'pageWorkers' | 'paymentWorkers'
  >;
  /** Lines of one bench invoice (its goods and the empties they carry). */
  invoiceLines: number;
  /** What differs between the rows createInvoice and the raw baseline wrote for one command (none: the same). */
  sameRows: string[];
  invoice: Record<InvoiceTarget, Rounds>;
  /** Invoices and lines of one page, as the service answered it. */
  page: { invoices: number; lines: number; targets: Record<PageTarget, Rounds> };
  payment: PaymentFigures;
  /** The ledger checkers' differences over the organisation after the part (none: 0). */
  ledger: string[];
  seconds: number;
}

const PRODUCTS = 10;
const RETURNABLE = 5;
const CUSTOMERS = 20;
const PAYERS = 10;
const OPENING = 1_000_000_000; // base units a product; a level is an int4 (2.1 x 10^9)
const PAGE = 100;
const ALLOCATION = '100';
const UNLIMITED = { perMinute: 100_000_000, burst: 10_000_000 };

export async function benchMoney(options: MoneyOptions): Promise<MoneyFigures> {
  const started = performance.now();
  // Two pools: one under Kysely for the service's functions, one for the raw statements.
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10 });
  const kyselyPool = new pg.Pool({ connectionString: options.databaseUrl, max: 10 });
  const db = kyselyOver(kyselyPool);
  // pg's end() resolves before the connections have closed; the database stopped right after must not crash the bench.
  let closing = false;
  for (const p of [pool, kyselyPool])
    p.on('error', (error) => {
      if (!closing) process.stderr.write(`money bench: idle connection: ${error.message}\n`);
    });
  const children: Started[] = [];
  try {
    process.stderr.write('money: seeding products, stock, customers and invoices\n');
    const setup = await prepare(db);
    const sameRows = await compareWrites(db, pool, setup);
    children.push(await options.startService());
    children.push(await options.startRawPg([setup.key]));
    const [service, raw] = children as [Started, Started];
    const headers = { authorization: `Bearer ${setup.key}`, 'content-type': 'application/json' };

    // 1. POST /invoices, 10 lines.
    process.stderr.write('measuring money: 10-line invoices\n');
    let turn = 0;
    const nextCustomer = () => setup.customers[(turn += 1) % CUSTOMERS]!;
    let sequence = 0;
    const viaHttp = (port: number) => async () => {
      sequence += 1;
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/invoices`, {
        method: 'POST',
        body: JSON.stringify(invoiceBody(setup, nextCustomer())),
        headers: { ...headers, 'idempotency-key': `bench-money-${sequence}` },
      });
      const text = await response.text();
      if (response.status !== 201) throw new Error(`POST /invoices answered ${response.status}: ${text.slice(0, 300)}`);
    };
    const invoice = await takeTurns(
      options,
      options.invoiceWorkers,
      {
        'HTTP: service': viaHttp(service.port),
        'HTTP: raw pg': viaHttp(raw.port),
        'no HTTP: createInvoice': async () => {
          await inTransaction(db, (tx) => createInvoice(tx, setup.actor, invoiceCommand(setup, nextCustomer())));
        },
        'no HTTP: raw pg': () =>
          rawInTransaction(pool, (client) =>
            rawCreateInvoice(client, setup.organizationId, invoiceCommand(setup, nextCustomer())),
          ),
      },
      {},
      'money bench',
    );

    // 2. The 100-row page of invoices with their lines.
    process.stderr.write('measuring money: GET /invoices?limit=100 with lines\n');
    const readPage = (port: number) => async () => {
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/invoices?limit=${PAGE}`, {
        headers: { authorization: headers.authorization },
      });
      if (!response.ok)
        throw new Error(`GET /invoices answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
      const page = (await response.json()) as { data: { lines: unknown[] }[] };
      if (page.data.length !== PAGE)
        throw new Error(`GET /invoices answered ${page.data.length} invoices, not ${PAGE}`);
      return page;
    };
    const shape = (await readPage(service.port)()).data;
    const pageTargets = await takeTurns(
      options,
      options.pageWorkers,
      {
        'HTTP: service': readPage(service.port),
        'HTTP: raw pg': readPage(raw.port),
        // The route's work without HTTP: the filters' check, the page, its lines, the JSON objects (no JSON text).
        'no HTTP: listInvoices': async () => {
          await requireInvoiceFilters(db, setup.organizationId, {});
          const page = await listInvoices(db, setup.actor, { limit: PAGE }, {});
          const ids = page.rows.map((row) => row.id);
          const [lines, codes] = [
            await linesOf(db, setup.organizationId, ids),
            await codesOf(db, setup.organizationId, INVOICE_RESOURCE, ids),
          ];
          return page.rows.map((row) =>
            toInvoice(
              row,
              lines.get(row.id)?.lines ?? [],
              lines.get(row.id)?.truncated ?? false,
              codes.get(row.id) ?? {},
            ),
          );
        },
        'no HTTP: raw pg': () => rawInvoicesPage(pool, setup.organizationId, PAGE),
      },
      {},
      'money bench',
    );
    const page = {
      invoices: shape.length,
      lines: shape.reduce((sum, row) => sum + row.lines.length, 0),
      targets: pageTargets,
    };
    await children.pop()!.stop(); // raw pg: the payments have no baseline yet

    // 3. POST /payments, 2 allocations.
    process.stderr.write('measuring money: payments with 2 allocations\n');
    const payment = await benchPayments(options, setup, service.port);

    await Promise.all(children.splice(0).map((child) => child.stop()));
    const ledger = [
      ...(await auditStock(db, setup.organizationId)),
      ...(await auditCustomerAccount(db, setup.organizationId)),
    ].map((d) => `${d.kind} ${d.subject}: the ledger says ${d.expected}, ${d.actual}`);
    return {
      options: {
        roundSeconds: options.roundSeconds,
        warmup: options.warmup,
        rounds: options.rounds,
        invoiceWorkers: options.invoiceWorkers,
        pageWorkers: options.pageWorkers,
        paymentWorkers: options.paymentWorkers,
      },
      invoiceLines: setup.invoiceLines,
      sameRows,
      invoice,
      page,
      payment,
      ledger,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    await Promise.all(children.map((child) => child.stop()));
    closing = true;
    await db.destroy(); // ends kyselyPool
    await pool.end();
  }
}

interface Setup {
  organizationId: string;
  actor: Actor;
  key: string;
  warehouse: string;
  /** The 10 products the invoices sell, in line order. */
  products: string[];
  customers: string[];
  /** Each payer and its two open invoices. */
  payers: { customerId: string; invoices: [string, string] }[];
  issueDate: string;
  invoiceLines: number;
}

/**
 * An organisation with 2 empties (a crate, an empty bottle), 10 products (the first 5 returnable: 24 a case, one
 * crate and 24 bottles a case), a warehouse holding 10^9 base units of each, 20 customers that buy and 10 that pay,
 * and 2 invoices of each payer plus 100 more (so the page is full even before the creates).
 */
async function prepare(db: Db): Promise<Setup> {
  const organization = await createOrganization(db, { name: 'Bench Money', baseCurrency: 'UGX' });
  const known = scopeCatalogue();
  // payments:write only once the payments module has put it in the spec (createApiKey refuses an unknown scope).
  const scopes = ['invoices:read', 'invoices:write', 'payments:read', 'payments:write'].filter(
    (scope) => scope in known,
  );
  const key = (
    await createApiKey(db, {
      organizationId: organization.id,
      name: 'bench money',
      environment: 'production',
      scopes,
      rateLimits: { read: UNLIMITED, write: UNLIMITED },
    })
  ).secret;
  const acting = actingOrganization(organization);
  const operator = operatorActor(acting, 'bench money');
  const creditLimit = { amount: '1000000000000', currency: 'UGX' };
  const seeded = await inTransaction(db, async (tx) => {
    const empties = [
      (
        await products.create(tx, operator, {
          productCode: '900001',
          name: 'Crate 24',
          packSize: 1,
          sellingUnits: ['piece'],
          isEmpty: true,
        })
      ).id,
      (
        await products.create(tx, operator, {
          productCode: '900002',
          name: 'Empty bottle 300ml',
          packSize: 1,
          sellingUnits: ['piece'],
          isEmpty: true,
        })
      ).id,
    ];
    const goods: string[] = [];
    for (let i = 0; i < PRODUCTS; i += 1) {
      const returnable = i < RETURNABLE;
      const product = await products.create(tx, operator, {
        productCode: String(300001 + i),
        name: `Bench ${returnable ? 'soda' : 'juice'} ${i + 1}`,
        packSize: returnable ? 24 : 12,
        sellingUnits: ['case', 'bottle'],
        taxRate: i === 7 ? 0 : 18,
        ...(returnable
          ? {
              empties: [
                { productCode: '900001', quantity: 1, per: 'case' as const },
                { productCode: '900002', quantity: 24, per: 'case' as const },
              ],
            }
          : {}),
      });
      goods.push(product.id);
    }
    const warehouse = await locations.create(tx, operator, { code: 'M01', name: 'Main warehouse' });
    const made: string[] = [];
    for (let i = 0; i < CUSTOMERS + PAYERS; i += 1) {
      made.push(
        (
          await customers.create(tx, operator, {
            outletCode: `UG8${String(i).padStart(6, '0')}`,
            name: `Bench outlet ${i + 1}`,
            channel: 'retail',
            paymentTermsDays: 14,
            creditLimit,
          })
        ).id,
      );
    }
    await postStockAdjustment(tx, operator, {
      reasonCode: 'OPENING',
      lines: [...goods, ...empties].map((productId) => ({
        productId,
        locationId: warehouse.id,
        unit: 'bottle' as const,
        quantity: OPENING,
        unitCost: '1000',
      })),
    });
    return { goods, warehouse: warehouse.id, customers: made };
  });
  const setup: Setup = {
    organizationId: organization.id,
    actor: jobActor(acting, 'bench', scopes),
    key,
    warehouse: seeded.warehouse,
    products: seeded.goods,
    customers: seeded.customers.slice(0, CUSTOMERS),
    payers: [],
    issueDate: new Date().toISOString().slice(0, 10),
    invoiceLines: 0,
  };
  const post = (customerId: string) =>
    inTransaction(db, (tx) => createInvoice(tx, operator, invoiceCommand(setup, customerId)));
  for (const customerId of seeded.customers.slice(CUSTOMERS))
    setup.payers.push({ customerId, invoices: [(await post(customerId)).id, (await post(customerId)).id] });
  let last = '';
  for (let i = 0; i <= PAGE; i += 1) last = (await post(setup.customers[i % CUSTOMERS]!)).id;
  setup.invoiceLines = (await findInvoice(db, organization.id, last))!.lines.length;
  return setup;
}

/**
 * The bench's invoice: 10 lines of 10 products, each with its own price and discount; cases of 1 to 3, and the
 * last line 6 loose bottles. The 5 returnable products carry crates and bottles: 2 empties lines more.
 */
function invoiceCommand(setup: Setup, customerId: string): CreateInvoiceCommand {
  return {
    customerId,
    locationId: setup.warehouse,
    issueDate: setup.issueDate,
    currency: 'UGX',
    lines: setup.products.map((productId, i) =>
      i === PRODUCTS - 1
        ? { productId, unit: 'bottle' as const, quantity: 6, unitPrice: '1150', discount: '50' }
        : {
            productId,
            unit: 'case' as const,
            quantity: 1 + (i % 3),
            unitPrice: String(24_000 + 1_500 * i),
            discount: String(250 * (i + 1)),
          },
    ),
  };
}

/** The same invoice as POST /invoices takes it: money as { amount, currency }, the currency the organisation's. */
function invoiceBody(setup: Setup, customerId: string) {
  const command = invoiceCommand(setup, customerId);
  const money = (amount: string) => ({ amount, currency: 'UGX' });
  return {
    customerId,
    locationId: command.locationId,
    issueDate: command.issueDate,
    lines: command.lines.map((line) => ({
      productId: line.productId,
      unit: line.unit,
      quantity: line.quantity,
      unitPrice: money(line.unitPrice),
      discount: money(line.discount!),
    })),
  };
}

/**
 * One invoice posted by createInvoice and one by the raw baseline, with the same command: the invoice as GET
 * answers it (less its id, number and times) and every row each wrote (less ids and times) must be the same.
 * Answers what differs.
 */
async function compareWrites(db: Db, pool: pg.Pool, setup: Setup): Promise<string[]> {
  const command = invoiceCommand(setup, setup.customers[0]!);
  const service = await inTransaction(db, (tx) => createInvoice(tx, setup.actor, command));
  const raw = await rawInTransaction(pool, (client) => rawCreateInvoice(client, setup.organizationId, command));
  const problems: string[] = [];
  const found = (await findInvoice(db, setup.organizationId, service.id))!;
  const client = await pool.connect();
  try {
    const strip = ({
      id: _id,
      number: _number,
      createdAt: _created,
      updatedAt: _updated,
      ...rest
    }: {
      id: string;
      number: string;
      createdAt: string;
      updatedAt: string;
    }) => rest;
    const serviceJson = strip(toInvoice(found.invoice, found.lines, found.linesTruncated, found.externalCodes));
    const rawJson = strip(await rawReadInvoice(client, setup.organizationId, raw.id));
    const [a, b] = [serviceJson as Record<string, unknown>, rawJson as Record<string, unknown>];
    const fields = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter(
      (field) => !isDeepStrictEqual(a[field], b[field]),
    );
    if (fields.length > 0)
      problems.push(
        `the invoice as GET answers it differs in ${fields.join(', ')}: ${fields[0]} is ${JSON.stringify(a[fields[0]!])} from the service, ${JSON.stringify(b[fields[0]!])} from raw pg`,
      );
    // Every row written for the document, without its ids and times; $2 is the invoice's id.
    const rowsOf: Record<string, string> = {
      invoices: `SELECT status, customer_id, issue_date::text, due_date::text, currency, location_id, trip_id, salesperson_id, order_id, subtotal::text, discount::text,
          tax::text, total::text, balance::text FROM invoices WHERE organization_id = $1 AND id = $2`,
      invoice_lines: `SELECT line_number, kind, product_id, unit, quantity, unit_price::text, discount::text, tax_rate::text, amount::text, tax::text
          FROM invoice_lines WHERE organization_id = $1 AND invoice_id = $2 ORDER BY line_number`,
      stock_movements: `SELECT document_type, line_number, product_id, from_location_id, to_location_id, quantity, unit_cost::text
          FROM stock_movements WHERE organization_id = $1 AND document_id = $2 ORDER BY line_number`,
      empties_movements: `SELECT e.type, e.direction, e.product_id, e.quantity, e.customer_id, e.trip_id, e.location_id, m.line_number AS stock_movement_line, e.document_type, e.line_number
          FROM empties_movements e LEFT JOIN stock_movements m ON m.organization_id = e.organization_id AND m.id = e.stock_movement_id
         WHERE e.organization_id = $1 AND e.document_id = $2 ORDER BY e.line_number`,
      customer_account_entries: `SELECT customer_id, type, document_type, line_number, invoice_id = $2 AS names_the_invoice, amount::text, currency
          FROM customer_account_entries WHERE organization_id = $1 AND document_id = $2`,
      events: 'SELECT type, resource FROM events WHERE organization_id = $1 AND record_id = $2',
    };
    for (const [table, query] of Object.entries(rowsOf)) {
      const [a, b] = [
        (await client.query(query, [setup.organizationId, service.id])).rows,
        (await client.query(query, [setup.organizationId, raw.id])).rows,
      ];
      if (a.length === 0) problems.push(`${table}: the service wrote no row (the comparison would prove nothing)`);
      // The first row that differs, of each.
      const at = Array.from({ length: Math.max(a.length, b.length) }, (_, i) => i).find(
        (i) => !isDeepStrictEqual(a[i], b[i]),
      );
      if (at !== undefined)
        problems.push(
          `${table}: ${a.length} rows by the service, ${b.length} by raw pg; row ${at + 1}: service ${JSON.stringify(a[at] ?? null)}, raw pg ${JSON.stringify(b[at] ?? null)}`,
        );
    }
    // The two numbers came from the one sequence, one after the other.
    const numbers = await client.query<{ number: string }>(
      'SELECT number FROM invoices WHERE organization_id = $1 AND id = ANY($2::text[]) ORDER BY number',
      [setup.organizationId, [service.id, raw.id]],
    );
    const [first, second] = numbers.rows.map((row) => Number(row.number.slice(4)));
    if (second !== first! + 1)
      problems.push(`document numbers: ${numbers.rows.map((row) => row.number).join(', ')} are not consecutive`);
  } finally {
    client.release();
  }
  return problems;
}

/** POST /payments with 2 allocations over HTTP, or why not. */
async function benchPayments(options: MoneyOptions, setup: Setup, port: number): Promise<PaymentFigures> {
  const description = (await (await fetch(`http://127.0.0.1:${port}/api/v1/openapi.json`)).json()) as Json;
  const body = paymentBody(description, setup);
  let sequence = 0;
  const post = async () => {
    sequence += 1;
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/payments`, {
      method: 'POST',
      body: JSON.stringify(body(sequence)),
      headers: {
        authorization: `Bearer ${setup.key}`,
        'content-type': 'application/json',
        'idempotency-key': `bench-payment-${sequence}`,
      },
    });
    return { status: response.status, text: await response.text() };
  };
  const probe = await post();
  if (probe.status === 404) return { state: 'not run', why: 'no POST /payments' };
  if (probe.status !== 201)
    return { state: 'failed', why: `the first POST /payments answered ${probe.status}: ${probe.text.slice(0, 400)}` };
  const rounds = await takeTurns(
    options,
    options.paymentWorkers,
    {
      'HTTP: service': async () => {
        const answer = await post();
        if (answer.status !== 201)
          throw new Error(`POST /payments answered ${answer.status}: ${answer.text.slice(0, 300)}`);
      },
    },
    {},
    'money bench',
  );
  return { state: 'run', rounds: rounds['HTTP: service'] };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON document walked by hand
type Json = any;

/**
 * The body of payment number n: a payer's (in turn) two invoices, ALLOCATION each, nothing left unallocated, paid
 * in cash today. The shape follows the service's description of POST /payments: each amount as { amount, currency }
 * when its schema is a Money object, else a decimal string beside a top-level `currency`; `reference` and
 * `unallocated` only when the description has them (the latter only when it requires it).
 */
function paymentBody(description: Json, setup: Setup): (n: number) => Record<string, unknown> {
  const resolve = (schema: Json): Json => {
    let s = schema;
    for (let depth = 0; typeof s?.$ref === 'string' && depth < 10; depth += 1) {
      s = s.$ref
        .slice(2)
        .split('/')
        .reduce((node: Json, part: string) => node?.[part.replaceAll('~1', '/').replaceAll('~0', '~')], description);
    }
    return s ?? {};
  };
  const schema = resolve(description?.paths?.['/payments']?.post?.requestBody?.content?.['application/json']?.schema);
  const properties: Json = schema.properties ?? {};
  const required: string[] = schema.required ?? [];
  const isMoney = (property: Json) =>
    [
      property,
      ...(resolve(property).oneOf ?? []),
      ...(resolve(property).anyOf ?? []),
      ...(resolve(property).allOf ?? []),
    ]
      .map(resolve)
      .some((s: Json) => s.properties?.amount !== undefined && s.properties?.currency !== undefined);
  const allocation: Json = resolve(resolve(properties.allocations).items).properties ?? {};
  const amount = (property: Json, value: string) => (isMoney(property) ? { amount: value, currency: 'UGX' } : value);
  const methods: string[] = resolve(properties.method).enum ?? ['cash'];
  const method = methods.includes('cash') ? 'cash' : methods[0];
  const total = String(Number(ALLOCATION) * 2);
  return (n) => {
    const payer = setup.payers[n % setup.payers.length]!;
    return {
      customerId: payer.customerId,
      method,
      paymentDate: setup.issueDate,
      ...('currency' in properties || Object.keys(properties).length === 0 ? { currency: 'UGX' } : {}),
      amount: amount(properties.amount, total),
      ...('reference' in properties ? { reference: `BENCH-${n}` } : {}),
      allocations: payer.invoices.map((invoiceId) => ({ invoiceId, amount: amount(allocation.amount, ALLOCATION) })),
      ...(required.includes('unallocated') ? { unallocated: amount(properties.unallocated, '0') } : {}),
    };
  };
}

const row = (target: string, r: Rounds) =>
  `    ${target.padEnd(26)}${figure(r).padEnd(10)}p50 ${`${quantile(r.latencies, 0.5)} ms`.padEnd(11)}p99 ${`${quantile(r.latencies, 0.99)} ms`.padEnd(12)}noise ${percent(noise(r.perSecond))}`;

/** The lines npm run bench prints for the money part. */
export function moneyReport(f: MoneyFigures): string[] {
  const o = f.options;
  const lines = [
    `money (issue 13): medians of ${o.rounds} rounds of ${o.roundSeconds} s after ${o.warmup} s of warm-up, the targets taking turns; ` +
      'noise = (max - min) / median of the rounds; p50/p99 over every operation of the rounds (HTTP: as the client saw it)',
  ];
  lines.push(
    `  POST /invoices, 10 lines (10 products, 5 returnable: ${f.invoiceLines} lines with the empties), documents/s, ${o.invoiceWorkers} at once:`,
  );
  for (const [target, r] of Object.entries(f.invoice) as [InvoiceTarget, Rounds][]) lines.push(row(target, r));
  const i = f.invoice;
  lines.push(
    `    service / raw pg: over HTTP ${ratio(i['HTTP: service'], i['HTTP: raw pg'])}, without HTTP ${ratio(i['no HTTP: createInvoice'], i['no HTTP: raw pg'])}`,
  );
  lines.push(
    `    HTTP / no HTTP (HTTP, the key, the Idempotency-Key's claim and row, the read-back of the invoice): service ${ratio(i['HTTP: service'], i['no HTTP: createInvoice'])}, raw pg ${ratio(i['HTTP: raw pg'], i['no HTTP: raw pg'])}`,
  );
  lines.push(
    f.sameRows.length === 0
      ? '    same rows: one invoice of each from one command wrote the same invoice, lines, stock and empties movements, account entry and event'
      : `    SAME ROWS? NO, the ratio compares unequal work:\n${f.sameRows.map((p) => `      ${p}`).join('\n')}`,
  );
  lines.push(
    `  GET /invoices?limit=100 with lines (the page as it is: ${f.page.invoices} invoices, each with its lines: ${f.page.lines} lines), pages/s, ${o.pageWorkers} at once:`,
  );
  for (const [target, r] of Object.entries(f.page.targets) as [PageTarget, Rounds][]) lines.push(row(target, r));
  const p = f.page.targets;
  lines.push(
    `    service / raw pg: over HTTP ${ratio(p['HTTP: service'], p['HTTP: raw pg'])}, without HTTP ${ratio(p['no HTTP: listInvoices'], p['no HTTP: raw pg'])}; ` +
      `invoices/s over HTTP: service ${(median(p['HTTP: service'].perSecond) * f.page.invoices).toFixed(0)}, raw pg ${(median(p['HTTP: raw pg'].perSecond) * f.page.invoices).toFixed(0)}`,
  );
  if (f.payment.state === 'run') {
    lines.push(
      `  POST /payments, 2 allocations (one receipt each), payments/s, ${o.paymentWorkers} at once (no raw pg baseline yet):`,
    );
    lines.push(row('HTTP: service', f.payment.rounds));
  } else {
    lines.push(`  POST /payments, 2 allocations: ${f.payment.state} (${f.payment.why})`);
  }
  lines.push(
    f.ledger.length === 0
      ? '  ledger checkers (stock, customer account) over the organisation afterwards: 0 differences'
      : `  LEDGER CHECKERS: ${f.ledger.length} difference(s):\n${f.ledger
          .slice(0, 10)
          .map((d) => `    ${d}`)
          .join('\n')}`,
  );
  lines.push(`  the part took ${f.seconds.toFixed(0)} s`);
  return lines;
}
