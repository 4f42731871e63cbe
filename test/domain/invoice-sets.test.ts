// The set form of invoice posting (createInvoices: what a van day of DMS invoices goes through) against the rule it
// must keep: a set posts exactly what the same invoices posted one by one, in the same order, would post. Two
// identical organisations get the same seven invoices, one as a set in one transaction, the other one invoice per
// transaction; a short line, a credit limit and an unknown customer are refused in the middle of the set, and each
// ledger, balance and number of the two organisations must then be the same row for row. The harness runs both
// ledger checkers over both organisations when the file closes.
import test from 'ava';
import { ApiError } from '../../server/platform/errors/api-error.js';
import { customers } from '../../server/modules/customers/service.js';
import { locations } from '../../server/modules/locations/service.js';
import { products } from '../../server/modules/products/service.js';
import { postStockAdjustment } from '../../server/modules/stock/documents.js';
import {
  createInvoice,
  createInvoices,
  type CreateInvoiceCommand,
  type InvoiceOutcome,
} from '../../server/modules/invoices/documents.js';
import type { OperatorActor } from '../../server/platform/access/actor.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('invoice_sets');
});
test.after.always(async () => {
  await world?.close();
});

interface Shop {
  organizationId: string;
  operator: OperatorActor;
  soda: string;
  juice: string;
  warehouse: string;
  mama: string;
  kato: string;
}

/** 7 cases of soda (24 a case, a crate and 24 bottles per case), 5 of juice; Mama Shop may owe at most 250 000. */
async function shop(): Promise<Shop> {
  const { organization, operator } = await world.organization();
  return world.post(async (tx) => {
    await products.create(tx, operator, {
      productCode: '900001',
      name: 'Crate 24',
      packSize: 1,
      sellingUnits: ['piece'],
      isEmpty: true,
    });
    await products.create(tx, operator, {
      productCode: '900002',
      name: 'Bottle 300ml',
      packSize: 1,
      sellingUnits: ['piece'],
      isEmpty: true,
    });
    const soda = await products.create(tx, operator, {
      productCode: '300001',
      name: 'Soda 300ml',
      packSize: 24,
      sellingUnits: ['case', 'bottle'],
      taxRate: 18,
      empties: [
        { productCode: '900001', quantity: 1, per: 'case' },
        { productCode: '900002', quantity: 24, per: 'case' },
      ],
    });
    const juice = await products.create(tx, operator, {
      productCode: '300003',
      name: 'Juice 1l',
      packSize: 12,
      sellingUnits: ['case'],
      taxRate: 0,
    });
    const warehouse = await locations.create(tx, operator, { code: 'M01', name: 'Main' });
    const mama = await customers.create(tx, operator, {
      outletCode: 'UG0000001',
      name: 'Mama Shop',
      channel: 'retail',
      paymentTermsDays: 14,
      creditLimit: { amount: '250000', currency: 'UGX' },
    });
    const kato = await customers.create(tx, operator, {
      outletCode: 'UG0000002',
      name: 'Kato Stores',
      channel: 'retail',
      paymentTermsDays: 7,
    });
    const crates = await tx
      .selectFrom('products')
      .select('id')
      .where('organization_id', '=', organization.id)
      .where('product_code', 'in', ['900001', '900002'])
      .orderBy('product_code')
      .execute();
    await postStockAdjustment(tx, operator, {
      reasonCode: 'OPENING',
      lines: [
        { productId: soda.id, locationId: warehouse.id, unit: 'case', quantity: 7, unitCost: '20000' },
        { productId: juice.id, locationId: warehouse.id, unit: 'case', quantity: 5, unitCost: '8000' },
        { productId: crates[0]!.id, locationId: warehouse.id, unit: 'piece', quantity: 20, unitCost: '3000' },
        { productId: crates[1]!.id, locationId: warehouse.id, unit: 'piece', quantity: 500, unitCost: '200' },
      ],
    });
    return {
      organizationId: organization.id,
      operator,
      soda: soda.id,
      juice: juice.id,
      warehouse: warehouse.id,
      mama: mama.id,
      kato: kato.id,
    };
  });
}

/**
 * Seven invoices (soda at 25 000 a case + 18 % = 29 500 a case; juice untaxed): Mama 3 cases of soda (88 500 owed,
 * 4 cases left); Kato 8 cases (short: 4 are left); Mama 4 cases (206 500 owed, none left); Mama 2 cases of juice at
 * 30 000 (266 500 would pass her 250 000); a customer of no one; Mama 2 cases of juice paid in cash (not on the
 * account, so not checked); Kato a case of juice at 9 000 and a free one.
 */
