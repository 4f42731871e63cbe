// A distributor connected to a DMS, for the DMS tests: an organisation with the delivery and field sales modules,
// its locations (main warehouse M01, damages D01, the van of route R01), a `canonical` connection for distributor
// DIST001, the configuration its documents need to post (dmsSetUp: salesman SM01 linked to a member, the accounts,
// supplier SUP01's vendor; otherwise R03), and helpers that build canonical documents, send them the way the push does (ingestBatch, in one
// transaction) and post what is due the way the workers do (processDocuments), until nothing more is due.
import pino from 'pino';
import { sql } from 'kysely';
import type { Tx } from '../../server/platform/database/transaction.js';
import type { Actor, OperatorActor } from '../../server/platform/access/actor.js';
import { locations } from '../../server/modules/locations/service.js';
import { salespeople } from '../../server/modules/salespeople/service.js';
import { addMemberIn } from '../../server/platform/access/members.js';
import { setAccountsIn } from '../../server/platform/access/accounts.js';
import { addConnection, type DmsConnectionRow } from '../../server/modules/dms/connections.js';
import { ingestBatch } from '../../server/modules/dms/ingest.js';
import { findFlags, toFlag, type DmsFlag } from '../../server/modules/dms/flags.js';
import { processDocuments, type DmsRunner } from '../../server/modules/dms/process.js';
import type { ConnectorSettings } from '../../server/connectors/connections.js';
import type { DomainWorld } from './domain.js';

export const DISTRIBUTOR = 'DIST001';
export const DAY = '2026-11-25';

export interface DmsShop {
  organizationId: string;
  operator: OperatorActor;
  connection: DmsConnectionRow;
  runner: DmsRunner;
  /** Stores the documents as one push and answers their first flags (in the order sent). */
  send(...documents: unknown[]): Promise<DmsFlag[]>;
  /** Posts every due document, again while any is due now; returns the flags of the documents given (or none). */
  drain(): Promise<void>;
  /** send, then drain, then the documents' flags as they are now. */
  push(...documents: unknown[]): Promise<DmsFlag[]>;
  flags(ids: readonly string[]): Promise<DmsFlag[]>;
}

export async function dmsShop(
  world: DomainWorld,
  options: { synchronous?: boolean; settings?: ConnectorSettings } = {},
): Promise<DmsShop> {
  const { organization, operator } = await world.organization({ modules: ['delivery', 'field-sales'] });
  const org = organization.id;
  const connection = await world.post(async (tx) => {
    await dmsSetUp(tx, operator);
    return addConnection(tx, org, 'canonical', {
      distributorCode: DISTRIBUTOR,
      synchronous: options.synchronous ?? false,
    });
  });
  const runner: DmsRunner = {
    db: world.db,
    settings: options.settings ?? { secretKey: Buffer.alloc(32, 7), simulatorUrl: null },
    logger: pino({ level: 'silent' }),
  };
  const flags = async (ids: readonly string[]) => (await findFlags(world.db, org, ids)).map(toFlag);
  const send = async (...documents: unknown[]) =>
    (await world.post((tx: Tx) => ingestBatch(tx, connection, documents))).flags.map(toFlag);
  const drain = async () => {
    for (let round = 0; round < 50; round += 1) {
      const due = await world.db
        .selectFrom('dms_documents')
        .select('id')
        .where('organization_id', '=', org)
        .where('state', '=', 'received')
        // Due now by the database's clock, as the dispatcher sees it.
        .where('next_attempt_at', '<=', sql<Date>`now()`)
        .orderBy('received_at')
        .orderBy('batch_id')
        .orderBy('position')
        .execute();
      if (due.length === 0) return;
      await processDocuments(
        runner,
        org,
        due.map((row) => row.id),
      );
    }
    throw new Error('documents were still due after 50 rounds');
  };
  return {
    organizationId: org,
    operator,
    connection,
    runner,
    send,
    drain,
    flags,
    async push(...documents) {
      const first = await send(...documents);
      await drain();
      return flags(first.map((flag) => flag.documentId));
    },
  };
}

/**
 * What an operator configures before a DMS posts (README, DMS documents: R03 otherwise): the main warehouse, damages
 * store and route R01's van locations (M01, D01, V_R01-G, V_R01-B), salesman SM01 as a member of
 * the organisation (made here, before the DMS's salesman document, which then updates him and keeps the link), the
 * cash, sales and promotions accounts, and the vendor of supplier SUP01 (stockDay's company invoice).
 */