function day(s: Shop): CreateInvoiceCommand[] {
  const sale = (
    customerId: string,
    lines: CreateInvoiceCommand['lines'],
    extra: Partial<CreateInvoiceCommand> = {},
  ): CreateInvoiceCommand => ({
    customerId,
    locationId: s.warehouse,
    issueDate: '2026-11-24',
    currency: 'UGX',
    lines,
    ...extra,
  });
  const soda = (quantity: number) => ({ productId: s.soda, unit: 'case' as const, quantity, unitPrice: '25000' });
  return [
    sale(s.mama, [soda(3)]),
    sale(s.kato, [soda(8)]),
    sale(s.mama, [soda(4)], { externalCodes: { dms: 'CSR01000003' } }),
    sale(s.mama, [{ productId: s.juice, unit: 'case', quantity: 2, unitPrice: '30000' }]),
    sale('cus_00000000000000000000000000', [soda(1)]),
    sale(s.mama, [{ productId: s.juice, unit: 'case', quantity: 2, unitPrice: '10000' }], {
      payment: { method: 'cash' },
    }),
    sale(s.kato, [
      { productId: s.juice, unit: 'case', quantity: 1, unitPrice: '9000' },
      { kind: 'free', productId: s.juice, unit: 'case', quantity: 1, unitPrice: '0' },
    ]),
  ];
}

/** An outcome as comparable across organisations: the number, or the refusal's code and fields. */
const shape = (outcome: InvoiceOutcome) =>
  outcome instanceof ApiError
    ? { code: outcome.code, fields: (outcome.errors ?? []).map((e) => e.field) }
    : { number: outcome.number };

/** Every row the invoices wrote, with the organisation's ids replaced by codes and numbers (row order fixed). */
async function ledgers(s: Shop) {
  const org = s.organizationId;
  const names = new Map<string, string>();
  for (const p of await world.db
    .selectFrom('products')
    .select(['id', 'product_code'])
    .where('organization_id', '=', org)
    .execute())
    names.set(p.id, p.product_code);
  for (const c of await world.db
    .selectFrom('customers')
    .select(['id', 'outlet_code'])
    .where('organization_id', '=', org)
    .execute())
    names.set(c.id, c.outlet_code);
  for (const l of await world.db
    .selectFrom('locations')
    .select(['id', 'code'])
    .where('organization_id', '=', org)
    .execute())
    names.set(l.id, l.code);
  for (const i of await world.db
    .selectFrom('invoices')
    .select(['id', 'number'])
    .where('organization_id', '=', org)
    .execute())
    names.set(i.id, i.number);
  const stock = await world.db
    .selectFrom('stock_movements')
    .selectAll()
    .where('organization_id', '=', org)
    .where('document_type', '=', 'invoice')
    .execute();
  for (const m of stock) names.set(m.id, `movement of ${names.get(m.document_id)} line ${m.line_number}`);
  const name = (row: Record<string, unknown>, drop: string[] = []) =>
    Object.fromEntries(
      Object.entries(row)
        .filter(
          ([key]) =>
            !['organization_id', 'id', 'created_at', 'updated_at', 'receipt_group_id', 'request_id', ...drop].includes(
              key,
            ),
        )
        .map(([key, value]) => [
          key,
          typeof value === 'string' && names.has(value)
            ? names.get(value)
            : value instanceof Date
              ? value.toISOString().slice(0, 10)
              : value,
        ]),
    );
  const sorted = <T>(rows: T[]) => rows.map((row) => JSON.stringify(row)).sort();
  return {
    invoices: sorted(
      (await world.db.selectFrom('invoices').selectAll().where('organization_id', '=', org).execute()).map((row) =>
        name(row, ['voided_at']),
      ),
    ),
    lines: sorted(
      (await world.db.selectFrom('invoice_lines').selectAll().where('organization_id', '=', org).execute()).map((row) =>
        name(row),
      ),
    ),
    stock: sorted(stock.map((row) => name(row))),
    empties: sorted(
      (
        await world.db
          .selectFrom('empties_movements')
          .selectAll()
          .where('organization_id', '=', org)
          .where('document_type', '=', 'invoice')
          .execute()
      ).map((row) => name(row)),
    ),
    account: sorted(
      (
        await world.db.selectFrom('customer_account_entries').selectAll().where('organization_id', '=', org).execute()
      ).map((row) => name(row, ['document_id'])),
    ),
    payments: sorted(
      (await world.db.selectFrom('payments').selectAll().where('organization_id', '=', org).execute()).map((row) =>
        name(row),
      ),
    ),
    levels: sorted(
      (await world.db.selectFrom('stock_levels').selectAll().where('organization_id', '=', org).execute()).map((row) =>
        name(row),
      ),
    ),
    valuations: sorted(
      (await world.db.selectFrom('stock_valuations').selectAll().where('organization_id', '=', org).execute()).map(
        (row) => name(row),
      ),
    ),
    balances: sorted(
      (await world.db.selectFrom('customer_balances').selectAll().where('organization_id', '=', org).execute()).map(
        (row) => name(row),
      ),
    ),
    // Holdings above zero: a set locks the holdings of all its invoices' customers first, so a customer whose only
    // invoice was refused is left a row at zero (the lock's, created to be locked), which one by one rolls back.
    held: sorted(
      (
        await world.db
          .selectFrom('customer_empties')
          .selectAll()
          .where('organization_id', '=', org)
          .where('quantity', '<>', 0)
          .execute()
      ).map((row) => name(row)),
    ),
    codes: sorted(
      (await world.db.selectFrom('external_codes').selectAll().where('organization_id', '=', org).execute()).map(
        (row) => name(row),
      ),
    ),
    events: sorted(
      (
        await world.db
          .selectFrom('events')
          .select(['type', 'resource'])
          .where('organization_id', '=', org)
          .where('resource', 'in', ['invoice', 'payment'])
          .execute()
      ).map((row) => name(row)),
    ),
  };
}

test('a set of invoices posts exactly what the same invoices posted one by one post: a refused one in the middle changes nothing and the next ones are planned without it', async (t) => {
  const asSet = await shop();
  const oneByOne = await shop();

  const setOutcomes = await world.post((tx) => createInvoices(tx, asSet.operator, day(asSet)));
  const singleOutcomes: InvoiceOutcome[] = [];
  for (const command of day(oneByOne)) {
    singleOutcomes.push(
      await world
        .post((tx) => createInvoice(tx, oneByOne.operator, command))
        .catch((error: unknown) => {
          if (error instanceof ApiError) return error;
          throw error;
        }),
    );
  }

  t.deepEqual(setOutcomes.map(shape), [
    { number: 'INV-000001' },
    { code: 'insufficient_stock', fields: ['/lines/0/quantity'] },
    { number: 'INV-000002' },
    { code: 'credit_limit_exceeded', fields: ['/customerId'] },
    { code: 'customer_not_found', fields: ['/customerId'] },
    { number: 'INV-000003' },
    { number: 'INV-000004' },
  ]);
  t.deepEqual(setOutcomes.map(shape), singleOutcomes.map(shape));
  const [set, single] = [await ledgers(asSet), await ledgers(oneByOne)];
  t.deepEqual(set, single);
  // The figures themselves: 7 cases of soda less 3 and 4; Mama owes 88 500 + 118 000 (the refused 60 000 of juice
  // and the cash sale add nothing), Kato 9 000.
  t.true(set.levels.some((row) => row.includes('"product_id":"300001"') && row.includes('"quantity":0')));
  t.true(
    set.balances.some(
      (row) => row.includes('"customer_id":"UG0000001"') && row.includes('"open_balance":"206500.0000"'),
    ),
    set.balances.join('\n'),
  );
  t.true(
    set.balances.some((row) => row.includes('"customer_id":"UG0000002"') && row.includes('"open_balance":"9000.0000"')),
    set.balances.join('\n'),
  );
  t.is(set.payments.length, 1);
});

test('a set whose every invoice is refused writes nothing and takes no number', async (t) => {
  const s = await shop();
  const outcomes = await world.post((tx) => createInvoices(tx, s.operator, [day(s)[1]!, day(s)[4]!]));
  t.deepEqual(outcomes.map(shape), [
    { code: 'insufficient_stock', fields: ['/lines/0/quantity'] },
    { code: 'customer_not_found', fields: ['/customerId'] },
  ]);
  const after = await ledgers(s);
  t.deepEqual([after.invoices, after.stock, after.account], [[], [], []]);
  const next = await world.post((tx) => createInvoice(tx, s.operator, day(s)[0]!));
  t.is(next.number, 'INV-000001');
});