export async function dmsSetUp(tx: Tx, operator: Actor): Promise<void> {
  const org = operator.organization.id;
  for (const code of ['M01', 'D01', 'V_R01-G', 'V_R01-B'])
    await locations.create(tx, operator, { code, name: `Location ${code}` });
  const member = await addMemberIn(tx, org, { name: 'Okello James', email: 'okello.james@example.com', role: 'none' });
  await salespeople.create(tx, operator, { salesmanCode: 'SM01', name: 'Okello James', memberId: member.id });
  await setAccountsIn(tx, org, {
    cashAccount: 'Cash on hand',
    salesAccount: 'Sales of beverages',
    promotionsExpenseAccount: 'Trade promotions',
    vendors: { SUP01: 'Nile Breweries Ltd' },
  });
}

/** A canonical document of the shop's distributor, dated DAY. */
export function doc(
  documentType: string,
  documentNumber: string,
  body: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  return {
    documentType,
    distributorCode: DISTRIBUTOR,
    documentNumber,
    documentDate: DAY,
    salesmanCode: 'SM01',
    body,
    ...extra,
  };
}

/** The master data of a day on route R01: two customers, a soda (crate of 24, 18 %), its prices, the salesman and route plan. */
export const masterData = {
  customer: (code: string, name = `Shop ${code}`) =>
    doc('customer', code, { name, channel: 'retail', routeCode: 'R01' }, { status: 'active' }),
  soda: doc(
    'product',
    '100201',
    { name: 'Soda 300 ml, crate of 24', packSize: 24, taxRate: '18', sellingUnits: ['case', 'bottle'] },
    { status: 'active' },
  ),
  water: doc(
    'product',
    '100301',
    { name: 'Water 500 ml, pack of 12', packSize: 12, taxRate: '18', sellingUnits: ['case', 'bottle'] },
    { status: 'active' },
  ),
  prices: doc('price', 'PL-RETAIL-1', {
    priceGroup: 'RETAIL',
    prices: [
      { productCode: '100201', unit: 'case', amount: '24000' },
      { productCode: '100201', unit: 'bottle', amount: '1000' },
    ],
  }),
  salesman: (outlets: string[] = []) =>
    doc(
      'salesman',
      'R01',
      { salesmanCode: 'SM01', salesmanName: 'Okello James', routeName: 'Kisenyi', outlets },
      { status: 'active' },
    ),
};

/** A CS invoice on route R01: lines of soda at 24 000 a case, totals computed at 18 %. */
export function saleInvoice(
  number: string,
  customerCode: string | undefined,
  cases: number,
  extra: { method?: string; discount?: string; status?: string } = {},
) {
  const gross = 24000 * cases;
  const discount = Number(extra.discount ?? '0');
  const tax = Math.round((gross - discount) * 0.18);
  return doc(
    'sale_invoice',
    number,
    {
      routeCode: 'R01',
      ...(customerCode ? { customerCode } : {}),
      currency: 'UGX',
      payment: { method: extra.method ?? 'credit' },
      lines: [
        {
          productCode: '100201',
          unit: 'case',
          quantity: cases,
          unitPrice: '24000',
          ...(extra.discount ? { discount: extra.discount } : {}),
        },
      ],
      totals: {
        subtotal: String(gross),
        discount: String(discount),
        tax: String(tax),
        total: String(gross - discount + tax),
      },
    },
    extra.status ? { status: extra.status } : {},
  );
}

/** Stock into the main warehouse (a company invoice received in full) and onto the van (a replenishment). */
export function stockDay(cases: number) {
  return [
    doc('company_invoice', '9550800000001', {
      supplierCode: 'SUP01',
      locationCode: 'M01',
      currency: 'UGX',
      lines: [
        {
          productCode: '100201',
          unit: 'case',
          invoicedQuantity: cases * 2,
          receivedQuantity: cases * 2,
          unitCost: '18000',
        },
      ],
    }),
    doc('van_replenishment', 'VR000001', {
      routeCode: 'R01',
      fromLocationCode: 'M01',
      lines: [{ productCode: '100201', unit: 'case', quantity: cases }],
    }),
  ];
}
